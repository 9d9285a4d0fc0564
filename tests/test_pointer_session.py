"""A Claude Code session, scripted the way Claude Code drives crib: memories stored through the MCP
server (a real MCP client session against ``crib mcp``), a prompt through the UserPromptSubmit hook
(its JSON on stdin, in a separate process, as Claude Code runs it), and then the agent following a
pointer of the injected block with the ``show`` tool — which returns that memory in full.
"""

from __future__ import annotations

import json
import re
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest
from test_mcp import call, crib_server, run, server_env, session

BILLING = [
    ("decision", "Invoices are rendered as PDF with WeasyPrint in the billing service."),
    ("note", "The billing service sends invoices by email through Postmark."),
    ("note", "The billing service stores invoice totals as integer cents."),
    ("error", "Invoice numbering once skipped numbers after a failed billing run."),
    ("note", "Billing runs on the first day of each month at 06:00 UTC."),
    ("preference", "Keep billing code free of floating point arithmetic."),
]
PROMPT = "how are invoices rendered as PDF in the billing service?"
POINTER = re.compile(r"^- #(\d+) \[", re.MULTILINE)


def hook_context(tmp_path: Path, prompt: str, session_id: str = "s1") -> str:
    """The additionalContext the UserPromptSubmit hook gives Claude Code for ``prompt`` ("" for none)."""
    payload = {"session_id": session_id, "hook_event_name": "UserPromptSubmit", "prompt": prompt,
               "cwd": str(tmp_path), "permission_mode": "default", "transcript_path": str(tmp_path / "t.jsonl")}
    env = {**server_env(tmp_path), "CRIB_HOOK_TIMEOUT": "60"}
    done = subprocess.run([sys.executable, "-m", "crib_plugin", "hook", "user-prompt-submit"], input=json.dumps(payload),
                          capture_output=True, text=True, env=env, cwd=str(tmp_path), timeout=120)
    assert done.returncode == 0 and "Traceback" not in done.stdout + done.stderr, done.stderr
    return json.loads(done.stdout)["hookSpecificOutput"]["additionalContext"] if done.stdout.strip() else ""


@pytest.mark.slow
def test_a_prompt_gets_a_pointer_and_show_of_its_id_returns_the_memory_in_full(tmp_path: Path) -> None:
    async def remember_all() -> dict[int, str]:
        async with session(crib_server(tmp_path)) as client:
            stored = {}
            for kind, text in BILLING:
                stored[(await call(client, "remember", text=text, type=kind))["id"]] = text
            return stored

    stored = run(remember_all())
    context = hook_context(tmp_path, PROMPT)
    assert "## May also bear on this" in context, context
    pointers_part = context.split("## May also bear on this", 1)[1]
    ids = [int(n) for n in POINTER.findall(pointers_part)]
    assert ids and set(ids) <= set(stored), (ids, context)
    pointed = ids[0]

    async def follow(entry_id: int) -> Any:
        async with session(crib_server(tmp_path)) as client:
            return await client.call_tool("show", {"id": entry_id})

    shown = run(follow(pointed))
    assert not shown.is_error and shown.content[0].type == "text"
    assert stored[pointed] in shown.content[0].text  # the whole memory, as stored
    # The same session is not given the same pointer again on its next prompt.
    again = hook_context(tmp_path, PROMPT)
    assert pointed not in {int(n) for n in POINTER.findall(again.split("## May also bear on this", 1)[-1])}
