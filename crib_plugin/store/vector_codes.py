"""The numpy side of the k-NN side index (:mod:`.vector_index`): the files' format, their memory
mapping, the Hamming pass and the exact rescoring.

A module of its own because of numpy: :mod:`.vector_index` is loaded by every process that opens a
store, and a store below :data:`~.vector_index.MIN_VECTORS` vectors has no index file, so it never
needs this module; :func:`.vector_index.open_index` imports it once a file is there.
"""

from __future__ import annotations

import os
import weakref
from collections.abc import Sequence
from pathlib import Path
from typing import Any

import numpy as np

from .vector_index_file import FORMAT, HEADER, floats_path, parse_header

__all__ = ["FORMAT", "HEADER", "floats_path"]

CANDIDATES = 512
"""Records taken by Hamming distance and rescored exactly (recall, ``bench/scale.py --recall``)."""
PER_CANDIDATE = 400
"""...and at least one candidate per this many vectors (2,500 at 10⁶): ``bench/scale.py --recall``
measured recall@10 99.1 % at 10⁵ but 84.9 % at 10⁶ with 512 alone."""

def record_dtype(dim: int) -> Any:
    return np.dtype([("id", "<i8"), ("code", "u1", (dim // 8,))])


def sign_codes(vectors: Any) -> Any:
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

    def read_rows(self, positions: Sequence[int] | np.ndarray[Any, Any]) -> bytes | None:
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
        build or not an index."""
        try:
            with open(path, "rb") as handle, open(floats_path(path), "rb") as vectors:
                header = parse_header(handle.read(HEADER), vectors.read(HEADER))
                if header is None:
                    return None  # not an index's, or the two files of different builds
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

    def rank(self, vector: bytes, k: int, tail: Sequence[int], blobs: dict[int, bytes]) -> tuple[list[tuple[int, float]], set[int]]:
        """Every candidate for ``vector``'s ``k`` nearest, ranked by exact cosine distance: the
        records nearest by Hamming distance, rescored with their float vectors, and the ``tail``
        (ids past the index, with their float32 ``blobs`` from the database); and the tail's ids
        (read from the database, so alive)."""
        dim = len(vector) // 4
        query = np.frombuffer(vector, dtype="<f4")
        picked = np.sort(candidates(self, query, self.candidate_count(k)))
        rows = self.read_rows(picked) if len(picked) else b""
        if rows is not None:
            matrix = np.frombuffer(rows, dtype="<f4").reshape(len(picked), dim)
        else:
            matrix = np.asarray(self.floats[picked])
        have = [int(i) for i in self.records["id"][picked]]
        if tail:
            have += list(tail)
            matrix = np.vstack([matrix, np.frombuffer(b"".join(blobs[i] for i in tail), dtype="<f4").reshape(len(tail), dim)])
        return nearest_of(query, have, matrix, len(have)), set(tail)

    def candidate_count(self, k: int) -> int:
        """How many records a ``k``-nearest query takes by Hamming distance."""
        return max(CANDIDATES, 4 * k, len(self.records) // PER_CANDIDATE)

    def positions(self, ids: Sequence[int]) -> dict[int, int]:
        """Where each of ``ids`` is in the index (ids it does not hold are absent)."""
        if not len(self.records) or not ids:
            return {}
        wanted = np.asarray(sorted(set(int(i) for i in ids)), dtype="<i8")
        held = self.records["id"]
        at = np.minimum(np.searchsorted(held, wanted), len(held) - 1)
        found = held[at] == wanted
        return {int(i): int(p) for i, p in zip(wanted[found], at[found])}


CHUNK_ROWS = 32_768
"""Records per block of the Hamming pass: a block's codes (≈ 1.8 MB) stay in cache across its
passes, where whole-column passes read all 56 MB of codes once per 64 bits (≈ 30 % slower at 10⁶)."""


def candidates(index: Index, query: Any, count: int) -> Any:
    """Positions of the ``count`` records whose codes are nearest ``query``'s sign bits (Hamming)."""
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
    running = np.cumsum(np.bincount(distance))
    limit = int(np.searchsorted(running, count))  # the smallest distance with ≥ count at or below it
    below = np.flatnonzero(distance < limit)
    at = np.flatnonzero(distance == limit)[: count - len(below)]
    return np.concatenate([below, at])


def nearest_of(query: Any, ids: Sequence[int], matrix: Any, k: int) -> list[tuple[int, float]]:
    """The ``k`` of ``ids`` (rows of ``matrix``) nearest ``query`` by cosine distance, ties by id."""
    if not len(ids):
        return []
    norms = np.linalg.norm(matrix, axis=1) * float(np.linalg.norm(query))
    with np.errstate(divide="ignore", invalid="ignore"):
        distance = 1.0 - (matrix @ query) / norms
    distance = np.where(np.isfinite(distance), distance, 2.0)
    order = np.lexsort((np.asarray(ids), distance))[:k]
    return [(int(ids[i]), float(distance[i])) for i in order]
