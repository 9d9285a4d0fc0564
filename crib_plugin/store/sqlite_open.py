"""Opening SQLite connections and naming what is wrong with a file.

The busy handler (jittered backoff up to ``CRIB_BUSY_TIMEOUT``), the damage detection that turns
apsw errors and bad headers into one :class:`~crib_plugin.core.errors.StoreError` subclass, the
read-only fallback to ``immutable=1``, and the capability probe for ``crib doctor``. The store
class and :func:`~crib_plugin.store.sqlite.open_store` build on these.
"""

from __future__ import annotations

import os
import random
import sqlite3
import time
from pathlib import Path
from typing import Any
from urllib.parse import quote

import apsw

from ..core.config import busy_timeout
from ..core.errors import (
    ExtensionError,
    NotACribStore,
    StoreBusy,
    StoreCorrupt,
    StoreError,
    StoreFull,
    StoreReadOnly,
)
from .sqlite_rows import vec_extension_path

BUSY_SLEEP_CAP = 0.05  # longest single backoff step of the busy handler, seconds
SQLITE_MAGIC = b"SQLite format 3\x00"


class BusyHandler:
    """SQLite busy handler: jittered exponential backoff until ``timeout`` seconds have passed.

    SQLite calls it with the number of times it was already called for the same lock wait (0 on
    the first). Full jitter (a random sleep up to the current step, capped at
    :data:`BUSY_SLEEP_CAP`) keeps eight writers woken by one commit from colliding again in step.
    """

    def __init__(self, timeout: float) -> None:
        self.timeout = timeout
        self.started = 0.0

    def __call__(self, count: int) -> bool:
        now = time.monotonic()
        if count == 0:
            self.started = now
        if now - self.started >= self.timeout:
            return False
        step = min(BUSY_SLEEP_CAP, 0.001 * (2 ** min(count, 10)))
        time.sleep(random.uniform(0.2 * step, step))
        return True


def describe_file(path: Path) -> str | None:
    """Why ``path`` cannot be a SQLite database judging by its bytes, or ``None`` if it might be.

    Reads at most the 100-byte header: empty, not SQLite, or shorter than its header says
    (truncated). Used to name the cause when SQLite reports a malformed file.
    """
    try:
        size = path.stat().st_size
        with path.open("rb") as fh:
            header = fh.read(100)
    except OSError:
        return None
    if size == 0:
        return "is empty (0 bytes), not a crib database"
    if not header.startswith(SQLITE_MAGIC[: len(header)]) or len(header) < len(SQLITE_MAGIC):
        return "is not a SQLite database (it does not start with the SQLite header)"
    if len(header) < 100:
        return f"is truncated ({size} bytes, shorter than a SQLite header)"
    page_size = int.from_bytes(header[16:18], "big")
    page_size = 65536 if page_size == 1 else page_size
    pages = int.from_bytes(header[28:32], "big")
    if pages and header[24:28] == header[92:96] and pages * page_size > size:
        return f"is truncated ({size} bytes, its header says {pages * page_size})"
    return None


def store_error(exc: BaseException, path: Path | str, doing: str = "") -> StoreError:
    """One clear :class:`StoreError` subclass for an apsw error met while using ``path``."""
    where = f" ({doing})" if doing else ""
    if isinstance(exc, StoreError):
        return exc
    if isinstance(exc, apsw.FullError) or (isinstance(exc, apsw.IOError) and _no_space_left(Path(path))):
        return StoreFull(f"cannot write {path}: the disk or the database's size limit is full{where}; nothing was stored — free space and retry")
    if isinstance(exc, (apsw.ReadOnlyError, apsw.PermissionsError)) or (
            isinstance(exc, apsw.CantOpenError) and Path(path).parent.is_dir() and not os.access(Path(path).parent, os.W_OK)):
        return StoreReadOnly(f"cannot write {path}: the file or its directory is read-only{where}")
    if isinstance(exc, apsw.BusyError):
        return StoreBusy(f"{path} stayed locked by another writer for longer than CRIB_BUSY_TIMEOUT{where}")
    if isinstance(exc, (apsw.CorruptError, apsw.NotADBError)):
        cause = describe_file(Path(path)) or f"is damaged ({exc})"
        cls = NotACribStore if "not a SQLite" in cause or "empty" in cause else StoreCorrupt
        return cls(f"{path} {cause}; crib left it untouched")
    return StoreError(f"database error{where}: {exc}")


def _no_space_left(path: Path) -> bool:
    """Whether the folder of ``path`` has no free block: SQLite reports a full disk met while growing
    its WAL index as a plain "disk I/O error"."""
    try:
        stats = os.statvfs(path.parent)
    except OSError:
        return False
    return stats.f_bavail == 0


def sqlite_capabilities() -> dict[str, Any]:
    """What the bundled SQLite can do: version, FTS5, trigram, sqlite-vec (for ``crib doctor``)."""
    info: dict[str, Any] = {"binding": "apsw", "binding_version": apsw.apsw_version(), "sqlite_version": apsw.sqlite_lib_version()}
    conn = apsw.Connection(":memory:")
    try:
        for name, sql in (
            ("fts5", "CREATE VIRTUAL TABLE t1 USING fts5(x, tokenize='porter unicode61')"),
            ("trigram", "CREATE VIRTUAL TABLE t2 USING fts5(x, tokenize='trigram')"),
        ):
            try:
                conn.execute(sql)
                info[name] = True
            except apsw.Error as exc:
                info[name] = False
                info[f"{name}_error"] = str(exc)
        try:
            conn.enable_load_extension(True)
            conn.load_extension(vec_extension_path())
            info["sqlite_vec"] = str(list(conn.execute("SELECT vec_version()"))[0][0])
            conn.execute("CREATE VIRTUAL TABLE v USING vec0(embedding float[4] distance_metric=cosine)")
            info["vec0_cosine"] = True
        except (apsw.Error, ExtensionError) as exc:
            info["sqlite_vec"] = None
            info["sqlite_vec_error"] = str(exc)
    finally:
        conn.close()

    info["stdlib_sqlite3_can_load_extensions"] = hasattr(sqlite3.Connection, "enable_load_extension")
    return info


def connect(target: str, flags: int, timeout: float) -> apsw.Connection:
    """An apsw connection with crib's busy handler and foreign keys on."""
    conn = apsw.Connection(target, flags=flags)
    conn.setbusyhandler(BusyHandler(timeout))
    conn.execute("PRAGMA foreign_keys = ON")
    return conn


def configured_busy_timeout() -> float:
    """``CRIB_BUSY_TIMEOUT`` in seconds (read through config at open time)."""
    return busy_timeout()


def open_readonly(path: Path, timeout: float) -> apsw.Connection:
    """A read-only connection; ``immutable=1`` when SQLite cannot open the WAL index read-only
    (a WAL store in a read-only directory, with no ``-shm`` file: nobody can be writing it), or
    cannot grow it (a full disk: "disk I/O error") while the write-ahead log holds nothing — every
    committed write is then in the database file itself, so nothing is missed and reads go on."""
    try:
        conn = connect(str(path), apsw.SQLITE_OPEN_READONLY, timeout)
        conn.execute("PRAGMA user_version")  # opens the file for real (and the WAL index)
        return conn
    except apsw.CantOpenError:
        pass
    except (apsw.IOError, apsw.FullError):
        if _wal_size(path) > 0:  # committed writes still in the log: an immutable read would miss them
            raise
    uri = f"file:{quote(str(path.resolve()))}?immutable=1"
    return connect(uri, apsw.SQLITE_OPEN_READONLY | apsw.SQLITE_OPEN_URI, timeout)


def _wal_size(path: Path) -> int:
    try:
        return path.with_name(path.name + "-wal").stat().st_size
    except OSError:
        return 0
