"""A side index for k-NN on big stores: binary codes memory-mapped beside the database, rebuilt from it.

Why: sqlite-vec answers a k-NN query with a float32 brute-force scan whose cost is linear in the
store (≈ 5 ms at 10⁴ vectors, ≈ 50 ms at 10⁵, ≈ 420 ms at 10⁶ on this machine; ``bench/scale.py``).
Its own quantised tables do not help enough: a ``bit[384]`` table scans fast but its top-k keeps
only k = 10 cheap (k = 200 costs more than the float scan at 2·10⁵), and ``int8`` is slower than
float. So above :data:`MIN_VECTORS` vectors crib keeps, per vector space, one file
``<db>-vecindex/<table>.codes``: a 256-byte JSON header, then one record per vector in ascending id
order — the entry id (int64) and the sign bits of the vector (``dim/8`` bytes) — and beside it
``<table>.floats``, the same vectors as float32 in the same order (a point read from sqlite-vec
costs its whole 1024-vector chunk, ≈ 1.5 MB, so rescoring cannot read them there). A query

1. takes the :data:`CANDIDATES` records nearest by Hamming distance (``numpy.bitwise_count`` over
   the memory-mapped codes: 48 MB at 10⁶, a few ms),
2. adds every vector the database holds past the index (the *tail*: entries written after the
   index was last brought up to date, found by id through sqlite-vec's rowid table), and
3. rescores all of them with their exact float vectors (the ``.floats`` copy; the tail's from the
   database), returning the k nearest by cosine distance — the distances the exact search returns.
   Candidates whose entry was deleted since (no row in sqlite-vec's rowid table) drop out.

**The database stays the one source of truth.** The header is stamped with the space's
*generation* (a counter in ``settings`` that :meth:`~.sqlite_vectors.VectorsMixin.put_vector` bumps
whenever it replaces a vector or writes one below the highest id: anything the tail cannot see) and
the highest id it covers. A missing, truncated or unreadable file, another dimension, or another
generation is never used: the query falls back to the exact scan. A deleted entry needs no bump —
its id no longer has a vector, so rescoring drops it. Writers keep the file current
(:func:`refresh`, after each write batch): they append the tail once it reaches :data:`APPEND_AT`
and rebuild the whole file when it is missing, stale or corrupt (seconds at 10⁶). A reader never
writes it.

Approximation: a true neighbour is missed only when it is not among the :data:`CANDIDATES` nearest
codes; ``bench/scale.py --recall`` measures recall@10 against the exact scan.
"""

from __future__ import annotations

import os
import sys
import weakref
from collections.abc import Sequence
from pathlib import Path
from typing import Any, Protocol

import apsw

from .vector_index_file import FORMAT, HEADER, IndexFile, floats_path, index_path, parse_header, read_header

__all__ = ["FORMAT", "HEADER", "Index", "IndexFile", "floats_path", "index_path", "read_header"]


class SQLiteStore(Protocol):
    """What the index needs of the SQLite store (a Protocol: this module is imported by it)."""

    path: Path
    readonly: bool
    conn: apsw.Connection

    def execute(self, sql: str, bindings: Sequence[Any] = ()) -> list[tuple[Any, ...]]: ...
    def get_setting(self, key: str, default: str | None = None) -> str | None: ...
    def load_vec(self) -> None: ...
    def exact_vector_search(self, table: str, vector: bytes, k: int) -> list[tuple[int, float]]: ...
    def point_vectors(self, table: str, ids: Sequence[int]) -> dict[int, bytes]: ...

MIN_VECTORS = 50_000
"""Below this many vectors the exact scan is already fast (≈ 25 ms) and no index is kept."""
CANDIDATES = 512
"""Records taken by Hamming distance and rescored exactly (recall, ``bench/scale.py --recall``)."""
PER_CANDIDATE = 400
"""...and at least one candidate per this many vectors (2,500 at 10⁶): ``bench/scale.py --recall``
measured recall@10 99.1 % at 10⁵ but 84.9 % at 10⁶ with 512 alone."""
APPEND_AT = 16
"""Tail length at which a writer appends the tail to the files."""
TAIL_MAX = 512
"""A longer tail is not searched through the index (the file is overdue for a refresh): exact scan."""

def generation_key(table: str) -> str:
    return f"vector_generation:{table}"


def generation(store: "SQLiteStore", table: str) -> int:
    return int(store.get_setting(generation_key(table), "0") or 0)


def record_dtype(dim: int) -> Any:
    # deferred: the UserPromptSubmit hook would import it up front (921 ms)
    import numpy as np

    return np.dtype([("id", "<i8"), ("code", "u1", (dim // 8,))])


def sign_codes(vectors: Any) -> Any:
    # deferred: the UserPromptSubmit hook would import it up front (921 ms)
    import numpy as np

    return np.packbits(vectors > 0, axis=1)


class Index:
    """One opened index: its header, its memory-mapped records (id and sign bits, ascending id)
    and the float32 vectors in the same order (read-only)."""

    def __init__(self, header: dict[str, Any], records: Any, floats: Any, words: Any = None, floats_fd: int | None = None) -> None:
        self.header = header
        self.records = records
        self.floats = floats
        self.words = words  # the records as uint64 words (no copy), when they are whole words
        self.floats_fd = floats_fd  # the float file this index mapped (its own descriptor), for read_rows
        if floats_fd is not None:
            weakref.finalize(self, os.close, floats_fd)

    def read_rows(self, positions: Sequence[int]) -> bytes | None:
        """The float32 vectors at ``positions`` as one buffer, read with one ``pread`` each from
        the file this index mapped; None when that cannot be done (then index :attr:`floats`).

        Why not the mapping: 2,500 scattered rows (a 10⁶ search's candidates) cost 30-95 ms of
        page faults through it and 16-50 ms by ``pread`` on the loaded 2-core machine — the same
        bytes."""
        if self.floats_fd is None:
            return None
        size = 4 * int(self.header["dim"])
        try:
            data = b"".join(os.pread(self.floats_fd, size, HEADER + int(p) * size) for p in positions)
        except OSError:
            return None
        return data if len(data) == size * len(positions) else None

    @property
    def max_rowid(self) -> int:
        return int(self.header["max_rowid"])

    @classmethod
    def open(cls, path: Path) -> "Index | None":
        """The index at ``path``, or None when either file is missing, truncated, of another
        build or not an index. numpy is imported only once a header is read: a small store (no
        file) never pays for it."""
        try:
            with open(path, "rb") as handle, open(floats_path(path), "rb") as vectors:
                header = parse_header(handle.read(HEADER), vectors.read(HEADER))
                if header is None:
                    return None
                # The rescoring's one (2,500 x 384) product: waking OpenBLAS's thread pool for it
                # cost 10-12 ms on a loaded 2-core machine, one thread 0.1 ms (same sums, row by
                # row). OpenBLAS reads the variable when numpy loads it, so it is set only around
                # a process's first numpy import (a reader's) and not left to its children.
                one_thread = "numpy" not in sys.modules and "OPENBLAS_NUM_THREADS" not in os.environ
                if one_thread:
                    os.environ["OPENBLAS_NUM_THREADS"] = "1"
                try:
                    # deferred: the UserPromptSubmit hook would import it up front (921 ms)
                    import numpy as np
                finally:
                    if one_thread:
                        del os.environ["OPENBLAS_NUM_THREADS"]

                dim, count = int(header["dim"]), int(header["count"])
                record = record_dtype(dim)
                if dim % 8 or os.fstat(handle.fileno()).st_size < HEADER + count * record.itemsize:
                    return None
                if os.fstat(vectors.fileno()).st_size < HEADER + count * dim * 4:
                    return None
                if not count:
                    return cls(header, np.zeros(0, record), np.zeros((0, dim), "<f4"))
                records = np.memmap(handle, dtype=record, mode="r", offset=HEADER, shape=(count,))
                if record.itemsize % 8 == 0:  # the same bytes as 64-bit words: column 0 the id, then the code
                    words = np.memmap(handle, dtype="<u8", mode="r", offset=HEADER, shape=(count, record.itemsize // 8))
                    floats = np.memmap(vectors, dtype="<f4", mode="r", offset=HEADER, shape=(count, dim))
                    return cls(header, records, floats, words, os.dup(vectors.fileno()))
                floats = np.memmap(vectors, dtype="<f4", mode="r", offset=HEADER, shape=(count, dim))
                return cls(header, records, floats)
        except (OSError, ValueError, KeyError, TypeError, UnicodeDecodeError):
            return None

    def positions(self, ids: Sequence[int]) -> dict[int, int]:
        """Where each of ``ids`` is in the index (ids it does not hold are absent)."""
        # deferred: the UserPromptSubmit hook would import it up front (921 ms)
        import numpy as np

        if not len(self.records) or not ids:
            return {}
        wanted = np.asarray(sorted(set(int(i) for i in ids)), dtype="<i8")
        held = self.records["id"]
        at = np.minimum(np.searchsorted(held, wanted), len(held) - 1)
        found = held[at] == wanted
        return {int(i): int(p) for i, p in zip(wanted[found], at[found])}


_opened: dict[Path, tuple[tuple[int, int, int], Index]] = {}
"""Indexes opened by this process, by path, with the file's (inode, size, mtime) when opened."""


def open_index(path: Path) -> Index | None:
    """:meth:`Index.open`, once per file version in this process (a rebuilt or appended file has
    another inode, size or mtime and is opened again)."""
    try:
        info = os.stat(path)
    except OSError:
        _opened.pop(path, None)
        return None
    version = (info.st_ino, info.st_size, info.st_mtime_ns)
    cached = _opened.get(path)
    if cached is not None and cached[0] == version:
        return cached[1]
    index = Index.open(path)
    if index is None:
        _opened.pop(path, None)
    else:
        _opened[path] = (version, index)
    return index


def usable_index(store: "SQLiteStore", table: str, dim: int) -> Index | None:
    """The side index of ``table`` if it is there, readable, of this dimension and of the space's
    current generation; else None (the caller scans exactly)."""
    index = open_index(index_path(store.path, table))
    if index is None or int(index.header["dim"]) != dim or index.header.get("table") != table:
        return None
    if int(index.header["generation"]) != generation(store, table):
        return None
    return index


def tail_ids(store: "SQLiteStore", table: str, after: int, limit: int) -> list[int]:
    rows = store.execute(f"SELECT rowid FROM {table}_rowids WHERE rowid > ? ORDER BY rowid LIMIT ?", (after, limit))
    return [int(r[0]) for r in rows]


def search(store: "SQLiteStore", table: str, vector: bytes, k: int) -> list[tuple[int, float]]:
    """The ``k`` nearest entries as ``(id, cosine distance)``, nearest first: through the side index
    when one is current, else sqlite-vec's exact scan (:meth:`vector_search`)."""
    dim = len(vector) // 4
    index = usable_index(store, table, dim) if dim and dim % 8 == 0 else None
    if index is None:
        return store.exact_vector_search(table, vector, k)
    tail = tail_ids(store, table, index.max_rowid, TAIL_MAX + 1)
    if len(tail) > TAIL_MAX:
        return store.exact_vector_search(table, vector, k)
    blobs = store.point_vectors(table, tail) if tail else {}
    ranked = rank(index, vector, candidate_count(len(index.records), k), [(i, blobs[i]) for i in tail if i in blobs])
    return nearest_alive(store, table, ranked, {i for i in tail if i in blobs}, k)


def candidate_count(vectors: int, k: int) -> int:
    """How many records a k-NN query over an index of ``vectors`` takes by Hamming distance."""
    return max(CANDIDATES, 4 * k, vectors // PER_CANDIDATE)


def rank(index: Index, vector: bytes, count: int, tail: Sequence[tuple[int, bytes]]) -> list[tuple[int, float]]:
    """The ``count`` records nearest ``vector`` by Hamming distance, and the ``tail``'s vectors
    (``(id, blob)``, read from the database), all ranked by exact cosine distance, nearest first.
    No database access: the prefetch worker runs it too (:mod:`.vector_index_ahead`)."""
    # deferred: the UserPromptSubmit hook would import it up front (921 ms)
    import numpy as np

    dim = int(index.header["dim"])
    query = np.frombuffer(vector, dtype="<f4")
    picked = np.sort(candidates(index, query, count))
    rows = index.read_rows(picked) if len(picked) else b""
    if rows is not None:
        matrix = np.frombuffer(rows, dtype="<f4").reshape(len(picked), dim)
    else:
        matrix = np.asarray(index.floats[picked])
    have = [int(i) for i in index.records["id"][picked]]
    if tail:
        have += [i for i, _blob in tail]
        matrix = np.vstack([matrix, np.frombuffer(b"".join(blob for _i, blob in tail), dtype="<f4").reshape(len(tail), dim)])
    return nearest_of(query, have, matrix, len(have))


def nearest_alive(store: "SQLiteStore", table: str, ranked: list[tuple[int, float]], alive: set[int], k: int) -> list[tuple[int, float]]:
    """The first ``k`` of ``ranked`` whose entry still has a vector (one deleted since the index
    was written drops out). Checked a few at a time from the nearest, not all candidates at once:
    2,500 lookups cost ≈ 30-80 ms at 10⁶, and deletions are rare."""
    out: list[tuple[int, float]] = []
    step = max(2 * k, 16)
    for start in range(0, len(ranked), step):
        chunk = ranked[start:start + step]
        live = alive | _live(store, table, [i for i, _d in chunk if i not in alive])
        out += [(i, d) for i, d in chunk if i in live][: k - len(out)]
        if len(out) >= k:
            break
    return out


def _live(store: "SQLiteStore", table: str, ids: Sequence[int]) -> set[int]:
    """Those of ``ids`` that still have a vector (sqlite-vec's rowid table: an indexed lookup)."""
    if not ids:
        return set()
    marks = ",".join("?" * len(ids))
    return {int(r[0]) for r in store.execute(f"SELECT rowid FROM {table}_rowids WHERE rowid IN ({marks})", list(ids))}


CHUNK_ROWS = 32_768
"""Records per block of the Hamming pass: a block's codes (≈ 1.8 MB) stay in cache across its
passes, where whole-column passes read all 56 MB of codes once per 64 bits (≈ 30 % slower at 10⁶)."""


def candidates(index: Index, query: Any, count: int) -> Any:
    """Positions of the ``count`` records whose codes are nearest ``query``'s sign bits (Hamming)."""
    # deferred: the UserPromptSubmit hook would import it up front (921 ms)
    import numpy as np

    records = index.records
    if len(records) == 0:
        return np.zeros(0, dtype=np.int64)
    code = sign_codes(query.reshape(1, -1))[0]
    if index.words is not None and code.size % 8 == 0:
        # Word by word over the mapped records (no copy of the codes; column 0 is the id), one
        # block of rows at a time, added up in uint16 — 6 passes per block for 384 dimensions.
        query_words = code.view("<u8")
        distance = np.empty(len(records), dtype=np.uint16)
        for start in range(0, len(records), CHUNK_ROWS):
            block = index.words[start:start + CHUNK_ROWS]
            total = np.bitwise_count(block[:, 1] ^ query_words[0]).astype(np.uint16)
            for j in range(1, len(query_words)):
                total += np.bitwise_count(block[:, j + 1] ^ query_words[j])
            distance[start:start + len(block)] = total
    else:
        distance = np.bitwise_count(records["code"] ^ code).sum(axis=1, dtype=np.int32)
    if count >= len(distance):
        return np.arange(len(distance))
    return nearest_by_histogram(distance, count)


def nearest_by_histogram(distance: Any, count: int) -> Any:
    """Positions of the ``count`` smallest of ``distance`` (small non-negative integers): every
    position below the distance where the running count reaches ``count``, then the first ones at
    that distance. Two linear passes, where ``argpartition`` (introselect) took 2-20× longer at 10⁶."""
    # deferred: the UserPromptSubmit hook would import it up front (921 ms)
    import numpy as np

    running = np.cumsum(np.bincount(distance))
    limit = int(np.searchsorted(running, count))  # the smallest distance with ≥ count at or below it
    below = np.flatnonzero(distance < limit)
    at = np.flatnonzero(distance == limit)[: count - len(below)]
    return np.concatenate([below, at])


def nearest_of(query: Any, ids: Sequence[int], matrix: Any, k: int) -> list[tuple[int, float]]:
    """The ``k`` of ``ids`` (rows of ``matrix``) nearest ``query`` by cosine distance, ties by id."""
    # deferred: the UserPromptSubmit hook would import it up front (921 ms)
    import numpy as np

    if not len(ids):
        return []
    norms = np.linalg.norm(matrix, axis=1) * float(np.linalg.norm(query))
    with np.errstate(divide="ignore", invalid="ignore"):
        distance = 1.0 - (matrix @ query) / norms
    distance = np.where(np.isfinite(distance), distance, 2.0)
    order = np.lexsort((np.asarray(ids), distance))[:k]
    return [(int(ids[i]), float(distance[i])) for i in order]


def read_vectors(store: "SQLiteStore", table: str, ids: Sequence[int]) -> dict[int, bytes] | None:
    """The float32 blobs of those of ``ids`` the current index holds and the database still has
    (a point read from sqlite-vec costs a whole 1024-vector chunk); None without a current index."""
    dim = store.execute("SELECT dim FROM vector_spaces WHERE table_name = ?", (table,))
    index = IndexFile.open(index_path(store.path, table)) if dim else None
    if index is None:
        return None
    try:
        if index.dim != int(dim[0][0]) or index.header.get("table") != table or int(index.header["generation"]) != generation(store, table):
            return None
        at = index.positions(ids)
        live = sorted(_live(store, table, list(at)))
        rows = index.read_rows([at[i] for i in live])
        return dict(zip(live, rows)) if rows is not None else None
    finally:
        index.close()

