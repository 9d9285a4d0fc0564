"""The side index's files read without numpy: the header, an id's position, float rows by ``pread``.

Why a second reader: a cold ``crib retrieve`` whose prefetch worker searches the index
(:mod:`.vector_index_ahead`) must still check the index is current and read the vectors the
reranker compares (≤ 60 rows), and importing numpy for that (100-250 ms on the loaded 2-core
machine, ≈ 60 ms idle) was the largest single cost left on its main process. A header is one
256-byte read; an id's position is a binary search over the memory-mapped codes file (≈ 20
records touched per id); a row is one ``pread`` of the floats file — the bytes
:class:`.vector_index.Index` reads through numpy, so both readers answer alike. The file format is
described in :mod:`.vector_index`.
"""

from __future__ import annotations

import json
import mmap
import os
import struct
from collections.abc import Sequence
from pathlib import Path
from typing import Any

HEADER = 256
FORMAT = "crib-vecindex-1"
_ID = struct.Struct("<q")


def index_path(db: Path, table: str) -> Path:
    return Path(f"{db}-vecindex") / f"{table}.codes"


def floats_path(codes: Path) -> Path:
    return codes.with_suffix(".floats")


def parse_header(codes: bytes, floats: bytes) -> dict[str, Any] | None:
    """The codes file's header from the first :data:`HEADER` bytes of both files; None unless it
    is an index's and both files are of the same build."""
    try:
        header = json.loads(codes.rstrip(b"\0 ").decode("utf-8"))
        if not isinstance(header, dict) or header.get("format") != FORMAT:
            return None
        if floats.rstrip(b" ").decode("utf-8") != str(header["build"]):
            return None  # the two files of one build, never mixed
        int(header["dim"]), int(header["count"]), int(header["max_rowid"]), int(header["generation"])
    except (ValueError, KeyError, TypeError, UnicodeDecodeError):
        return None
    return header


class IndexFile:
    """One opened index, read without numpy: its header, the codes file mapped (ids only are
    read) and a descriptor of the floats file. Closed by :meth:`close`."""

    def __init__(self, header: dict[str, Any], codes: mmap.mmap, floats_fd: int) -> None:
        self.header = header
        self.dim = int(header["dim"])
        self.count = int(header["count"])
        self.record = 8 + self.dim // 8
        self._codes = codes
        self._floats_fd = floats_fd

    @classmethod
    def open(cls, path: Path) -> "IndexFile | None":
        """The index at ``path``; None when either file is missing, truncated or not an index's."""
        try:
            with open(path, "rb") as codes, open(floats_path(path), "rb") as floats:
                header = parse_header(codes.read(HEADER), floats.read(HEADER))
                if header is None or int(header["dim"]) % 8 or int(header["dim"]) <= 0:
                    return None
                dim, count = int(header["dim"]), int(header["count"])
                if os.fstat(codes.fileno()).st_size < HEADER + count * (8 + dim // 8):
                    return None
                if os.fstat(floats.fileno()).st_size < HEADER + count * dim * 4:
                    return None
                mapped = mmap.mmap(codes.fileno(), 0, access=mmap.ACCESS_READ)
                return cls(header, mapped, os.dup(floats.fileno()))
        except (OSError, ValueError):
            return None

    def close(self) -> None:
        self._codes.close()
        os.close(self._floats_fd)

    def _id_at(self, position: int) -> int:
        return int(_ID.unpack_from(self._codes, HEADER + position * self.record)[0])

    def positions(self, ids: Sequence[int]) -> dict[int, int]:
        """Where each of ``ids`` is (records are in ascending id order); ids not held are absent."""
        out: dict[int, int] = {}
        for wanted in sorted(set(int(i) for i in ids)):
            low, high = 0, self.count
            while low < high:
                middle = (low + high) // 2
                if self._id_at(middle) < wanted:
                    low = middle + 1
                else:
                    high = middle
            if low < self.count and self._id_at(low) == wanted:
                out[wanted] = low
        return out

    def read_rows(self, positions: Sequence[int]) -> list[bytes] | None:
        """The float32 vector at each of ``positions`` (one ``pread`` each); None on a short read."""
        size = 4 * self.dim
        try:
            rows = [os.pread(self._floats_fd, size, HEADER + int(p) * size) for p in positions]
        except OSError:
            return None
        return rows if all(len(row) == size for row in rows) else None


def read_header(path: Path) -> dict[str, Any] | None:
    """The header of the index at ``path`` (both files' first bytes); None as :func:`parse_header`."""
    try:
        with open(path, "rb") as codes, open(floats_path(path), "rb") as floats:
            return parse_header(codes.read(HEADER), floats.read(HEADER))
    except OSError:
        return None
