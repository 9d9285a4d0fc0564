"""Where the agent hosts keep their own memory, for ``crib sync``.

Each host writes memory of its own, on by default in Claude Code (auto memory) and opt-in
elsewhere; crib reads these files and never writes or disables them:

- the repository: ``CLAUDE.md``, ``CLAUDE.local.md``, ``.claude/CLAUDE.md``, ``AGENTS.md`` (Codex,
  opencode and others), ``GEMINI.md``;
- Claude Code's auto memory for this repository: ``~/.claude/projects/<path with / as ->/memory/*.md``
  (``MEMORY.md`` and its topic files);
- the user's own (``--global``): ``~/.claude/CLAUDE.md``, ``~/.codex/AGENTS.md``, Codex's memories
  folder ``~/.codex/memories/``, ``~/.gemini/GEMINI.md``.
"""

from __future__ import annotations

import os
from dataclasses import dataclass
from pathlib import Path

from ..core.repo import repo_root

REPO_FILES = ("CLAUDE.md", "CLAUDE.local.md", ".claude/CLAUDE.md", "AGENTS.md", "GEMINI.md")
USER_FILES = (".claude/CLAUDE.md", ".codex/AGENTS.md", ".gemini/GEMINI.md")
USER_FOLDERS = (".codex/memories",)


@dataclass(frozen=True)
class HostMemory:
    """One memory file a host keeps: its path and which host writes it."""

    path: Path
    host: str


def _host_of(name: str) -> str:
    lowered = name.lower()
    if "claude" in lowered:
        return "claude"
    if "gemini" in lowered:
        return "gemini"
    return "codex" if "codex" in lowered else "agents"


def claude_project_folder(root: Path, home: Path) -> Path:
    """Claude Code's per-project folder (under ``CLAUDE_CONFIG_DIR`` when set): the absolute path
    with every character that is not a letter or digit replaced by ``-``."""
    slug = "".join(ch if ch.isalnum() else "-" for ch in str(root.resolve()))
    config = Path(os.environ["CLAUDE_CONFIG_DIR"]) if os.environ.get("CLAUDE_CONFIG_DIR") else home / ".claude"
    return config / "projects" / slug


def project_memories(cwd: Path | None = None, home: Path | None = None) -> list[HostMemory]:
    """The host memory files of the repository around ``cwd`` (or ``cwd`` itself) that exist."""
    root = repo_root(cwd) or (cwd or Path.cwd())
    home = home or Path.home()
    found = [HostMemory(root / name, _host_of(name)) for name in REPO_FILES if (root / name).is_file()]
    auto = claude_project_folder(root, home) / "memory"
    if auto.is_dir():
        found += [HostMemory(p, "claude") for p in sorted(auto.glob("*.md")) if p.is_file()]
    return found


def user_memories(home: Path | None = None) -> list[HostMemory]:
    """The user's own host memory files (every project's) that exist."""
    home = home or Path.home()
    found = [HostMemory(home / name, _host_of(name)) for name in USER_FILES if (home / name).is_file()]
    for folder in USER_FOLDERS:
        if (home / folder).is_dir():
            found += [HostMemory(p, _host_of(folder)) for p in sorted((home / folder).rglob("*.md")) if p.is_file()]
    return found
