"""``crib sync``: the hosts' own memory files brought into crib and kept in step with it.

Agent hosts keep memory of their own, and crib never turns it off: Claude Code's auto memory
(``~/.claude/projects/<project>/memory/MEMORY.md``, on by default), ``CLAUDE.md``, ``AGENTS.md``
(Codex CLI, opencode), ``GEMINI.md`` (Gemini CLI's ``save_memory`` writes it). ``crib sync`` reads
the ones present for this repository (or the files given), split as ``crib import`` splits
markdown (:mod:`crib_plugin.write.importers`: one memory per bullet or paragraph, under its
heading path), and keeps crib in step with each file:

* a new line is written as a memory (its metadata names the file);
* a changed line corrects the memory it came from (paired in order with the lines that
  disappeared from the same file): the old version stays as history, the new one comes back;
* a removed line's memory is forgotten (audited, as ``crib forget``);
* a line whose memory the user forgot in crib is not brought back by the next sync, and an
  unchanged line is left alone.

What crib knows of each file — the hash of each line it imported and the memory it became — is
kept beside the store in ``host-memory.json``.
"""

from __future__ import annotations

import hashlib
import json
import os
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from ..core.errors import InputError
from ..write.importers import read_records
from ..write.manage import correct, forget

STATE_FILE = "host-memory.json"
REPO_FILES = ("CLAUDE.md", "AGENTS.md", "GEMINI.md", ".claude/CLAUDE.md")


@dataclass
class FileSync:
    """What one file's sync did."""

    path: Path
    added: list[int] = field(default_factory=list)
    updated: list[tuple[int, int]] = field(default_factory=list)  # (old id, new id)
    removed: list[int] = field(default_factory=list)
    kept_forgotten: int = 0

    def line(self) -> str:
        parts = [f"{len(self.added)} added", f"{len(self.updated)} updated", f"{len(self.removed)} removed"]
        if self.kept_forgotten:
            parts.append(f"{self.kept_forgotten} forgotten in crib, not brought back")
        return f"{self.path}: " + ", ".join(parts)


def claude_project_slug(root: Path) -> str:
    """The folder name Claude Code gives a project under ``~/.claude/projects/`` (its path, every
    character that is not a letter or digit replaced by ``-``)."""
    return "".join(c if c.isalnum() else "-" for c in str(root.resolve()))


def host_memory_files(root: Path, home: Path | None = None) -> list[Path]:
    """The hosts' memory files present for the repository at ``root``."""
    home = home or Path.home()
    claude_dir = Path(os.environ.get("CLAUDE_CONFIG_DIR") or home / ".claude")
    found = [root / name for name in REPO_FILES]
    found.append(claude_dir / "projects" / claude_project_slug(root) / "memory" / "MEMORY.md")
    return [p for p in found if p.is_file()]


def _hash(text: str) -> str:
    return hashlib.sha256(" ".join(text.split()).encode("utf-8")).hexdigest()[:24]


def load_state(path: Path) -> dict[str, Any]:
    try:
        data = json.loads(path.read_text(encoding="utf-8"))
    except (OSError, ValueError):
        return {"files": {}}
    return data if isinstance(data, dict) and isinstance(data.get("files"), dict) else {"files": {}}


def save_state(path: Path, state: dict[str, Any]) -> None:
    path.parent.mkdir(parents=True, exist_ok=True)
    tmp = path.with_name(f".{path.name}.{os.getpid()}")
    tmp.write_text(json.dumps(state, indent=1), encoding="utf-8")
    os.replace(tmp, path)


def sync_file(memory: Any, path: Path, state: dict[str, Any]) -> FileSync:
    """Bring ``path`` in step (see the module docstring); updates ``state`` in place."""
    key = str(path.resolve())
    _, records = read_records(path, "claude")
    previous: list[list[Any]] = [p for p in state["files"].get(key, []) if isinstance(p, list) and len(p) == 2]
    known = {h: i for h, i in previous}
    current = [(_hash(r["content"]), r) for r in records]
    present = {h for h, _ in current}
    gone = [(h, i) for h, i in previous if h not in present]
    report, mapping = FileSync(path), []
    for digest, record in current:
        if digest in known:  # unchanged, or forgotten in crib by the user: left as it is
            report.kept_forgotten += memory.entry(known[digest]) is None
            mapping.append([digest, known[digest]])
            continue
        entry_type = record.get("type") or "note"
        while gone and memory.entry(gone[0][1]) is None:  # forgotten in crib already: nothing to correct
            gone.pop(0)
        if gone:
            _, old = gone.pop(0)
            new = correct(memory, old, record["content"], type=entry_type)
            report.updated.append((old, new))
        else:
            new = memory.write(record["content"], type=entry_type, metadata=record.get("metadata"))
            report.added.append(new)
        mapping.append([digest, new])
    stale = [i for _, i in gone if memory.entry(i) is not None]
    report.removed = forget(memory, stale, reason=f"removed from {path.name}") if stale else []
    state["files"][key] = mapping
    return report


def sync(memory: Any, files: list[Path], state_path: Path) -> list[FileSync]:
    """Sync every file in ``files`` into ``memory``; the state is saved after each file."""
    state = load_state(state_path)
    reports = []
    for path in files:
        if not path.is_file():
            raise InputError(f"no such file: {path}")
        reports.append(sync_file(memory, path, state))
        save_state(state_path, state)
    return reports
