"""``crib setup codex``: crib's hooks and MCP server in Codex CLI's user configuration.

* ``$CODEX_HOME/hooks.json`` (default ``~/.codex``): ``SessionStart`` and ``UserPromptSubmit`` run
  ``crib hook … --host codex`` (Codex's hooks have Claude Code's shape);
* ``$CODEX_HOME/config.toml``: ``[mcp_servers.crib]`` runs ``crib mcp`` (``CRIB_HOST=codex``, so
  audit rows say Codex wrote them), between marker comments the undo removes;
* ``$CODEX_HOME/AGENTS.md``: nothing — crib's guidance reaches Codex through the session-start line
  and the MCP tools' descriptions, and the user's own AGENTS.md stays theirs.

Codex runs a hook only once the user has trusted it: after set-up, start ``codex`` once and accept
the hooks (``/hooks``), or run ``codex exec --dangerously-bypass-hook-trust`` in scripts.
Codex cannot filter displayed text, so an echoed memory block is not removed there.
"""

from __future__ import annotations

import json
import os
from pathlib import Path

from .files import Changes, crib_argv, crib_command, read_json, replace_block, set_hooks, write_json, write_text

NAME = "codex"
TRUST_NOTE = "Codex runs new hooks only once trusted: start `codex` and accept them (/hooks), or pass --dangerously-bypass-hook-trust."


def home(base: Path) -> Path:
    given = os.environ.get("CODEX_HOME", "").strip()
    return Path(given) if given else base / ".codex"


def _hooks() -> dict[str, list[dict[str, object]]]:
    def group(event: str, timeout: int) -> dict[str, object]:
        return {"hooks": [{"type": "command", "command": crib_command("hook", event, "--host", NAME), "timeout": timeout}]}

    return {"SessionStart": [group("session-start", 15)], "UserPromptSubmit": [group("user-prompt-submit", 10)]}


def _mcp_block() -> str:
    argv = crib_argv()
    return "\n".join([
        "[mcp_servers.crib]",
        f"command = {json.dumps(argv[0])}",
        f"args = {json.dumps([*argv[1:], 'mcp'])}",
        'env = { CRIB_HOST = "codex" }',
    ])


def apply(base: Path, undo: bool = False) -> Changes:
    changes, root = Changes(), home(base)
    hooks_file, config = root / "hooks.json", root / "config.toml"
    data = read_json(hooks_file)
    hooks = set_hooks(data.get("hooks", {}) if isinstance(data.get("hooks"), dict) else {}, {} if undo else _hooks())
    data = {**data, "hooks": hooks} if hooks or not undo else {k: v for k, v in data.items() if k != "hooks"}
    if undo and not data and hooks_file.exists():
        hooks_file.unlink()
        changes.add("removed crib's hooks", hooks_file)
    elif (data or not undo) and write_json(hooks_file, data):
        changes.add("removed crib's hooks" if undo else "SessionStart and UserPromptSubmit hooks", hooks_file)
    text = config.read_text(encoding="utf-8") if config.exists() else ""
    new = replace_block(text, None if undo else _mcp_block())
    if new != text and (new or text):
        if new:
            write_text(config, new)
        else:
            config.unlink()
        changes.add("removed the crib MCP server" if undo else "MCP server [mcp_servers.crib]", config)
    return changes


def wired(base: Path) -> bool:
    root = home(base)
    config = root / "config.toml"
    return "[mcp_servers.crib]" in (config.read_text(encoding="utf-8") if config.exists() else "") and \
        "crib_plugin" in json.dumps(read_json(root / "hooks.json"))
