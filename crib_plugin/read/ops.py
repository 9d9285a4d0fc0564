"""Management operations on a memory, as methods: list, show, search, correct, set a cue, change a
type, forget (after a preview), stats and the audit log.

:class:`MemoryOps` is a mixin over the :class:`~crib_plugin.plugins.contracts.MemoryLike`
protocol: every method goes through :mod:`crib_plugin.write.manage` (one implementation for the
CLI, the MCP server and the viewer) and the Store contract, so SQLite and PostgreSQL stores behave
alike. It is mixed into a ``Memory`` by the hosts that manage stores (``crib ui``:
:class:`crib_plugin.hosts.ui.stores.ManagedMemory`), not into the facade itself: its imports (the
write path's management, redaction, fact consolidation) stay off the per-prompt hook's path.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING, Any, Sequence

from ..core.cues import cue_of
from ..core.errors import InputError
from ..text.redact import redact_value
from ..write.clean import validate_type
from ..write.manage import audit_log, correct, forget, list_entries, record_audit, set_cue, show_entry, stats
from . import pipeline
from .forget_preview import preview_forget

if TYPE_CHECKING:  # pragma: no cover
    from ..plugins.contracts import MemoryLike

#: How many audit rows an agent or host filter reads to find the entries it wrote.
AUTHOR_WINDOW = 20_000
#: How many rows a text filter scans (newest first) before it stops: a bounded cost on a 10⁶ store.
TEXT_WINDOW = 5_000


@dataclass(frozen=True)
class ListFilter:
    """What ``list_memories`` keeps: text (a case-insensitive substring), types, ISO dates
    (``since``/``until``), the project an entry was written from, and who wrote it (``author``:
    a substring of the audit row's ``by``, ``agent`` or ``session``)."""

    text: str = ""
    types: Sequence[str] = ()
    since: str | None = None
    until: str | None = None
    project: str = ""
    author: str = ""
    include_superseded: bool = True
    limit: int = 50


class MemoryOps:
    """The management half of the facade; ``self`` is a ``Memory`` (``store``, ``settings``, ``recall``)."""

    def list_memories(self: "MemoryLike", flt: ListFilter = ListFilter()) -> list[dict[str, Any]]:
        """Entries newest first (redacted), filtered as ``flt`` says; at most ``flt.limit``. The text,
        project and author filters look at the newest :data:`TEXT_WINDOW` entries (a bounded cost)."""
        wanted_ids = _authored_ids(self, flt.author) if flt.author else None
        needle = flt.text.strip().lower()

        def keep(version: Any) -> bool:
            entry = version.entry
            if wanted_ids is not None and entry.id not in wanted_ids:
                return False
            if flt.project and getattr(entry, "project", None) != flt.project:
                return False
            # matched on the stored text, then on what is shown: a redacted secret cannot be probed
            return not needle or (needle in entry.content.lower() and needle in str(redact_value(entry.content)).lower())

        filtering = bool(needle or wanted_ids is not None or flt.project)
        return list_entries(self, types=flt.types, since=flt.since or None, until=flt.until or None, limit=flt.limit,
                            include_superseded=flt.include_superseded, keep=keep if filtering else None,
                            scan=max(TEXT_WINDOW, flt.limit))

    def search_memories(self: "MemoryLike", query: str, limit: int = 20) -> list[dict[str, Any]]:
        """crib's own ranking for ``query``: each hit redacted, with its fused score and, per channel, its rank."""
        hits = pipeline.recall(self, query).hits[:limit]
        return [{
            "id": hit.entry.id, "type": hit.entry.type, "created_at": hit.entry.created_at,
            "content": redact_value(hit.entry.content), "score": round(hit.score, 6),
            "channels": {name: {"rank": ch.rank, "score": round(ch.score, 4)} for name, ch in sorted(hit.channels.items())},
        } for hit in hits]

    def show_memory(self: "MemoryLike", entry_id: int) -> dict[str, Any]:
        """One entry (redacted) with its cue, its history both ways, its facts (valid from/until) and its audit rows."""
        data = show_entry(self, entry_id)
        entry = self.store.get_entry(entry_id)
        data["cue"] = redact_value(cue_of(entry.metadata)) if entry is not None else None
        data["project"] = getattr(entry, "project", None)
        return data

    def correct_memory(self: "MemoryLike", entry_id: int, text: str, type: str | None = None) -> int:
        """A new entry supersedes ``entry_id`` (audited ``correct``); returns its id."""
        if not text.strip():
            raise InputError("nothing to write: give the corrected text")
        return correct(self, entry_id, text, type=type)

    def set_memory_cue(self: "MemoryLike", entry_id: int, cue: str | None) -> dict[str, Any]:
        """Set (or with ``""`` clear) the recall cue of ``entry_id`` (audited ``cue``)."""
        return set_cue(self, entry_id, cue or None)

    def change_type(self: "MemoryLike", entry_id: int, new_type: str) -> int:
        """Give ``entry_id`` another type: the same text is stored with ``new_type`` as the entry that
        supersedes it (history kept, both audited: ``correct`` and ``retype``); returns the new id."""
        wanted = validate_type(new_type.strip().lower())
        entry = self.store.get_entry(self.store.successor_of(entry_id) or entry_id)
        if entry is None:
            raise InputError(f"no entry with id {entry_id}")
        if entry.type == wanted:
            raise InputError(f"entry {entry.id} is already a {wanted}")
        new_id = correct(self, entry.id, entry.content, type=wanted)
        with self.store.transaction():
            record_audit(self.store, "retype", entry.id, new_id=new_id, old_type=entry.type, new_type=wanted)
        return new_id

    def preview_forget(self: "MemoryLike", query: str, limit: int = 20) -> list[dict[str, Any]]:
        """What ``forget --query`` would remove (redacted rows with scores); nothing is removed."""
        return preview_forget(self, query, limit=limit)

    def forget_memories(self: "MemoryLike", entry_ids: Sequence[int], reason: str = "id") -> list[int]:
        """Remove entries from every channel and index (audited ``forget``, no text kept); the ids removed."""
        return forget(self, entry_ids, reason=reason)

    def store_stats(self: "MemoryLike") -> dict[str, Any]:
        """``crib stats`` for this store."""
        return stats(self)

    def audit(self: "MemoryLike", limit: int = 50, entry_id: int | None = None) -> list[dict[str, Any]]:
        """``crib log``: audit rows, newest first."""
        return audit_log(self, limit=limit, entry_id=entry_id)


def _authored_ids(memory: "MemoryLike", who: str) -> set[int]:
    """Entries whose audit rows (the last :data:`AUTHOR_WINDOW`) name ``who`` as user@machine, agent or session."""
    needle = who.strip().lower()
    out: set[int] = set()
    for row in memory.store.audit_rows(AUTHOR_WINDOW, None):
        detail = row.detail or {}
        if row.entry_id is not None and any(needle in str(detail.get(k, "")).lower() for k in ("by", "agent", "session")):
            out.add(row.entry_id)
    return out

