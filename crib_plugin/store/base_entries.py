"""The entry, full-text and lifecycle parts of the :class:`~crib_plugin.store.base.Store` contract.

Split from :mod:`.base` only to keep each module small; read :mod:`.base` first.
"""

from __future__ import annotations

from collections.abc import Iterator, Sequence
from contextlib import AbstractContextManager
from pathlib import Path
from typing import Any, Protocol

from ..core.records import Entry
from .records import EntryVersion


class Lifecycle(Protocol):
    """Identity, transactions and schema of an open store."""

    path: Path
    """Where the store lives (a file for SQLite; a backend without files gives its own locator)."""
    backend: str
    """The backend's short name (``"sqlite"``, ``"postgres"``), shown by ``crib doctor``."""
    readonly: bool
    """True when opened for reading only: every write method must then raise ``StoreError``
    (``StoreReadOnly`` or a subclass) and change nothing."""

    def transaction(self) -> AbstractContextManager[None]:
        """One atomic unit of writes: commits on success, rolls back everything on any exception
        (the exception propagates). Nested calls must nest (savepoints): an inner failure caught
        by the caller undoes only the inner block."""
        ...

    def close(self) -> None:
        """Release the connection; calling it twice is harmless."""
        ...

    def schema_version(self) -> int:
        """The schema version the store is at (``crib doctor``, ``crib stats``)."""
        ...

    def migrate(self) -> int:
        """Bring the schema to the latest version (serialised across processes); returns it."""
        ...


class Entries(Protocol):
    """Memories: insert, read, deduplicate, delete, threads and supersession."""

    def insert_entry(self, type: str, content: str, created_at: str, metadata: dict[str, Any]) -> int:
        """Insert one entry and index it for every full-text search; returns its new id (ids grow).

        Call inside :meth:`transaction`. An entry whose metadata names a ``thread`` joins it: the
        backend must make its neighbours' text searchable as its context (and its own text part
        of the previous entry's context)."""
        ...

    def get_entry(self, entry_id: int) -> Entry | None:
        """The entry, or ``None`` when no entry has this id."""
        ...

    def get_entries(self, ids: Sequence[int]) -> dict[int, Entry]:
        """The entries that exist among ``ids``, keyed by id (missing ids are absent)."""
        ...

    def iter_entries(self, order: str = "id") -> Iterator[Entry]:
        """Every entry, streamed, by ``"id"`` or ``"created_at"`` (then id); memory stays flat."""
        ...

    def recent_entries(self, limit: int, types: Sequence[str] | None = None, *, current_only: bool = False) -> list[Entry]:
        """Newest first (``created_at``, then id), optionally of ``types``; ``current_only`` leaves
        out entries a later one superseded."""
        ...

    def count_entries(self) -> int:
        """How many entries the store holds (may be cached until the next write or commit)."""
        ...

    def find_duplicate(self, type: str, content: str, metadata: dict[str, Any]) -> int | None:
        """The id of an entry with the same type, whitespace-normalised content and metadata."""
        ...

    def find_same_text(self, content: str, limit: int = 20) -> list[int]:
        """Ids of the entries not superseded whose whitespace-normalised content is ``content``'s,
        whatever their type and metadata, newest first (at most ``limit``)."""
        ...

    def delete_entry(self, entry_id: int) -> bool:
        """Delete an entry from every index (full text, trigram, CJK, vectors, the work queue) and
        refresh its thread neighbours' context; False when it did not exist. Inside a transaction.
        Facts sources are the caller's (``facts.forget_entry``)."""
        ...

    def last_in_thread(self, thread: str) -> Entry | None:
        """The most recently written entry of ``thread`` (the one a new entry follows)."""
        ...

    def thread_neighbours(self, thread: str, entry_id: int) -> tuple[int | None, int | None]:
        """Ids of the entries just before and just after ``entry_id`` in ``thread``."""
        ...

    def count_with_metadata(self, key: str) -> int:
        """Entries whose metadata holds ``key`` (how many carry a recall cue, ``when``)."""
        ...

    def set_metadata(self, entry_id: int, metadata: dict[str, Any]) -> bool:
        """Replace an entry's metadata (a recall cue set after the fact); ``False`` when there is
        no such entry. Its content, type and time never change. Call inside a transaction."""
        ...

    def supersede_entry(self, old_id: int, new_id: int) -> None:
        """Mark ``old_id`` as replaced by ``new_id`` (a correction); the old entry is kept."""
        ...

    def superseded(self, ids: Sequence[int]) -> dict[int, int]:
        """For those of ``ids`` that a later entry superseded, the id of the entry that did."""
        ...

    def count_entries_between(self, start: str, end: str) -> int:
        """Entries written in ``[start, end)`` (ISO UTC): how selective a prompt's time window is."""
        ...

    def entry_ids_between(self, start: str, end: str, types: Sequence[str] | None = None, limit: int = 50) -> list[int]:
        """Ids of the entries written in ``[start, end)`` (ISO UTC), of ``types`` when given, newest
        first, at most ``limit``: what a prompt that asks by time alone ("what did we decide
        yesterday?") is answered from."""
        ...

    def successor_of(self, entry_id: int) -> int | None:
        """The newest entry along ``entry_id``'s supersession chain; ``None`` when nothing replaced
        it. Must terminate on a cycle."""
        ...

    def unsupersede(self, entry_id: int) -> None:
        """Entries that ``entry_id`` superseded become current again (it is being forgotten)."""
        ...

    def entry_version(self, entry_id: int) -> EntryVersion | None:
        """The entry with its ``superseded_by`` pointer, or ``None``."""
        ...

    def superseded_by_entry(self, entry_id: int) -> list[EntryVersion]:
        """The entries ``entry_id`` directly replaced, oldest id first."""
        ...

    def list_versions(
        self, *, types: Sequence[str] = (), since: str | None = None, until: str | None = None,
        limit: int | None = None, include_superseded: bool = True, project: str | None = None,
    ) -> list[EntryVersion]:
        """Entries newest first (``created_at`` then id), filtered by type and inclusive ISO
        ``created_at`` bounds; ``limit=None`` means all. ``project``: only entries written from
        that project, and those of no recorded project."""
        ...


class FullText(Protocol):
    """Word, trigram and CJK indexes. Every score is higher-is-better and positive."""

    def fts_search(self, expression: str, limit: int) -> list[tuple[int, float]]:
        """``(entry id, score)`` for an FTS5-syntax expression over content, type and thread
        context (porter-stemmed words), best first. A malformed expression raises ``StoreError``."""
        ...

    def cue_search(self, expression: str, limit: int) -> list[tuple[int, float]]:
        """``(entry id, score)`` for the same expression over the entries' recall cues (metadata
        ``when``), best first: a word index of its own, so :meth:`term_document_frequency` stays
        that of the entries' own words."""
        ...

    def cue_documents_up_to(self, text: str, limit: int) -> int:
        """How many entries' recall cues contain ``text`` (a word or a phrase), counted no further
        than ``limit`` — :meth:`documents_up_to` for the cue index: on a big store the full-text
        channel leaves out of the cue search the words most cues hold (``text.common_terms``)."""
        ...

    def trigram_search(self, expression: str, limit: int) -> list[tuple[int, float]]:
        """``(entry id, score)`` for a trigram-index expression (substrings of ≥ 3 characters)."""
        ...

    def cjk_search(self, expression: str, limit: int) -> list[tuple[int, float]]:
        """``(entry id, score)`` for a CJK unigram/bigram expression (see ``store.cjk``)."""
        ...

    def like_search(self, terms: Sequence[str], limit: int) -> list[tuple[int, float]]:
        """Entries containing each short term literally; the score is how many terms matched."""
        ...

    def term_document_frequency(self, stem: str) -> int:
        """How many entries contain the stemmed term (the relevance gate's rarity statistic)."""
        ...

    def documents_up_to(self, text: str, limit: int) -> int:
        """How many entries contain ``text`` — a word, or words in sequence (a phrase), as written:
        the store tokenises and stems it as its full text does —, counted no further than
        ``limit``: ``min(documents, limit)``. Its cost is bounded by
        ``limit`` whatever the store's size, where an exact count reads the word's whole posting
        list (a common word at 10⁶: ≈ 10-50 ms each; ``text.common_terms``)."""
        ...

    def entries_holding(self, words: Sequence[str], limit: int) -> list[int]:
        """Ids of the entries whose content holds every one of ``words`` (each tokenised and
        stemmed as full text is; a store may also match them in the type or thread context),
        oldest first, no more than ``limit``. Unranked: the cost is bounded by ``limit`` and the
        rarest word's postings, where a ranked search reads every word's whole posting list."""
        ...

    def begin_secure_delete(self) -> None:
        """From now on, deleted text must not stay readable in the store's files (freed pages zeroed)."""
        ...

    def purge_deleted_text(self) -> None:
        """Make deleted entries' words unrecoverable: merge index segments, empty any write-ahead log."""
        ...
