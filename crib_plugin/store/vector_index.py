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
from collections.abc import Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Any, Protocol

import apsw

if TYPE_CHECKING:  # pragma: no cover
    from .vector_codes import Index


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
APPEND_AT = 16
"""Tail length at which a writer appends the tail to the files."""
TAIL_MAX = 512
"""A longer tail is not searched through the index (the file is overdue for a refresh): exact scan."""


def index_path(db: Path, table: str) -> Path:
    return Path(f"{db}-vecindex") / f"{table}.codes"


def generation_key(table: str) -> str:
    return f"vector_generation:{table}"


def generation(store: "SQLiteStore", table: str) -> int:
    return int(store.get_setting(generation_key(table), "0") or 0)


_opened: dict[Path, tuple[tuple[int, int, int], "Index"]] = {}
"""Indexes opened by this process, by path, with the file's (inode, size, mtime) when opened."""


def open_index(path: Path) -> "Index | None":
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
    # The rescoring's one (2,500 x 384) product: waking OpenBLAS's thread pool for it cost 10-12 ms
    # on a loaded 2-core machine, one thread 0.1 ms (same sums, row by row). OpenBLAS reads the
    # variable when numpy loads it, so it is set only around a process's first numpy import (a
    # reader's) and not left to its children.
    one_thread = "numpy" not in sys.modules and "OPENBLAS_NUM_THREADS" not in os.environ
    if one_thread:
        os.environ["OPENBLAS_NUM_THREADS"] = "1"
    try:
        # deferred: numpy (the index's memory mapping and search), only once an index file is there:
        # a store below MIN_VECTORS has none, and the hooks then never import numpy in their process
        from . import vector_codes
    finally:
        if one_thread:
            del os.environ["OPENBLAS_NUM_THREADS"]
    index = vector_codes.Index.open(path)
    if index is None:
        _opened.pop(path, None)
    else:
        _opened[path] = (version, index)
    return index


def usable_index(store: "SQLiteStore", table: str, dim: int) -> "Index | None":
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
    ranked, fresh = index.rank(vector, k, [i for i in tail if i in blobs], blobs)
    return _nearest_alive(store, table, ranked, fresh, k)


def _nearest_alive(store: "SQLiteStore", table: str, ranked: list[tuple[int, float]], alive: set[int], k: int) -> list[tuple[int, float]]:
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


def read_vectors(store: "SQLiteStore", table: str, ids: Sequence[int]) -> dict[int, bytes] | None:
    """The float32 blobs of those of ``ids`` the current index holds and the database still has
    (a point read from sqlite-vec costs a whole 1024-vector chunk); None without a current index."""
    index = current_index(store, table)
    if index is None:
        return None
    at = index.positions(ids)
    live = _live(store, table, list(at))
    return {i: index.floats[p].tobytes() for i, p in at.items() if i in live}


def current_index(store: "SQLiteStore", table: str) -> "Index | None":
    """:func:`usable_index` for ``table`` at its recorded dimension; None without a current one.

    A cold ``crib retrieve`` calls it while its prefetch worker is still embedding the prompt
    (``prefetch_vectors``): numpy's import and the files' mapping (≈ 100-200 ms of a big store's
    retrieve, loaded 2-core machine) then overlap the worker instead of following its answer."""
    dim = store.execute("SELECT dim FROM vector_spaces WHERE table_name = ?", (table,))
    return usable_index(store, table, int(dim[0][0])) if dim else None
