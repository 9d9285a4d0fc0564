"""The vector and work-queue parts of the :class:`~crib_plugin.store.base.Store` contract.

A *vector space* is one embedder identity (its key, e.g. ``minilm:384``) with a fixed dimension;
the backend names its storage with an opaque handle (``table``) that callers pass back and never
parse. Vectors cross the contract as little-endian float32 ``bytes``; spaces never mix dimensions.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from contextlib import AbstractContextManager
from typing import Any, Protocol


class Vectors(Protocol):
    """Per-embedder vector spaces with cosine search."""

    def vector_space(self, key: str) -> tuple[str, int] | None:
        """``(handle, dim)`` of the space for embedder ``key``, or ``None`` before its first vector."""
        ...

    def vector_spaces(self) -> dict[str, tuple[str, int]]:
        """Every space: embedder key → ``(handle, dim)``."""
        ...

    def ensure_vector_space(self, key: str, dim: int) -> str:
        """Create (once, race-free across processes) the space for ``key``; returns its handle.
        A second call with another ``dim`` returns the existing space unchanged."""
        ...

    def put_vector(self, table: str, entry_id: int, vector: bytes) -> None:
        """Store (or replace) one entry's float32 vector. Inside a transaction. A vector whose
        length does not match the space's dimension raises ``StoreError`` and stores nothing."""
        ...

    def delete_vector(self, table: str, entry_id: int) -> None:
        """Remove an entry's vector from one space (its recall cue was cleared). Call inside a transaction."""
        ...

    def vector_search(self, table: str, vector: bytes, k: int) -> list[tuple[int, float]]:
        """The ``k`` nearest entries as ``(entry id, cosine distance)``, nearest first
        (0 = same direction, 2 = opposite)."""
        ...

    def vector_similarities(self, table: str, ids: Sequence[int]) -> tuple[list[int], list[list[float]]]:
        """``(have, sims)``: the ids with a vector (given order, repeats dropped) and their pairwise
        cosine similarities (1.0 on the diagonal, 0.0 against an all-zero vector)."""
        ...

    def stored_vectors(self, table: str, ids: Sequence[int]) -> dict[int, bytes]:
        """The stored float32 blobs of ``ids`` (ids without a vector are absent)."""
        ...

    def prefetch_vectors(self, table: str, ids: Sequence[int]) -> None:
        """Read the vectors of ``ids`` ahead for the next :meth:`stored_vectors` call only (a
        backend may make this a no-op); what was read must never outlive a write."""
        ...

    def plan_search_ahead(self, table: str) -> dict[str, Any] | None:
        """What a prefetch worker needs (picklable) to run the next k-NN search of ``table`` in its
        own process, or None when this backend searches only itself (then :meth:`search_ahead` is
        never called)."""
        ...

    def search_ahead(self, table: str, planned: dict[str, Any], fetch: Callable[[bytes], Any]) -> None:
        """Let the next :meth:`vector_search` of ``table`` use ``fetch(vector)`` — the worker's
        ranking for ``planned`` — when nothing it depends on has moved since; same results."""
        ...

    def all_vectors(self, table: str) -> list[tuple[int, bytes]]:
        """Every ``(entry id, blob)`` of a space (``crib calibrate``)."""
        ...

    def vector_count(self, table: str) -> int:
        """How many vectors the space holds."""
        ...

    def entries_without_vector(self, table: str, with_metadata: str | None = None) -> list[int]:
        """Ids of entries with no vector in the space, ascending (what ``crib reindex`` embeds);
        with ``with_metadata``, only those whose metadata holds that key (a recall cue's ``when``)."""
        ...

    def claim_without_vector(
        self, table: str, limit: int, after: int = 0, with_metadata: str | None = None
    ) -> AbstractContextManager[list[int]]:
        """A context yielding the next batch of :meth:`entries_without_vector` (at most ``limit``
        ids above ``after``, ascending) for ``crib reindex`` to embed; its vectors are put inside
        (in a nested :meth:`transaction`), and leaving the context commits them.

        A backend with concurrent writers claims the batch for the context's lifetime, so a second
        reindexer skips it and takes the next one (PostgreSQL: one transaction, ``FOR UPDATE SKIP
        LOCKED``); one where writers take turns anyway (SQLite) may simply yield the next batch."""
        ...


class WorkQueue(Protocol):
    """Deferred work per entry: embeddings per space, and fact extraction (space ``"extract"``)."""

    def queue_embedding(self, entry_id: int, space: str, reason: str) -> None:
        """Queue ``entry_id`` for ``space`` (an embedder key, or ``"extract"``); queuing twice keeps
        one row with the latest reason."""
        ...

    def pending(self, space: str | None = None) -> list[int]:
        """Queued entry ids, ascending: for ``space``, or for every embedding space when ``None``
        (never the extraction queue then)."""
        ...

    def clear_pending(self, entry_id: int, space: str) -> None:
        """Drop one queued item (done, or no longer wanted)."""
        ...

    def clear_embedded_pending(self, table: str) -> None:
        """Drop queued embeddings of every entry that now has a vector in the space ``table``."""
        ...

    def pending_counts(self) -> dict[str, int]:
        """Queued work per kind: ``embedding:<space>`` and ``extraction``."""
        ...


def to_blob(vector: Any) -> bytes:
    """float32 little-endian bytes, the format vec0 expects.

    Bytes pass through untouched: that is how a vector arrives from the prefetch worker
    (:mod:`crib_plugin.read.prefetch`), and it keeps numpy out of a process that never embeds.
    """
    if isinstance(vector, (bytes, bytearray, memoryview)):
        return bytes(vector)
    # deferred: the SessionStart hook would import numpy up front (933 ms)
    import numpy as np

    return np.asarray(vector, dtype="<f4").tobytes()
