"""A whole Claude Code session with the real CLI: ``claude -p`` (npm ``@anthropic-ai/claude-code``)
with crib installed from this repository as a marketplace plugin, and a scripted model behind a
loopback stand-in for the Messages API (``tests/fake_anthropic.py``).

Nothing of crib is simulated here: Claude Code itself fires the SessionStart and UserPromptSubmit
hooks and puts what they print into the model's context, starts crib's MCP server from the plugin's
``.mcp.json``, offers its tools to the model, and runs the tool calls the model makes. The script
plays an agent that judges the block: it opens the first pointer with ``show``, then stores what it
learned with ``remember``. The test reads what reached the model and what reached the store.

Skipped, saying so, where the CLI is not installed (``.ci/run`` installs it from npm and sets
``CRIB_CLAUDE_BIN``).
"""

from __future__ import annotations

import json
import re
import subprocess
import sys
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pytest
from claude_cli import MCP_PREFIX, claude, home_env, install_plugin, needs_claude
from fake_anthropic import FakeAnthropic, ToolCall, text_of, tool_results
from test_pointer_session import BILLING, POINTER, PROMPT  # the same memories and prompt as the scripted session

# one worker runs the whole module under -n (pyproject: --dist loadgroup): its module fixture installs crib in the real Claude Code CLI (~10 s)
pytestmark = pytest.mark.xdist_group("test_claude_cli_session")

TOOL = MCP_PREFIX

LEARNED = "The invoice PDF template lives in billing/templates/invoice.html and WeasyPrint renders it at 150 dpi."
HEADING = "## May also bear on this"
ECHOED = '<memory-context context_time="2026-11-20T12:00:00Z">\n- [2026-11-20 note] an echoed memory\n</memory-context>'


def agent(body: dict[str, Any]) -> str | ToolCall:
    """The scripted model: open the block's first pointer, then store what it learned, then answer."""
    done = tool_results(body)
    if len(done) == 0:
        context = "\n".join(text_of(m.get("content")) for m in body.get("messages", []))
        if HEADING not in context:
            return "No memory block with pointers reached me."
        first = POINTER.findall(context.split(HEADING, 1)[1])[0]
        return ToolCall(TOOL + "show", {"id": int(first)})
    if len(done) == 1:
        return ToolCall(TOOL + "remember", {"text": LEARNED, "type": "note", "when": "changing the invoice PDF layout"})
    return "Invoices are rendered by WeasyPrint."


def crib(args: list[str], env: dict[str, str], cwd: Path) -> str:
    done = subprocess.run([sys.executable, "-m", "crib_plugin", *args], capture_output=True, text=True, env=env, cwd=str(cwd), timeout=120)
    assert done.returncode == 0, done.stderr
    return done.stdout


@dataclass
class Installed:
    """crib installed in Claude Code from this repository, in a throwaway HOME, with a project store."""

    env: dict[str, str]
    project: Path
    log: Path
    stored: dict[int, str]

    def claude(self, model: FakeAnthropic, *args: str) -> subprocess.CompletedProcess[str]:
        """``claude ARGS`` in the project, its model the stand-in."""
        return claude(list(args), {**self.env, "ANTHROPIC_BASE_URL": model.url, "ANTHROPIC_API_KEY": "sk-ant-test",
                                "DISABLE_TELEMETRY": "1", "CLAUDE_CODE_DISABLE_NONESSENTIAL_TRAFFIC": "1",
                                "DISABLE_ERROR_REPORTING": "1"}, self.project)


@pytest.fixture(scope="module")
def installed(tmp_path_factory: pytest.TempPathFactory) -> Installed:
    tmp_path = tmp_path_factory.mktemp("claude-cli")
    home, project = tmp_path / "home", tmp_path / "shop"
    home.mkdir()
    subprocess.run(["git", "init", "-q", str(project)], check=True)
    env = home_env(home)
    env.update({"CRIB_PYTHON": sys.executable,  # the plugin's launcher runs this interpreter instead of installing its own
                "CRIB_GLOBAL_DB": str(tmp_path / "global.db"), "CRIB_EXTRACTOR": "rules",
                "CRIB_HOOK_TIMEOUT": "60", "CRIB_ERROR_LOG": str(tmp_path / "crib.log"),
                "OLLAMA_HOST": "http://127.0.0.1:9"})
    install_plugin(env, home)
    stored = {}
    for kind, text in BILLING:
        line = crib(["write", "--type", kind, text], env, project)
        stored[int(re.search(r"stored entry (\d+)", line).group(1))] = text  # type: ignore[union-attr]

    return Installed(env, project, tmp_path / "crib.log", stored)


@needs_claude
def test_claude_code_injects_a_pointer_the_model_opens_with_show_and_stores_with_remember(installed: Installed) -> None:
    env, project, stored = installed.env, installed.project, installed.stored
    with FakeAnthropic(agent) as model:
        done = installed.claude(model, "-p", PROMPT, "--output-format", "json", "--allowedTools", f"{TOOL}show,{TOOL}remember")
    assert done.returncode == 0, done.stdout + done.stderr
    result = json.loads(done.stdout)
    assert result["is_error"] is False and result["result"] == "Invoices are rendered by WeasyPrint.", result

    first = model.requests[0]
    offered = {tool["name"] for tool in first.get("tools", [])}
    assert {TOOL + name for name in ("remember", "recall", "search", "show", "correct")} <= offered
    context = "\n".join(text_of(m.get("content")) for m in first["messages"])
    assert "crib memory is available" in context  # SessionStart: the agent knows the memory exists
    assert PROMPT in context and HEADING in context and "<memory-context" in context  # UserPromptSubmit's block

    pointed = int(POINTER.findall(context.split(HEADING, 1)[1])[0])
    opened, remembered = tool_results(model.requests[-1])
    assert stored[pointed] in opened  # `show` of a pointer's id returned that memory in full
    saved = json.loads(remembered)
    assert saved["scope"] == "project" and saved["duplicate"] is False
    assert LEARNED in crib(["show", str(saved["id"])], env, project)  # and it reached the project store
    assert not installed.log.exists() or "Traceback" not in installed.log.read_text()


@needs_claude
def test_a_memory_block_the_model_echoes_never_reaches_the_user(installed: Installed) -> None:
    """crib's MessageDisplay hook scrubs what Claude Code shows: a whole block the model repeats, and
    a bare opening tag left open at the end, are gone from the printed answer; the rest is kept."""
    echo = f"Before {ECHOED} after <memory-context>"
    with FakeAnthropic(lambda _body: echo) as model:
        done = installed.claude(model, "-p", "hello")
    assert done.returncode == 0, done.stderr
    assert done.stdout.split() == ["Before", "after"], done.stdout


QUESTION = "every decision and note we have about invoices"
SUBAGENT = "You answer one question from crib's memory store"  # agents/deep-recall.md, the subagent's own prompt


def deep(body: dict[str, Any]) -> str | ToolCall:
    """The main model hands a many-memory question to the deep-recall subagent; the subagent reads
    the manifest, opens its first candidate and answers citing it."""
    done = tool_results(body)
    if SUBAGENT in text_of(body.get("system")):
        if not done:
            return ToolCall(TOOL + "manifest", {"question": QUESTION})
        if len(done) == 1:
            return ToolCall(TOOL + "show", {"id": int(re.findall(r'"id": ?(\d+)', done[0])[0])})
        first = re.search(r"memory (\d+) \(", done[1])
        return f"Invoices: {done[1].splitlines()[1]} [{first.group(1) if first else '?'}]. Read: 1 memories in 1 waves; gated out: 0"
    if not done:
        return ToolCall("Agent", {"subagent_type": "crib:deep-recall", "description": "Recall every invoice memory",
                                  "prompt": QUESTION})
    return "The subagent answered: " + done[0]


@needs_claude
def test_the_deep_recall_subagent_reads_the_store_through_cribs_tools(installed: Installed) -> None:
    with FakeAnthropic(deep) as model:
        done = installed.claude(model, "-p", QUESTION, "--output-format", "json", "--allowedTools",
                                f"Agent,{TOOL}manifest,{TOOL}grep,{TOOL}show,{TOOL}search")
    assert done.returncode == 0, done.stdout + done.stderr
    result = json.loads(done.stdout)
    sub = [r for r in model.requests if SUBAGENT in text_of(r.get("system"))]
    assert sub, "Claude Code never started the crib:deep-recall subagent"
    offered = {tool["name"] for tool in sub[0].get("tools", [])}
    assert {TOOL + name for name in ("manifest", "grep", "show", "search")} <= offered
    assert not offered & {TOOL + name for name in ("remember", "correct", "forget", "cue")}  # it only reads
    manifest, shown = tool_results(sub[-1])
    listed, _end = json.JSONDecoder().raw_decode(manifest)  # Claude Code may append a reminder to a tool result
    assert listed["candidates"] and all("content" not in c for c in listed["candidates"])  # metadata only
    cited = re.search(r"\[(\d+)\]", result["result"])
    assert cited and installed.stored[int(cited.group(1))] in shown  # the answer cites what `show` returned in full
    assert "Invoice" in result["result"] and "Read: 1 memories" in result["result"]
