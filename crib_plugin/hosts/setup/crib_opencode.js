// crib for opencode — written by `crib setup opencode`; `crib setup opencode --undo` removes it.
// A thin bridge: every decision is crib's own hook core (`crib hook … --host opencode`); this file
// only passes opencode's hook arguments in and puts crib's answer where opencode reads it.
// Built against opencode-ai 1.18.33 (plugin API: the V1 hooks object).
import { spawn } from "node:child_process"

const CRIB = __CRIB_ARGV__
const TIMEOUT_MS = 15000

function crib(event, input) {
  // Run one crib hook; resolve its JSON answer, or null on any failure (crib fails open too).
  return new Promise((resolve) => {
    let out = ""
    let child
    try {
      child = spawn(CRIB[0], [...CRIB.slice(1), "hook", event, "--host", "opencode"], {
        env: { ...process.env, CRIB_HOST: "opencode" }, stdio: ["pipe", "pipe", "ignore"],
      })
    } catch {
      return resolve(null)
    }
    const timer = setTimeout(() => { child.kill("SIGKILL"); resolve(null) }, TIMEOUT_MS)
    child.on("error", () => { clearTimeout(timer); resolve(null) })
    child.stdout.on("data", (chunk) => { out += chunk })
    child.on("close", () => {
      clearTimeout(timer)
      try { resolve(out.trim() ? JSON.parse(out) : null) } catch { resolve(null) }
    })
    child.stdin.on("error", () => {})
    child.stdin.end(JSON.stringify(input))
  })
}

const context = (answer) => answer?.hookSpecificOutput?.additionalContext || ""

export const CribPlugin = async ({ directory }) => {
  const perMessage = new Map() // user message id → crib's block for that prompt
  const standing = new Map() // session id → standing memories (once a session)
  let session = ""
  return {
    "chat.message": async (input, output) => {
      session = input.sessionID
      const prompt = (output.parts || []).filter((p) => p.type === "text" && !p.synthetic).map((p) => p.text).join("\n")
      if (!standing.has(session)) {
        standing.set(session, context(await crib("session-start", { session_id: session, source: "startup", cwd: directory })))
      }
      const block = context(await crib("user-prompt-submit", { session_id: session, prompt, cwd: directory }))
      if (block && output.message?.id) perMessage.set(output.message.id, block)
    },
    "experimental.chat.system.transform": async (_input, output) => {
      const text = standing.get(session)
      if (text) output.system.push(text)
    },
    "experimental.chat.messages.transform": async (_input, output) => {
      for (const message of output.messages || []) {
        const block = perMessage.get(message.info?.id)
        if (!block || !Array.isArray(message.parts)) continue
        const first = message.parts[0] || {}
        message.parts.push({
          id: (first.id || "prt_crib") + "crib", sessionID: message.info.sessionID, messageID: message.info.id,
          type: "text", text: block, synthetic: true,
        })
      }
    },
    "experimental.text.complete": async (input, output) => {
      if (typeof output.text !== "string" || !output.text.includes("<")) return
      const answer = await crib("text-complete", {
        session_id: input.sessionID, message_id: input.messageID, part_id: input.partID, text: output.text, cwd: directory,
      })
      if (answer && typeof answer.text === "string") output.text = answer.text
    },
  }
}
