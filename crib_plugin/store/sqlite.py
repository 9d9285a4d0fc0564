"""The SQLite store: one file holding entries, their word and trigram indexes, vectors and facts.

Why apsw: Python's ``sqlite3`` module is often compiled without ``enable_load_extension`` (on this
machine, and on macOS's system Python), so sqlite-vec cannot be loaded through it. apsw ships its own
SQLite with extension loading, FTS5 and the trigram tokenizer on every platform.

Every write is one transaction that takes the write lock up front (``BEGIN IMMEDIATE``); the
database runs in WAL mode, and a busy handler with jittered backoff waits for another writer's lock
(``CRIB_BUSY_TIMEOUT``), so several agents can share one file. Read commands open the file
read-only (:func:`open_store` with ``readonly=True``): they never create, migrate or convert it.
Damaged files raise one :class:`~crib_plugin.core.errors.StoreError` subclass naming the cause.
"""

from __future__ import annotations

import os
import tempfile
from contextlib import contextmanager
from pathlib import Path
from typing import Any, Iterator, Sequence

import apsw

from ..core.dirs import prepare_store_dir
from ..core.errors import ExtensionError, NotACribStore, StoreError, StoreOutdated, StoreReadOnly, StoreTooNew
from ..core.notices import notice
from .schema import MIGRATIONS, latest_version
from .sqlite_admin import AdminMixin
from .sqlite_entries import EntriesMixin
from .sqlite_facts import FactsMixin
from .sqlite_fulltext import FullTextMixin
from .sqlite_open import (  # noqa: F401  (sqlite_capabilities: re-exported for doctor)
    configured_busy_timeout,
    connect,
    describe_file,
    open_readonly,
    sqlite_capabilities,
    store_error,
)
from .sqlite_queue import QueueMixin
from .sqlite_rows import EXTRACT_QUEUE, content_hash, vec_extension_path  # noqa: F401  (re-exported)
from .sqlite_vectors import VectorsMixin


class SQLiteStore(EntriesMixin, FullTextMixin, VectorsMixin, QueueMixin, AdminMixin, FactsMixin):
    """A connection to one crib database, migrated to the latest schema.

    Open with :func:`open_store`. Methods are small and SQL-shaped; ranking and fusion live in
    the channels, not here.
    """

    backend = "sqlite"

    def __init__(self, path: Path, conn: apsw.Connection, readonly: bool = False) -> None:
        self.path = path
        self.conn = conn
        self.readonly = readonly
        self._vec_loaded = False
        self._vocab_ready = False
        self._vectors_ahead: tuple[str, dict[int, bytes]] = ("", {})  # see prefetch_vectors
        self._search_ahead: dict[str, Any] = {}  # see search_ahead
        self._stats: dict[str, int] = {}  # entry count and term frequencies, see _statistics
        self._stats_version: int | None = None

    # -- lifecycle -------------------------------------------------------------------------

    def close(self) -> None:
        try:
            self.conn.close()
        except apsw.Error:  # pragma: no cover - closing twice or mid-statement
            pass

    def __enter__(self) -> "SQLiteStore":
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    @contextmanager
    def transaction(self) -> Iterator[None]:
        """One atomic unit: commits on success, rolls back on any exception.

        The outermost transaction starts with ``BEGIN IMMEDIATE``: it takes the write lock before
        reading anything, so it can never fail half-way for a lock (a deferred transaction cannot
        upgrade once another writer has committed — that failed 13 % of parallel writes). While
        another process holds the lock the busy handler waits, with jitter, up to
        ``CRIB_BUSY_TIMEOUT``. A nested call is a savepoint inside the outer transaction.
        """
        try:
            if self.conn.in_transaction:
                with self.conn:  # apsw: a savepoint when a transaction is open
                    yield
                return
            try:
                self.conn.execute("BEGIN IMMEDIATE")
            except apsw.Error as exc:
                raise store_error(exc, self.path, "starting a write") from None
            try:
                yield
            except BaseException:
                try:
                    self.conn.execute("ROLLBACK")
                except apsw.Error:  # SQLite already rolled back (e.g. after SQLITE_FULL)
                    pass
                raise
            try:
                self.conn.execute("COMMIT")
            except apsw.Error as exc:
                try:
                    self.conn.execute("ROLLBACK")
                except apsw.Error:
                    pass
                raise store_error(exc, self.path, "committing") from None
        finally:
            self._forget_reads()  # nothing read inside may outlive a rollback

    def execute(self, sql: str, bindings: Sequence[Any] | dict[str, Any] = ()) -> list[tuple[Any, ...]]:
        """Run one statement and return all rows; apsw errors become StoreError subclasses."""
        try:
            return list(self.conn.execute(sql, bindings))
        except apsw.Error as exc:
            raise store_error(exc, self.path) from exc

    def _insert_id(self, sql: str, bindings: Sequence[Any]) -> int:
        """Run an ``INSERT`` and return the new row's id (the shared mixins' way to get it)."""
        self.execute(sql, bindings)
        return int(self.conn.last_insert_rowid())

    def storage_bytes(self) -> int:
        """The database file and its write-ahead log (``-wal``), as they are on disk now."""
        files = (self.path, self.path.with_name(self.path.name + "-wal"))
        return sum(f.stat().st_size for f in files if f.is_file())

    def load_vec(self) -> None:
        """Load sqlite-vec into this connection (once)."""
        if self._vec_loaded:
            return
        try:
            self.conn.enable_load_extension(True)
            self.conn.load_extension(vec_extension_path())
        except apsw.Error as exc:
            raise ExtensionError(f"cannot load sqlite-vec: {exc}") from exc
        self._vec_loaded = True

    def migrate(self) -> int:
        """Bring the schema to the latest version; returns the version reached.

        Serialised across processes: every pending migration runs in one ``BEGIN IMMEDIATE``
        transaction, and the version is read again once the write lock is held, so a process that
        waited behind another's migration finds the work done instead of repeating it.
        """
        with self.transaction():
            current = self.schema_version()
            for migration in MIGRATIONS:
                if migration.version <= current:
                    continue
                try:
                    with self.conn:  # savepoint: a failed migration names itself
                        self.conn.execute(migration.sql)
                        if migration.backfill is not None:
                            migration.backfill(self.conn)
                        self.conn.execute(f"PRAGMA user_version = {int(migration.version)}")
                except apsw.Error as exc:
                    if isinstance(exc, (apsw.FullError, apsw.ReadOnlyError, apsw.BusyError)):
                        raise store_error(exc, self.path, f"migration {migration.version}") from None
                    raise StoreError(f"migration {migration.version} ({migration.name}) failed: {exc}") from exc
        return self.schema_version()

    def schema_version(self) -> int:
        return int(self.execute("PRAGMA user_version")[0][0])

def _create_atomically(path: Path, timeout: float) -> None:
    """Create a fully migrated store at ``path`` unless one appears there first.

    The store is built beside it under a temporary name and linked into place (``os.link`` fails
    when the name exists), so a concurrent opener sees either no file or a complete store — never
    an empty file or half a schema (8 simultaneous first writes used to fail 31 times in 40).
    """
    path.parent.mkdir(parents=True, exist_ok=True)
    fd, tmp_name = tempfile.mkstemp(prefix=f".{path.name}.", suffix=".new", dir=path.parent)
    os.close(fd)
    tmp = Path(tmp_name)
    try:
        conn = connect(str(tmp), apsw.SQLITE_OPEN_READWRITE, timeout)
        try:
            conn.execute("PRAGMA journal_mode = WAL")
            SQLiteStore(tmp, conn).migrate()
        finally:
            conn.close()
        try:
            os.link(tmp, path)
        except FileExistsError:
            pass  # another process created it first: use theirs
        except OSError:  # a filesystem without hard links: rename, unless someone beat us
            if not path.exists():
                os.replace(tmp, path)
    finally:
        for leftover in (tmp, Path(f"{tmp}-wal"), Path(f"{tmp}-shm")):
            try:
                leftover.unlink()
            except FileNotFoundError:
                pass


def _check_store(store: SQLiteStore, readonly: bool) -> None:
    """Refuse a file that is not a crib store, is too new, or (read-only) would need migrating."""
    path = store.path
    version = store.schema_version()
    if version > latest_version():
        raise StoreTooNew(f"{path} has schema version {version}, newer than this crib knows ({latest_version()}); upgrade crib")
    tables = {str(r[0]) for r in store.execute("SELECT name FROM sqlite_master WHERE type IN ('table', 'view')")}
    if version == 0 and tables:
        shown = ", ".join(sorted(tables)[:5])
        raise NotACribStore(f"{path} is a SQLite database that crib did not create (tables: {shown}); crib left it untouched")
    if version == 0 and (readonly or path.stat().st_size == 0):
        raise NotACribStore(f"{path} {describe_file(path) or 'is an empty SQLite database, not a crib store'}; crib left it untouched")
    if version > 0 and "entries" not in tables:
        raise NotACribStore(f"{path} is a SQLite database with user_version {version} but no crib tables; crib left it untouched")
    if readonly and version < latest_version():
        raise StoreOutdated(f"{path} has schema version {version}, older than this crib's {latest_version()}; crib could not upgrade it here (a read-only store or folder): run `crib init` where it can be written")


def open_store(path: Path | str, *, create: bool = True, migrate: bool = True, readonly: bool = False) -> SQLiteStore:
    """Open (and by default create and migrate) the database at ``path``.

    With ``create=False`` a missing file raises StoreError instead of being created — retrieval
    must never leave an empty database behind. With ``readonly=True`` the file is opened
    read-only: nothing is created, migrated or switched to WAL, and a read-only file or directory
    can still be read. Every failure is one :class:`StoreError` subclass naming the cause, and the
    file is left as it was.
    """
    path = Path(path)
    timeout = configured_busy_timeout()
    if not path.exists():
        if not create or readonly:
            raise StoreError(f"no crib database at {path}")
        try:
            prepare_store_dir(path)  # the folder, and a .gitignore inside .state/crib
            _create_atomically(path, timeout)
        except apsw.Error as exc:
            raise store_error(exc, path, "creating the database") from exc
        except OSError as exc:
            raise StoreReadOnly(f"cannot create crib database {path}: {exc.strerror or exc}") from exc
    if path.is_dir():
        raise NotACribStore(f"{path} is a directory, not a crib database")
    try:
        if readonly:
            conn = open_readonly(path, timeout)
        else:
            conn = connect(str(path), apsw.SQLITE_OPEN_READWRITE, timeout)
    except apsw.Error as exc:
        if not readonly and isinstance(exc, (apsw.ReadOnlyError, apsw.CantOpenError, apsw.PermissionsError)):
            raise StoreReadOnly(f"cannot open {path} for writing: the file or its directory is read-only") from exc
        raise store_error(exc, path, "opening") from exc
    store = SQLiteStore(path, conn, readonly=readonly)
    try:
        _check_store(store, readonly)
        if not readonly:
            try:
                conn.execute("PRAGMA journal_mode = WAL")  # a no-op on crib's own stores
                conn.execute("PRAGMA synchronous = NORMAL")
            except apsw.Error as exc:
                raise store_error(exc, path, "opening for writing") from exc
            if migrate and store.schema_version() < latest_version():
                upgrade(store)
    except StoreError:
        store.close()
        raise
    except apsw.Error as exc:
        store.close()
        raise store_error(exc, path, "opening") from exc
    return store


def open_upgraded(path: Path | str) -> SQLiteStore:
    """Open ``path`` read-only; a store on an older schema (crib was upgraded, nothing written since)
    is upgraded first (:func:`upgrade`, under the write lock), then opened again read-only.

    Every reader, commands and hooks alike, follows the one rule: before, the hooks injected nothing
    after an upgrade and read commands refused until something was written. A store that cannot be
    written (a read-only folder) keeps refusing with "run `crib init`", unchanged.
    """
    try:
        return open_store(path, create=False, readonly=True)
    except StoreOutdated as outdated:
        try:
            open_store(path, create=False).close()  # upgrades
        except StoreReadOnly:
            raise outdated from None
    return open_store(path, create=False, readonly=True)


def upgrade(store: SQLiteStore) -> None:
    """Migrate ``store`` to the latest schema. A store an older crib wrote (not a new, empty one) is
    first copied beside itself (:func:`keep_copy`: what that crib can still read and export), and the
    upgrade is said once (:func:`~crib_plugin.core.notices.notice`: on stderr for a command, in
    ``crib.log`` always); a copy that cannot be made stops the upgrade with the reason."""
    old = store.schema_version()
    backup = None
    if old > 0:
        try:
            backup, _ = keep_copy(store.path)
        except (OSError, apsw.Error) as exc:
            raise StoreError(f"{store.path} has schema version {old}; crib keeps a copy before upgrading it and could not: {exc}") from exc
    store.migrate()
    if backup is not None:
        notice(f"crib: upgraded {store.path} from schema {old} to {latest_version()}; the old file is kept as {backup}")


def keep_copy(path: Path) -> tuple[Path, int]:
    """A consistent copy of the store at ``path`` (its WAL included, through SQLite's backup API)
    as ``<name>.schema<N>.bak`` beside it, and its schema version N; an existing copy of that schema is
    kept, not overwritten."""
    source = open_readonly(path, configured_busy_timeout())
    try:
        version = int(next(iter(source.execute("PRAGMA user_version")))[0])
        backup = path.with_name(f"{path.name}.schema{version}.bak")
        if not backup.exists():
            partial = backup.with_name(backup.name + ".partial")
            target = apsw.Connection(str(partial))
            try:
                with target.backup("main", source, "main") as copying:
                    copying.step(-1)
            finally:
                target.close()
            os.replace(partial, backup)
    finally:
        source.close()
    return backup, version
