"""Writing the side vector index (:mod:`.vector_index`): refresh after a write, full rebuild, append.

Only writers import this; a reader never writes the index. The thresholds live in
:mod:`.vector_index` (``MIN_VECTORS``, ``APPEND_AT``, ``TAIL_MAX``) and are read from there at call time.
"""

from __future__ import annotations

import itertools
import json
import os
import time
from collections.abc import Sequence
from pathlib import Path
from typing import Any

import apsw
import numpy as np

from . import vector_index as vi
from .sqlite_open import store_error
from .vector_codes import FORMAT, HEADER, Index, floats_path, record_dtype, sign_codes
from .vector_index import SQLiteStore, generation, index_path, tail_ids, usable_index


def refresh(store: "SQLiteStore", table: str) -> str:
    """Bring the side index of ``table`` up to date after a write; returns what was done
    (``"none"``, ``"small"``, ``"append"``, ``"rebuild"``, ``"unwritable"``).

    Cheap when nothing is due (a header read and two indexed queries). A read-only store or
    directory is left alone: readers fall back to the exact scan."""
    if store.readonly:
        return "unwritable"
    path = index_path(store.path, table)
    dim = store.execute("SELECT dim FROM vector_spaces WHERE table_name = ?", (table,))
    if not dim:
        return "none"
    index = usable_index(store, table, int(dim[0][0]))
    try:
        if index is None:
            if not path.exists() and _count_at_least(store, table, vi.MIN_VECTORS) is False:
                return "small"
            rebuild(store, table)
            return "rebuild"
        tail = tail_ids(store, table, index.max_rowid, vi.TAIL_MAX + 1)
        if len(tail) < vi.APPEND_AT:
            return "none"
        if len(tail) > vi.TAIL_MAX:
            rebuild(store, table)
            return "rebuild"
        _append(store, table, path, index, tail)
        return "append"
    except OSError:
        return "unwritable"


def _count_at_least(store: "SQLiteStore", table: str, count: int) -> bool:
    """Whether ``table`` holds ``count`` vectors or more (ids are positive and unique, so a highest
    id below ``count`` answers at once; otherwise the rowid table is stepped, at most ``count`` rows)."""
    top = store.execute(f"SELECT max(rowid) FROM {table}_rowids")[0][0]
    if top is None or int(top) < count:
        return False
    rows = store.execute(f"SELECT rowid FROM {table}_rowids ORDER BY rowid LIMIT 1 OFFSET ?", (max(0, count - 1),))
    return bool(rows)


def _header(table: str, dim: int, count: int, gen: int, max_rowid: int, build: str) -> bytes:
    text = json.dumps({"format": FORMAT, "table": table, "dim": dim, "count": count, "generation": gen,
                       "max_rowid": max_rowid, "build": build})
    return text.encode("utf-8").ljust(HEADER, b" ")


def rebuild(store: "SQLiteStore", table: str) -> int:
    """Write the index of ``table`` afresh from the database; returns how many vectors it holds.

    Both files are written under temporary names and renamed into place, the vectors first: a
    reader holding the old codes file sees another build token in the new vectors file and scans
    exactly instead. Records are sorted by id (sqlite-vec's scan order is its chunk order)."""
    store.load_vec()
    dim = int(store.execute("SELECT dim FROM vector_spaces WHERE table_name = ?", (table,))[0][0])
    record = record_dtype(dim)
    path = index_path(store.path, table)
    path.parent.mkdir(parents=True, exist_ok=True)
    build = f"{os.getpid()}-{time.time_ns()}"
    tmp_codes, tmp_floats = (path.with_name(f".{path.name}.{build}.{part}") for part in ("codes", "floats"))
    try:
        with store.conn:  # one read transaction: the generation, the vectors and the highest id agree
            gen = generation(store, table)
            ids = _write_scan(store, table, dim, tmp_codes, tmp_floats)
        count = len(ids)
        order = np.argsort(ids, kind="stable")
        if count and not (order == np.arange(count)).all():
            _sort_files(tmp_codes, tmp_floats, record, dim, order)
        header = _header(table, dim, count, gen, int(ids.max()) if count else 0, build)
        with open(tmp_floats, "r+b") as out:
            out.write(build.encode("utf-8").ljust(HEADER, b" "))
        with open(tmp_codes, "r+b") as out:
            out.write(header)
        os.replace(tmp_floats, floats_path(path))
        os.replace(tmp_codes, path)
    finally:
        tmp_codes.unlink(missing_ok=True)
        tmp_floats.unlink(missing_ok=True)
    return count


def _write_scan(store: "SQLiteStore", table: str, dim: int, codes_file: Path, floats_file: Path) -> Any:
    """Write every vector of ``table`` (scan order) after a blank header in each file; the ids."""
    record = record_dtype(dim)
    seen = []
    with open(codes_file, "wb") as codes, open(floats_file, "wb") as floats:
        codes.write(b" " * HEADER)
        floats.write(b" " * HEADER)
        for ids, vectors in _batches(store, table, dim):
            rows = np.zeros(len(ids), dtype=record)
            rows["id"] = ids
            rows["code"] = sign_codes(vectors)
            codes.write(rows.tobytes())
            floats.write(np.ascontiguousarray(vectors, dtype="<f4").tobytes())
            seen.append(ids)
    return np.concatenate(seen) if seen else np.zeros(0, dtype="<i8")


def _sort_files(codes_file: Path, floats_file: Path, record: Any, dim: int, order: Any, step: int = 65_536) -> None:
    """Rewrite both files in ``order`` (gathering from memory maps, a slice at a time)."""
    count = len(order)
    for source, dtype, shape in ((codes_file, record, (count,)), (floats_file, np.dtype("<f4"), (count, dim))):
        data = np.memmap(source, dtype=dtype, mode="r", offset=HEADER, shape=shape)
        target = source.with_name(source.name + ".sorted")
        with open(target, "wb") as out:
            out.write(b" " * HEADER)
            for start in range(0, count, step):
                out.write(np.ascontiguousarray(data[order[start:start + step]]).tobytes())
        del data
        os.replace(target, source)


def _batches(store: "SQLiteStore", table: str, dim: int, size: int = 65_536) -> Any:
    """Every ``(ids, vectors)`` of ``table``, ``size`` at a time, in one pass over the table
    (sqlite-vec answers any rowid filter with a scan of the whole table, so no paging by id)."""
    try:
        cursor = store.conn.execute(f"SELECT rowid, embedding FROM {table}")
        while rows := list(itertools.islice(cursor, size)):
            ids = np.fromiter((int(r[0]) for r in rows), dtype="<i8", count=len(rows))
            vectors = np.frombuffer(b"".join(r[1] for r in rows), dtype="<f4").reshape(len(rows), dim)
            yield ids, vectors
    except apsw.Error as exc:
        raise store_error(exc, store.path, "reading vectors for the side index") from exc


def _append(store: "SQLiteStore", table: str, path: Path, index: Index, tail: Sequence[int]) -> None:
    """Add the tail to the end of both files (vectors first), then the new header (count, highest
    id): a reader that read the old header sees the old records only."""
    dim = int(index.header["dim"])
    blobs = store.point_vectors(table, tail)
    ids = [i for i in sorted(tail) if i in blobs]
    count = int(index.header["count"])
    if not ids:
        return
    rows = np.zeros(len(ids), dtype=record_dtype(dim))
    rows["id"] = ids
    vectors = np.frombuffer(b"".join(blobs[i] for i in ids), dtype="<f4").reshape(len(ids), dim)
    rows["code"] = sign_codes(vectors)
    with open(floats_path(path), "r+b") as out:
        out.seek(HEADER + count * dim * 4)
        out.write(vectors.tobytes())
        out.truncate()
    with open(path, "r+b") as out:
        out.seek(HEADER + count * rows.itemsize)
        out.write(rows.tobytes())
        out.truncate()
        out.seek(0)
        out.write(_header(table, dim, count + len(ids), int(index.header["generation"]), max(ids), str(index.header["build"])))
