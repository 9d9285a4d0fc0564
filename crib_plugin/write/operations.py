"""The write side of the :class:`~crib_plugin.memory.Memory` facade: what ``write``, ``write_many``,
``forget``, ``reindex`` and ``import_records`` do (the facade's methods delegate here).

A module of its own so the facade stays light for the processes that only read (the prompt hooks,
``crib retrieve``): they never import the write path, the cleaning rules or the maintenance work.
"""

from __future__ import annotations

from typing import Any, Callable, Sequence

from ..core.errors import InputError
from ..core.limits import check_entry
from ..core.timeutil import created_at_iso
from ..core.write_types import NewEntry, WriteReport
from ..plugins.contracts import MemoryLike
from .clean import clean_content, parse_write, validate_type, with_clean_cue
from .maintenance import import_records, reindex
from .manage import forget as forget_entries
from .path import write_prepared

__all__ = ["write", "write_many", "forget", "reindex", "import_records"]


def write(memory: MemoryLike, text: str, type: str | None, created_at: str | None, metadata: dict[str, Any] | None, *,
          dedupe: bool, extract: bool) -> list[WriteReport]:
    """One memory (``type=WORD`` prefixes honoured), through :func:`write_many`; its one report."""
    parsed = parse_write(text, type, memory.registry.types or None)
    meta = dict(metadata) if isinstance(metadata, dict) else (metadata or {})  # non-objects: refused below
    item = NewEntry(parsed.content, parsed.type, created_at, meta)
    return write_many(memory, [item], dedupe=dedupe, extract=extract, cleaned=True, same_text=dedupe)


def write_many(memory: MemoryLike, items: Sequence[NewEntry], *, dedupe: bool = True, extract: bool = True, cleaned: bool = False,
               on_progress: Callable[[int, int], None] | None = None, audit: str | None = "write", same_text: bool = False,
               defer_vectors: bool = False) -> list[WriteReport]:
    """Every item checked and cleaned first (one bad item writes nothing), then written batch by
    batch (:func:`crib_plugin.write.path.write_prepared`)."""
    prepared: list[NewEntry] = []
    for item in items:
        if not cleaned:
            check_entry(item.content)  # before the cleaning regexes run over it
        content = item.content if cleaned else clean_content(item.content)
        if not content:
            raise InputError("nothing to write: the text is empty (after removing memory blocks)")
        check_entry(content)  # size, NUL, lone surrogates: one clear line, nothing stored
        metadata = with_clean_cue(item.metadata)  # bounded JSON object; a `when` cue cleaned (crib_plugin.core.cues)
        prepared.append(NewEntry(content, validate_type(item.type, memory.registry.types or None), created_at_iso(item.created_at), metadata))
    return write_prepared(memory, prepared, dedupe=dedupe, extract=extract, on_progress=on_progress, audit=audit, same_text=same_text,
                          defer_vectors=defer_vectors)


def forget(memory: MemoryLike, entry_id: int) -> bool:
    """Delete one entry everywhere (audited); False if it did not exist."""
    if not 0 < entry_id < 2**63:  # no SQLite rowid is outside this (and apsw would overflow)
        return False
    return bool(forget_entries(memory, [entry_id]))
