"""Plain rows a :class:`~crib_plugin.store.base.Store` returns: no backend types leak out of it.

Every backend returns these (or plain ints, strings, floats and bytes), so the code above the
store never learns whether a row came from SQLite or PostgreSQL.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from ..core.records import Entry


@dataclass(frozen=True)
class EntryVersion:
    """An entry with its supersession pointer (``None`` while it is current)."""

    entry: Entry
    superseded_by: int | None


@dataclass(frozen=True)
class AuditRow:
    """One audit row; ``detail`` never holds a memory's text."""

    id: int
    at: str
    action: str
    entry_id: int | None
    detail: dict[str, Any] = field(default_factory=dict)


@dataclass(frozen=True)
class FactRow:
    """One relation with its entities' display names (a fact as read back)."""

    id: int
    subject: str
    predicate: str
    object: str
    valid_from: str
    valid_until: str | None


@dataclass(frozen=True)
class RelationRow:
    """The consolidation fields of one relation (what forgetting an entry needs to hand over)."""

    subject_id: int
    object_id: int
    valid_until: str | None
    superseded_by: int | None


@dataclass(frozen=True)
class StoreCounts:
    """What ``crib stats`` counts, in one read."""

    entries: int
    by_type: dict[str, int]
    superseded: int
    facts: int
    fact_versions: int
    entities: int
    pending: int
    audit_rows: int
    first: str | None
    last: str | None


def thread_of(metadata: dict[str, Any]) -> str | None:
    """The thread an entry belongs to (metadata ``thread``), if any."""
    value = metadata.get("thread") if isinstance(metadata, dict) else None
    return str(value) if value not in (None, "") else None
