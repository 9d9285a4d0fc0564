"""``crib setup codex``: crib as a Codex CLI plugin, from a local marketplace crib writes.

With the ``codex`` command found (``CRIB_CODEX_BIN``, else ``PATH``), set-up goes through Codex's
own plugin mechanism: it writes a marketplace to ``$CODEX_HOME/crib-marketplace/``
(``.agents/plugins/marketplace.json``) holding the plugin ``crib`` (``.codex-plugin/plugin.json``:
``SessionStart`` and ``UserPromptSubmit`` hooks running ``crib hook … --host codex``, the MCP server
``crib mcp`` with ``CRIB_HOST=codex``, and the ``crib-memory`` skill), then runs
``codex plugin marketplace add`` and ``codex plugin add crib@crib``. ``--undo`` removes both and the
folder.

Without a ``codex`` command it writes the same hooks to ``$CODEX_HOME/hooks.json`` and the server
to ``[mcp_servers.crib]`` in ``config.toml`` (between marker comments), which Codex reads as well.

Codex runs a hook only once the user has trusted it: after set-up, start ``codex`` once and accept
the hooks (``/hooks``), or run ``codex exec --dangerously-bypass-hook-trust`` in scripts.
Codex cannot filter displayed text, so an echoed memory block is not removed there.
"""

from __future__ import annotations

import json
import os
import shutil
import subprocess
from importlib import resources
from pathlib import Path

from ... import __version__
from ...core.config import setting_value
from ...core.errors import CribError
from .files import Changes, crib_argv, crib_command, read_json, replace_block, set_hooks, write_json, write_text

NAME = "codex"
MARKETPLACE = "crib"
PLUGIN = f"crib@{MARKETPLACE}"
TRUST_NOTE = "Codex runs new hooks only once trusted: start `codex` and accept them (/hooks), or pass --dangerously-bypass-hook-trust."


def home(base: Path) -> Path:
    given = os.environ.get("CODEX_HOME", "").strip()
    return Path(given) if given else base / ".codex"


def codex_binary() -> str | None:
    given = str(setting_value("codex_bin", "") or "").strip()
    return given if given and os.access(given, os.X_OK) else shutil.which("codex")


def _hooks() -> dict[str, list[dict[str, object]]]:
    def group(event: str, timeout: int) -> dict[str, object]:
        return {"hooks": [{"type": "command", "command": crib_command("hook", event, "--host", NAME), "timeout": timeout}]}

    return {"SessionStart": [group("session-start", 15)], "UserPromptSubmit": [group("user-prompt-submit", 10)]}


def _server() -> dict[str, object]:
    argv = crib_argv()
    return {"command": argv[0], "args": [*argv[1:], "mcp"], "env": {"CRIB_HOST": NAME}}


def write_marketplace(root: Path) -> bool:
    """The marketplace folder and its one plugin; True when anything in it changed."""
    plugin = root / "plugins" / "crib"
    skill = resources.files(__package__).joinpath("guidance.md").read_text(encoding="utf-8")
    front = ("---\nname: crib-memory\ndescription: Project memory shared by every agent (crib). Use to store a decision with its reason, "
             "an error and its fix, a correction, a user preference or a durable fact (remember), and to recall, correct or forget one.\n---\n\n")
    changed = [
        write_json(root / ".agents" / "plugins" / "marketplace.json", {"name": MARKETPLACE, "plugins": [
            {"name": "crib", "source": {"source": "local", "path": "./plugins/crib"}, "description": "crib: shared project memory"}]}),
        write_json(plugin / ".codex-plugin" / "plugin.json", {
            "name": "crib", "version": __version__, "description": "crib: the project memory Claude Code, Codex CLI, Gemini CLI and opencode share.",
            "skills": "./skills/", "hooks": "./hooks/hooks.json", "mcpServers": "./.mcp.json"}),
        write_json(plugin / "hooks" / "hooks.json", {"hooks": _hooks()}),
        write_json(plugin / ".mcp.json", {"mcpServers": {"crib": _server()}}),
        write_text(plugin / "skills" / "crib-memory" / "SKILL.md", front + skill),
    ]
    return any(changed)


def _codex(binary: str, *args: str) -> None:
    done = subprocess.run([binary, "plugin", *args], capture_output=True, text=True, timeout=120)
    if done.returncode != 0:
        raise CribError(f"`codex plugin {' '.join(args)}` failed: {(done.stderr or done.stdout).strip()[:300]}")


def _plugin_installed(root: Path) -> bool:
    config = root / "config.toml"
    return f'[plugins."{PLUGIN}"]' in (config.read_text(encoding="utf-8") if config.exists() else "")


def apply_plugin(binary: str, base: Path, undo: bool) -> Changes:
    changes, root = Changes(), home(base)
    market = root / "crib-marketplace"
    if undo:
        if _plugin_installed(root):
            _codex(binary, "remove", PLUGIN)
            _codex(binary, "marketplace", "remove", MARKETPLACE)
            changes.add("removed the plugin crib@crib and its marketplace", root / "config.toml")
        if market.exists():
            shutil.rmtree(market)
            changes.add("removed the marketplace folder", market)
        return changes
    rewritten = write_marketplace(market)
    if rewritten:
        changes.add("marketplace with the plugin crib (hooks, MCP server, skill)", market)
    if rewritten or not _plugin_installed(root):
        if _plugin_installed(root):
            _codex(binary, "remove", PLUGIN)  # reinstall: Codex runs the copy in its plugin cache
            _codex(binary, "marketplace", "remove", MARKETPLACE)
        _codex(binary, "marketplace", "add", str(market))
        _codex(binary, "add", PLUGIN)
        changes.add(f"codex plugin add {PLUGIN}", root / "config.toml")
    return changes


def _mcp_block() -> str:
    argv = crib_argv()
    return "\n".join(["[mcp_servers.crib]", f"command = {json.dumps(argv[0])}", f"args = {json.dumps([*argv[1:], 'mcp'])}",
                      'env = { CRIB_HOST = "codex" }'])


def apply_files(base: Path, undo: bool) -> Changes:
    """Without a ``codex`` command: hooks in ``hooks.json``, the server in ``config.toml``."""
    changes, root = Changes(), home(base)
    hooks_file, config = root / "hooks.json", root / "config.toml"
    data = read_json(hooks_file)
    old = data.get("hooks", {}) if isinstance(data.get("hooks"), dict) else {}
    hooks = set_hooks(old, {} if undo else _hooks())
    data = {**data, "hooks": hooks} if hooks or not undo else {k: v for k, v in data.items() if k != "hooks"}
    if undo and hooks == old:
        pass  # none of crib's hooks there: the file stays as the user wrote it
    elif undo and not data and hooks_file.exists():
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


def apply(base: Path, undo: bool = False) -> Changes:
    binary = codex_binary()
    if undo:  # whichever way it was wired
        changes = apply_plugin(binary, base, True) if binary else Changes()
        changes.lines += apply_files(base, True).lines
        return changes
    return apply_plugin(binary, base, False) if binary else apply_files(base, False)


def wired(base: Path) -> bool:
    root = home(base)
    if _plugin_installed(root):
        return True
    config = root / "config.toml"
    return "[mcp_servers.crib]" in (config.read_text(encoding="utf-8") if config.exists() else "") and \
        "crib_plugin" in json.dumps(read_json(root / "hooks.json"))
