"""The write path's plain records: one entry to write (:class:`NewEntry`), what a write did
(:class:`WriteReport`) and the embedding batch size. A leaf, so that ``writepath`` (below the
``Memory`` facade) and the facade share them without importing each other.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

EMBED_BATCH = 32



@dataclass
class WriteReport:
    """What the last write did: the entry id and which parts of the write path ran."""

    entry_id: int
    duplicate: bool = False
    embedded: bool = False
    background: bool = False  # its vector is left to a detached embedder (``write.deferred``)
    facts: int = 0
    notes: list[str] = field(default_factory=list)


@dataclass
class NewEntry:
    """One entry to write (the import and bulk-write unit)."""

    content: str
    type: str = "note"
    created_at: str | None = None
    metadata: dict[str, Any] = field(default_factory=dict)
