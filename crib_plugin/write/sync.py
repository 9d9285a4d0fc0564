"""Keep crib in step with a memory file another tool writes (``CLAUDE.md``, ``AGENTS.md``,
``GEMINI.md``, Claude Code's auto memory, Codex's memories): ``crib sync``.

The file is split as ``crib import`` splits it (:func:`crib_plugin.write.importers.markdown_records`:
one memory per bullet or paragraph, under its heading path), and compared with the current
memories that came from the same file (``metadata.source_path``):

- a unit already stored is left alone;
- a new unit is written — unless its text is one the user forgot in crib (``crib forget`` keeps the
  content hash in the audit): the file does not bring it back;
- a unit whose text changed (the old one gone, a new one under the same heading) *corrects* the old
  memory, so the old text is kept in its history and no longer shown;
- a unit removed from the file is superseded by a short dated note saying so (``metadata.sync =
  "removed"``): history is kept, the old text is no longer shown, and the agent can see it was
  dropped. A file that no longer exists is skipped, not read as "every line removed".

crib never writes to the file: the host's own memory keeps working as before.
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any

from ..core.errors import InputError
from ..core.timeutil import now_iso
from ..store.sqlite_rows import content_hash
from .clean import clean_content
from .importers import markdown_records
from .maintenance import import_records
from .manage import correct, record_audit

if TYPE_CHECKING:
    from ..plugins.contracts import MemoryLike

#: ``metadata.sync`` of the note that supersedes a memory whose line left its file.
REMOVED = "removed"


@dataclass
class SyncReport:
    """What one sync of one file did."""

    path: str
    added: int = 0
    updated: int = 0
    removed: int = 0
    unchanged: int = 0
    forgotten: int = 0
    missing: bool = False

    def to_json(self) -> dict[str, Any]:
        return dict(self.__dict__)


def sync_file(memory: "MemoryLike", path: Path, source: str = "markdown") -> SyncReport:
    """Bring the memories that came from ``path`` in step with it (see the module docstring)."""
    path = path.expanduser().resolve()
    report = SyncReport(str(path))
    if not path.is_file():
        report.missing = True
        return report
    try:
        text = path.read_text(encoding="utf-8")
    except (OSError, UnicodeDecodeError) as exc:
        raise InputError(f"cannot read {path}: {exc}") from exc
    records = markdown_records(text, source=source, source_path=str(path))
    store = memory.store
    current = [v.entry for v in store.list_versions(include_superseded=False)
               if v.entry.metadata.get("source_path") == str(path) and v.entry.metadata.get("sync") != REMOVED]
    stored = {v.content_hash: v for v in current}
    wanted = {content_hash(clean_content(r["content"])): r for r in records}
    report.unchanged = len(stored.keys() & wanted.keys())
    gone = [v for h, v in stored.items() if h not in wanted]
    new = [r for h, r in wanted.items() if h not in stored]
    forgotten = store.forgotten_hashes()

    by_heading: dict[str, list[Any]] = {}
    for version in gone:
        by_heading.setdefault(str(version.metadata.get("heading", "")), []).append(version)
    fresh: list[dict[str, Any]] = []
    for record in new:
        if content_hash(clean_content(record["content"])) in forgotten:
            report.forgotten += 1
            continue
        same_place = by_heading.get(str(record["metadata"].get("heading", "")))
        if same_place:  # a changed line: the old memory is corrected, its text kept in the history
            old = same_place.pop(0)
            new_id = correct(memory, old.id, record["content"], type=record.get("type"))  # type: ignore[arg-type]
            with store.transaction():
                store.set_metadata(new_id, {**record["metadata"], **_kept(store.get_entry(new_id))})
            report.updated += 1
        else:
            fresh.append(record)
    if fresh:
        reports = import_records(memory, fresh)
        report.added = sum(1 for r in reports if not r.duplicate)
    for left in by_heading.values():
        for old in left:
            note = f"No longer in {path.name} (removed {now_iso()[:10]}): {old.content}"
            marker = memory.write(note, type="note", metadata={"source": source, "source_path": str(path), "sync": REMOVED},
                                  dedupe=False)
            with store.transaction():
                store.supersede_entry(old.id, marker)
                record_audit(store, "sync-remove", old.id, new_id=marker, source_path=str(path))
            report.removed += 1
    return report


def _kept(entry: Any) -> dict[str, Any]:
    """What a correction carries over from the entry it corrects (its thread, cue and link)."""
    return {k: v for k, v in (entry.metadata if entry else {}).items() if k in ("corrects", "thread", "when", "when_by")}
