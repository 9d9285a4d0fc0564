"""Vector statements for the SQLite store: one sqlite-vec ``vec0`` table per embedder identity.

A mixin of :class:`~crib_plugin.store.sqlite.SQLiteStore`: spaces, putting vectors, k-NN search,
similarities for given ids, and read-ahead of stored vectors (``prefetch_vectors``).
"""

from __future__ import annotations

from collections.abc import Iterator, Sequence
from contextlib import contextmanager
from typing import TYPE_CHECKING, Any, Callable

from ..core.errors import CribError
from ..core.timeutil import now_iso
from . import (
    vector_index,  # 0.5 ms: json, os and pathlib; numpy only once an index is opened
    vector_index_ahead,
)
from .sqlite_rows import space_table

if TYPE_CHECKING:  # pragma: no cover
    from contextlib import AbstractContextManager


class VectorsMixin:
    """Vector statements for the SQLite store: one sqlite-vec ``vec0`` table per embedder identity."""

    if TYPE_CHECKING:  # provided by SQLiteStore

        _vectors_ahead: tuple[str, dict[int, bytes]]
        _search_ahead: dict[str, tuple[dict[str, Any], Callable[[bytes], Any]]]

        def _forget_reads(self) -> None: ...
        def execute(self, sql: str, bindings: Sequence[Any] | dict[str, Any] = ()) -> list[tuple[Any, ...]]: ...
        def transaction(self) -> AbstractContextManager[None]: ...
        def load_vec(self) -> None: ...

    # -- vectors ---------------------------------------------------------------------------

    def vector_space(self, key: str) -> tuple[str, int] | None:
        """The vec0 table and dimension for an embedder identity, if vectors exist for it."""
        rows = self.execute("SELECT table_name, dim FROM vector_spaces WHERE key = ?", (key,))
        return (str(rows[0][0]), int(rows[0][1])) if rows else None

    def vector_spaces(self) -> dict[str, tuple[str, int]]:
        return {str(k): (str(t), int(d)) for k, t, d in self.execute("SELECT key, table_name, dim FROM vector_spaces")}

    def ensure_vector_space(self, key: str, dim: int) -> str:
        """Create (once) the cosine vec0 table for an embedder identity and return its name.

        Checked again under the write lock: two first writers must not both create it.
        """
        existing = self.vector_space(key)
        if existing:
            return existing[0]
        self.load_vec()
        table = space_table(key)
        with self.transaction():
            existing = self.vector_space(key)
            if existing:
                return existing[0]
            self.execute(f"CREATE VIRTUAL TABLE IF NOT EXISTS {table} USING vec0(embedding float[{int(dim)}] distance_metric=cosine)")
            self.execute(
                "INSERT INTO vector_spaces(key, table_name, dim, created_at) VALUES (?, ?, ?, ?)",
                (key, table, int(dim), now_iso()),
            )
        return table

    def put_vector(self, table: str, entry_id: int, vector: bytes) -> None:
        """Store one float32 vector for an entry (replacing any). Call inside a transaction."""
        self.load_vec()
        self._forget_reads()  # never serve a blob read before this write
        top = self.execute(f"SELECT max(rowid) FROM {table}_rowids")[0][0]
        if top is not None and int(entry_id) <= int(top):
            # A replaced vector, or one below the highest id: the side index's tail cannot see
            # it, so its generation moves on and an older index is never used (vector_index).
            self.execute(
                "INSERT INTO settings(key, value) VALUES (?, '1') "
                "ON CONFLICT(key) DO UPDATE SET value = CAST(value AS INTEGER) + 1",
                (f"vector_generation:{table}",),
            )
        self.execute(f"DELETE FROM {table} WHERE rowid = ?", (entry_id,))
        self.execute(f"INSERT INTO {table}(rowid, embedding) VALUES (?, ?)", (entry_id, vector))

    def delete_vector(self, table: str, entry_id: int) -> None:
        self.load_vec()
        self._forget_reads()
        self.execute(f"DELETE FROM {table} WHERE rowid = ?", (entry_id,))

    def vector_search(self, table: str, vector: bytes, k: int) -> list[tuple[int, float]]:
        """The ``k`` nearest entries by cosine distance (0 = same direction, 2 = opposite).

        On a big store through the side index beside the database when it is current
        (:mod:`.vector_index`: binary codes, then exact rescoring), else :meth:`exact_vector_search`.
        A search handed to the prefetch worker (:meth:`search_ahead`) is used once, if still valid."""
        ahead = self._search_ahead.pop(table, None)
        if ahead is not None:
            found = vector_index_ahead.take(self, table, vector, k, *ahead)  # type: ignore[arg-type]  # a mixin of SQLiteStore
            if found is not None:
                return found
        return vector_index.search(self, table, vector, k)  # type: ignore[arg-type]  # a mixin of SQLiteStore

    def plan_search_ahead(self, table: str) -> dict[str, Any] | None:
        """What a prefetch worker needs to run ``table``'s side-index search (picklable), or None
        when there is no current index to search (:func:`.vector_index_ahead.plan`; no numpy)."""
        return vector_index_ahead.plan(self, table)  # type: ignore[arg-type]  # a mixin of SQLiteStore

    def search_ahead(self, table: str, planned: dict[str, Any], fetch: Callable[[bytes], Any]) -> None:
        """The next :meth:`vector_search` of ``table`` takes its ranking from ``fetch`` (the
        worker's answer for the vector it is given) when ``planned`` still holds."""
        self._search_ahead[table] = (planned, fetch)

    def refresh_vector_index(self, table: str) -> str:
        """After a committed write: bring the side index of ``table`` up to date (append its tail,
        or rebuild it when missing or stale on a big store). Never fails the write: a problem
        leaves the index as it is, and searches use the exact scan while it is not current."""
        # deferred: the SessionStart hook would import numpy up front (943 ms)
        from . import vector_index_build

        try:
            return vector_index_build.refresh(self, table)  # type: ignore[arg-type]  # a mixin of SQLiteStore
        except (CribError, OSError, ValueError):
            return "failed"

    def exact_vector_search(self, table: str, vector: bytes, k: int) -> list[tuple[int, float]]:
        """sqlite-vec's exact k-NN: a brute-force float32 scan of the whole space."""
        self.load_vec()
        rows = self.execute(
            f"SELECT rowid, distance FROM {table} WHERE embedding MATCH ? AND k = ? ORDER BY distance",
            (vector, int(k)),
        )
        return [(int(r[0]), float(r[1])) for r in rows]

    def vector_similarities(self, table: str, ids: Sequence[int]) -> tuple[list[int], list[list[float]]]:
        """Pairwise cosine similarity of the stored vectors of ``ids``, computed inside SQLite.

        Returns ``(have, sims)``: ``have`` is the ids that have a vector in ``table`` (in the order
        given, repeats dropped) and ``sims[i][j]`` the cosine similarity of ``have[i]`` and
        ``have[j]`` (``1 − vec_distance_cosine``; 1.0 on the diagonal; 0.0 when either vector is
        all zeros, which has no direction). The offline reranker calls this for at most 60 ids.

        Why here and like this: the per-prompt process must not import numpy (≈120 ms), so the
        arithmetic runs in sqlite-vec's C code. The vectors are fetched with one point lookup per
        id (``WHERE rowid = ?``), in id order so neighbouring lookups share cached pages, because
        vec0 answers ``rowid IN (...)`` with a scan of the whole table. The fetched blobs are bound
        into one ``VALUES`` list and self-joined, so nothing is written, not even to the temp
        schema. ``O(len(ids)²)`` distance calls: meant for small sets.
        """
        wanted = list(dict.fromkeys(int(i) for i in ids))
        blobs = self.stored_vectors(table, wanted)
        have = [i for i in wanted if i in blobs]
        position = {entry_id: k for k, entry_id in enumerate(have)}
        sims = [[0.0] * len(have) for _ in have]
        for k in range(len(have)):
            sims[k][k] = 1.0
        if len(have) < 2:
            return have, sims
        values = ",".join("(?, ?)" for _ in have)
        bindings: list[Any] = []
        for entry_id in have:
            bindings += [entry_id, blobs[entry_id]]
        rows = self.execute(
            f"WITH v(id, e) AS (VALUES {values}) "
            "SELECT a.id, b.id, vec_distance_cosine(a.e, b.e) FROM v AS a JOIN v AS b ON a.id < b.id",
            bindings,
        )
        for a, b, distance in rows:
            # A zero vector gives NULL (sqlite-vec's 0/0 is NaN, which SQLite returns as NULL): 0.0.
            similarity = 1.0 - float(distance) if distance is not None else 0.0
            if similarity != similarity:  # NaN, should a build return it as a float
                similarity = 0.0
            i, j = position[int(a)], position[int(b)]
            sims[i][j] = sims[j][i] = similarity
        return have, sims

    def stored_vectors(self, table: str, ids: Sequence[int]) -> dict[int, bytes]:
        """The stored float32 blobs of ``ids`` in ``table`` (ids without a vector are absent).

        One point lookup per id (``WHERE rowid = ?``), in id order so neighbouring lookups share
        cached pages: vec0 answers ``rowid IN (...)`` with a scan of the whole table. Blobs read
        ahead by :meth:`prefetch_vectors` are used once, then forgotten.
        """
        self.load_vec()
        ahead_table, ahead = self._vectors_ahead
        self._vectors_ahead = ("", {})
        wanted = sorted(set(int(i) for i in ids))
        blobs: dict[int, bytes] = {i: ahead[i] for i in wanted if ahead_table == table and i in ahead}
        wanted = [i for i in wanted if i not in blobs]
        if wanted and len(wanted) > 4:
            # A point read from vec0 costs its whole 1024-vector chunk: on a big store the side
            # index's copy is read instead when it is current (vector_index.read_vectors).
            indexed = vector_index.read_vectors(self, table, wanted)  # type: ignore[arg-type]  # a mixin of SQLiteStore
            if indexed:
                blobs.update(indexed)
                wanted = [i for i in wanted if i not in indexed]
        blobs.update(self.point_vectors(table, wanted))
        return blobs

    def point_vectors(self, table: str, ids: Sequence[int]) -> dict[int, bytes]:
        """The stored blobs of ``ids`` read from sqlite-vec, one point lookup per id."""
        self.load_vec()
        blobs: dict[int, bytes] = {}
        for entry_id in sorted(set(int(i) for i in ids)):
            rows = self.execute(f"SELECT embedding FROM {table} WHERE rowid = ?", (entry_id,))
            if rows and rows[0][0] is not None:
                blobs[entry_id] = rows[0][0]
        return blobs

    def prefetch_vectors(self, table: str, ids: Sequence[int]) -> None:
        """Read the vectors of ``ids`` now, for the next :meth:`stored_vectors` call only.

        A cold ``crib retrieve`` calls it while its prefetch worker is still embedding the prompt
        (:mod:`crib_plugin.read.prefetch`), for the full-text and fact hits the reranker will compare.
        """
        blobs = self.stored_vectors(table, ids)
        self._vectors_ahead = (table, blobs)

    def vector_count(self, table: str) -> int:
        self.load_vec()
        return int(self.execute(f"SELECT count(*) FROM {table}")[0][0])

    def entries_without_vector(self, table: str, with_metadata: str | None = None) -> list[int]:
        return self._without_vector(table, with_metadata)

    @contextmanager
    def claim_without_vector(self, table: str, limit: int, after: int = 0, with_metadata: str | None = None) -> Iterator[list[int]]:
        """The next batch, unclaimed: SQLite writers take turns, and holding its write lock while
        the batch is embedded would stall every hook's write for that long."""
        yield self._without_vector(table, with_metadata, after, limit)

    def _without_vector(self, table: str, with_metadata: str | None, after: int = 0, limit: int = -1) -> list[int]:
        self.load_vec()
        having = " AND json_extract(metadata, '$.' || ?) IS NOT NULL" if with_metadata else ""
        rows = self.execute(
            f"SELECT id FROM entries WHERE id > ? AND id NOT IN (SELECT rowid FROM {table}){having} ORDER BY id LIMIT ?",
            (after, *((with_metadata,) if with_metadata else ()), limit),
        )
        return [int(r[0]) for r in rows]
