"""``crib setup gemini``: crib as a Gemini CLI extension in the user's ``~/.gemini/extensions/crib``.

* ``gemini-extension.json``: the ``crib`` MCP server (``crib mcp``, ``CRIB_HOST=gemini``) and the
  context file ``GEMINI.md`` (crib's guidance on when to write);
* ``skills/crib-memory/SKILL.md``: the same guidance as a skill;
* ``hooks/hooks.json``: ``SessionStart`` (standing memories), ``BeforeAgent`` (each prompt's
  block) and ``AfterModel`` (memory blocks removed from each streamed chunk). Timeouts are in
  milliseconds.

``gemini extensions validate ~/.gemini/extensions/crib`` checks it. In headless runs
(``gemini -p``) Gemini offers MCP tools only with ``--approval-mode yolo``.
"""

from __future__ import annotations

import os
from importlib import resources
from pathlib import Path

from ... import __version__
from .files import Changes, crib_argv, crib_command, remove_file, write_json, write_text

NAME = "gemini"
SKILL_FRONT = ("---\nname: crib-memory\ndescription: Project memory shared by every agent (crib). Use to store a decision with its "
               "reason, an error and its fix, a correction, a user preference or a durable fact (remember), and to recall, correct "
               "or forget one.\n---\n\n")


def home(base: Path) -> Path:
    given = os.environ.get("GEMINI_CLI_HOME", "").strip()
    return (Path(given) if given else base) / ".gemini"


def extension_dir(base: Path) -> Path:
    return home(base) / "extensions" / "crib"


def manifest() -> dict[str, object]:
    argv = crib_argv()
    return {
        "name": "crib", "version": __version__,
        "description": "crib: the project memory Claude Code, Codex CLI, Gemini CLI and opencode share.",
        "mcpServers": {"crib": {"command": argv[0], "args": [*argv[1:], "mcp"], "env": {"CRIB_HOST": NAME}}},
        "contextFileName": "GEMINI.md",
    }


def hooks() -> dict[str, object]:
    def group(event: str, timeout_ms: int) -> list[dict[str, object]]:
        return [{"hooks": [{"type": "command", "name": f"crib-{event}", "command": crib_command("hook", event, "--host", NAME),
                            "timeout": timeout_ms}]}]

    return {"hooks": {"SessionStart": group("session-start", 15_000), "BeforeAgent": group("user-prompt-submit", 10_000),
                      "AfterModel": group("after-model", 5_000)}}


def apply(base: Path, undo: bool = False) -> Changes:
    changes, root = Changes(), extension_dir(base)
    skill = root / "skills" / "crib-memory" / "SKILL.md"
    files = {root / "gemini-extension.json": None, root / "hooks" / "hooks.json": None, root / "GEMINI.md": None, skill: None}
    if undo:
        for path in files:
            remove_file(path, changes, "crib's extension file")
        for folder in (skill.parent.parent, root):
            try:
                folder.rmdir()
            except OSError:
                pass
        return changes
    guidance = resources.files(__package__).joinpath("guidance.md").read_text(encoding="utf-8")
    if write_json(root / "gemini-extension.json", manifest()):
        changes.add("extension with the crib MCP server", root / "gemini-extension.json")
    if write_json(root / "hooks" / "hooks.json", hooks()):
        changes.add("SessionStart, BeforeAgent and AfterModel hooks", root / "hooks" / "hooks.json")
    if write_text(root / "GEMINI.md", guidance):
        changes.add("guidance (the extension's context file)", root / "GEMINI.md")
    if write_text(skill, SKILL_FRONT + guidance):
        changes.add("the crib-memory skill", skill)
    return changes


def wired(base: Path) -> bool:
    return (extension_dir(base) / "gemini-extension.json").exists()
