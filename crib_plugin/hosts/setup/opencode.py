"""``crib setup opencode``: a plugin file and an ``mcp`` entry in opencode's user configuration.

* ``$XDG_CONFIG_HOME/opencode/plugins/crib.js`` (default ``~/.config/opencode``): a thin bridge
  (``crib_opencode.js`` beside this module) that runs ``crib hook … --host opencode``: the prompt's
  block on ``chat.message`` (added to that message as the model sees it), the standing memories in
  the system prompt once a session, and memory blocks removed from finished text
  (``experimental.text.complete``). Built against opencode-ai 1.18.33.
* ``opencode.json`` there: ``"mcp": {"crib": {"type": "local", "command": [... "mcp"]}}``.
"""

from __future__ import annotations

import json
import os
from importlib import resources
from pathlib import Path
from typing import Any

from .files import Changes, crib_argv, is_crib, read_json, remove_file, write_json, write_text

NAME = "opencode"


def home(base: Path) -> Path:
    given = os.environ.get("XDG_CONFIG_HOME", "").strip()
    return (Path(given) if given else base / ".config") / "opencode"


def plugin_text() -> str:
    template = resources.files(__package__).joinpath("crib_opencode.js").read_text(encoding="utf-8")
    return template.replace("__CRIB_ARGV__", json.dumps(crib_argv()))


def apply(base: Path, undo: bool = False) -> Changes:
    changes, root = Changes(), home(base)
    plugin, config = root / "plugins" / "crib.js", root / "opencode.json"
    if undo:
        remove_file(plugin, changes, "the crib plugin")
    elif write_text(plugin, plugin_text()):
        changes.add("plugin (prompt, session start, text filter)", plugin)
    data = read_json(config)
    found = data.get("mcp")
    mcp: dict[str, Any] = found if isinstance(found, dict) else {}
    mcp = {k: v for k, v in mcp.items() if not (k == "crib" and is_crib(v))}
    if not undo:
        mcp["crib"] = {"type": "local", "command": [*crib_argv(), "mcp"], "environment": {"CRIB_HOST": NAME}, "enabled": True}
    new = {**data, "mcp": mcp} if mcp else {k: v for k, v in data.items() if k != "mcp"}
    if undo and new == {"$schema": "https://opencode.ai/config.json"} or (undo and not new):
        if config.exists():
            config.unlink()
            changes.add("removed the crib MCP server", config)
        return changes
    if not undo and not config.exists():
        new = {"$schema": "https://opencode.ai/config.json", **new}
    if (config.exists() or not undo) and write_json(config, new):
        changes.add("removed the crib MCP server" if undo else "MCP server mcp.crib", config)
    return changes


def wired(base: Path) -> bool:
    root = home(base)
    return (root / "plugins" / "crib.js").exists() and is_crib(read_json(root / "opencode.json").get("mcp", {}))
