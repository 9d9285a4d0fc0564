"""``crib setup claude``: crib's hooks and MCP server in Claude Code's user settings, for a user who
installed crib with pip rather than as a Claude Code plugin (the plugin wires the same itself).

* ``~/.claude/settings.json``: ``SessionStart``, ``UserPromptSubmit`` and ``MessageDisplay`` hooks;
* ``~/.claude.json``: ``mcpServers.crib`` (``crib mcp``).

Claude Code's own auto memory is left on: crib never disables a host's memory.
"""

from __future__ import annotations

import os
from pathlib import Path
from typing import Any

from .files import Changes, crib_argv, crib_command, is_crib, read_json, set_hooks, write_json

NAME = "claude"


def home(base: Path) -> Path:
    given = os.environ.get("CLAUDE_CONFIG_DIR", "").strip()
    return Path(given) if given else base / ".claude"


def _hooks() -> dict[str, list[dict[str, object]]]:
    def group(event: str, timeout: int) -> list[dict[str, object]]:
        return [{"hooks": [{"type": "command", "command": crib_command("hook", event), "timeout": timeout}]}]

    return {"SessionStart": group("session-start", 15), "UserPromptSubmit": group("user-prompt-submit", 10),
            "MessageDisplay": group("message-display", 5)}


def apply(base: Path, undo: bool = False) -> Changes:
    changes = Changes()
    settings_file, mcp_file = home(base) / "settings.json", base / ".claude.json"
    settings = read_json(settings_file)
    hooks = set_hooks(settings.get("hooks", {}) if isinstance(settings.get("hooks"), dict) else {}, {} if undo else _hooks())
    settings = {**settings, "hooks": hooks} if hooks else {k: v for k, v in settings.items() if k != "hooks"}
    if undo and not settings and settings_file.exists():  # nothing of the user's left: crib created it
        settings_file.unlink()
        changes.add("removed crib's hooks", settings_file)
    elif (settings_file.exists() or not undo) and write_json(settings_file, settings):
        changes.add("removed crib's hooks" if undo else "SessionStart, UserPromptSubmit and MessageDisplay hooks", settings_file)
    data = read_json(mcp_file)
    found = data.get("mcpServers")
    servers: dict[str, Any] = found if isinstance(found, dict) else {}
    servers = {k: v for k, v in servers.items() if not (k == "crib" and is_crib(v))}
    if not undo:
        argv = crib_argv()
        servers["crib"] = {"type": "stdio", "command": argv[0], "args": [*argv[1:], "mcp"], "env": {"CRIB_HOST": NAME}}
    data = {**data, "mcpServers": servers} if servers else {k: v for k, v in data.items() if k != "mcpServers"}
    if undo and not data and mcp_file.exists():
        mcp_file.unlink()
        changes.add("removed the crib MCP server", mcp_file)
    elif (mcp_file.exists() or not undo) and write_json(mcp_file, data):
        changes.add("removed the crib MCP server" if undo else "MCP server mcpServers.crib", mcp_file)
    return changes


def wired(base: Path) -> bool:
    return is_crib(read_json(home(base) / "settings.json").get("hooks", {})) and \
        is_crib(read_json(base / ".claude.json").get("mcpServers", {}))
