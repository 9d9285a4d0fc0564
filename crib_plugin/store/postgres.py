"""The PostgreSQL store: a team's shared memory on a server, behind the same ``Store`` contract.

Selected by a ``postgresql://`` URL in ``CRIB_DB`` (or a config file's ``db``, or
``CRIB_GLOBAL_DB``): :func:`crib_plugin.store.open_store` dispatches here. Needs ``psycopg``
(``pip install 'crib-plugin[postgres]'``) and, on the server, the ``vector`` extension (pgvector);
``pg_trgm`` is used where it exists.

How it differs from the SQLite store, and why:

- Connections run in autocommit; :meth:`transaction` opens one explicit, short transaction (nested
  calls are savepoints), so no statement holds a lock between a hook's reads.
- Fact consolidation (read what is current, then close it and insert the new fact) is serialised
  across writers by a transaction-scoped advisory lock taken on the first facts statement of a write
  transaction (:meth:`_lock_facts`), and a partial unique index forbids two current relations with
  the same subject, predicate and object: two agents writing contradicting facts at the same instant
  leave exactly one current fact (SQLite gets the same from ``BEGIN IMMEDIATE``). One lock for all
  facts rather than one per subject: a write touches several subjects, and per-subject locks taken
  in different orders would deadlock.
- A read-only store (``readonly=True``) refuses writes before sending them and runs its session
  read-only (``default_transaction_read_only``), so a read role's mistakes cannot write either.
- Errors become :class:`~crib_plugin.core.errors.StoreError` subclasses whose messages show the URL
  masked (:mod:`crib_plugin.core.dburl`): a password is never printed.

The shared mixins (facts, queue, settings/audit/listing) run here unchanged: their SQL is the
dialect both share, with ``?`` placeholders that :meth:`execute` turns into psycopg's ``%s``.
"""

from __future__ import annotations

from collections.abc import Iterator, Sequence
from contextlib import contextmanager
from functools import lru_cache
from typing import Any
from urllib.parse import urlsplit, urlunsplit

import psycopg
from psycopg import errors as pgerrors
from psycopg_pool import ConnectionPool

from ..core.dburl import ServerURL, mask_url
from ..core.errors import (
    NotACribStore,
    StoreBusy,
    StoreError,
    StoreMissing,
    StoreOutdated,
    StoreReadOnly,
    StoreTooNew,
    StoreUnavailable,
    StoreUnreachable,
)
from ..core.notices import notice
from .pooling import pooling
from .postgres_schema import CRIB_TABLES, MIGRATION_LOCK, MIGRATIONS, TRIGRAM_INDEX, latest_pg_version
from .postgres_search import PgEntriesMixin, PgFullTextMixin, PgVectorsMixin
from .sqlite_admin import AdminMixin
from .sqlite_facts import FactsMixin
from .sqlite_queue import QueueMixin

CONNECT_TIMEOUT = 3  # seconds, unless the URL sets connect_timeout (libpq waits for ever by default)
FACTS_LOCK = 0x63726966  # "crif": serialises fact consolidation across writers (see the module docstring)


@lru_cache(maxsize=512)
def pg_sql(sql: str) -> str:
    """A shared-dialect statement in psycopg's parameter style: ``%`` doubled, ``?`` → ``%s``."""
    return sql.replace("%", "%%").replace("?", "%s")


def pg_error(exc: BaseException, url: str, doing: str = "") -> StoreError:
    """One clear :class:`StoreError` subclass for a psycopg error (the URL shown masked)."""
    where = f" ({doing})" if doing else ""
    shown = mask_url(url)
    message = str(exc).replace(url, shown).strip()
    if isinstance(exc, StoreError):
        return exc
    if isinstance(exc, (pgerrors.ReadOnlySqlTransaction, pgerrors.InsufficientPrivilege)):
        return StoreReadOnly(f"cannot write {shown}: {message}{where}")
    if isinstance(exc, (pgerrors.LockNotAvailable, pgerrors.QueryCanceled, pgerrors.DeadlockDetected)):
        return StoreBusy(f"{shown} stayed locked by another writer{where}: {message}")
    if isinstance(exc, psycopg.OperationalError):
        kind = StoreUnreachable if doing.startswith("connecting") else StoreUnavailable
        return kind(f"cannot reach the PostgreSQL store {shown}{where}: {message}")
    return StoreError(f"database error{where}: {message}")


class PostgresStore(PgEntriesMixin, PgFullTextMixin, PgVectorsMixin, QueueMixin, AdminMixin, FactsMixin):
    """A connection to one crib database on a PostgreSQL server (see the module docstring)."""

    backend = "postgres"
    JSON_FIELD = "({column}::jsonb ->> '{key}')"  # see AdminMixin.audit_rows

    def integrity_problems(self, limit: int = 10) -> list[str]:
        """SQLite's page check has no PostgreSQL counterpart crib can assume (amcheck is an
        extension an administrator installs): the server keeps its own pages sound."""
        return []

    def __init__(self, url: str, conn: Any, readonly: bool = False) -> None:
        self.url = url
        self.path = ServerURL(url)  # type: ignore[assignment]  # str() masks the password
        self.conn = conn
        self.readonly = readonly
        self._facts_locked = False
        self._depth = 0
        self._spaces: dict[str, tuple[str, int]] = {}
        self._vectors_ahead: tuple[str, dict[int, bytes]] = ("", {})
        self._stats: dict[str, int] = {}
        self._stats_version: int | None = None
        self._vocab_ready = False
        self._pool: Any = None

    # -- lifecycle -------------------------------------------------------------------------

    def close(self) -> None:
        """Close the connection — or hand it back to the pool it came from (the MCP server)."""
        conn, self.conn = self.conn, _Closed()
        if isinstance(conn, _Closed):
            return
        try:
            if self._pool is not None:
                self._pool.putconn(conn)
            else:
                conn.close()
        except Exception:  # pragma: no cover - closing a broken connection
            pass

    def __enter__(self) -> "PostgresStore":
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    @contextmanager
    def transaction(self) -> Iterator[None]:
        """One short transaction (commit on success, roll back on any exception); nested calls
        are savepoints. A read-only store refuses before anything is sent."""
        if self.readonly:
            raise StoreReadOnly(f"{self.path} was opened read-only")
        self._depth += 1
        try:
            with self.conn.transaction():
                yield
        except psycopg.Error as exc:
            raise pg_error(exc, self.url, "committing") from None
        finally:
            self._depth -= 1
            if self._depth == 0:
                self._facts_locked = False
            self._forget_reads()

    def execute(self, sql: str, bindings: Sequence[Any] | dict[str, Any] = ()) -> list[tuple[Any, ...]]:
        """Run one statement (``?`` placeholders) and return its rows; errors become StoreError."""
        try:
            if not bindings:  # sent as written (a migration's several statements go in one call)
                cursor = self.conn.execute(sql)
            else:
                cursor = self.conn.execute(pg_sql(sql), bindings if isinstance(bindings, dict) else list(bindings))
            return cursor.fetchall() if cursor.description is not None else []
        except psycopg.Error as exc:
            raise pg_error(exc, self.url) from exc

    def _insert_id(self, sql: str, bindings: Sequence[Any]) -> int:
        return int(self.execute(f"{sql} RETURNING id", bindings)[0][0])

    def _in_transaction(self) -> bool:
        return self._depth > 0

    def _lock_facts(self) -> None:
        """Serialise fact consolidation: the first facts statement of a write transaction waits
        for any other writer's consolidation to commit, then reads what it committed."""
        if self._depth > 0 and not self._facts_locked:
            self.execute("SELECT pg_advisory_xact_lock(?)", (FACTS_LOCK,))
            self._facts_locked = True

    def entity_id(self, name: str) -> int | None:
        self._lock_facts()
        return super().entity_id(name)

    def current_relations(self, subject_id: int, predicate: str, object_id: int | None = None) -> list[tuple[int, int, str]]:
        self._lock_facts()
        return super().current_relations(subject_id, predicate, object_id)

    def storage_bytes(self) -> int:
        """Total size (heap, indexes, TOAST) of crib's tables in this schema: ``crib_schema``'s
        schema may hold other applications' tables too, so not the database's size."""
        rows = self.execute(
            "SELECT coalesce(sum(pg_total_relation_size(c.oid)), 0) FROM pg_class c "
            "JOIN pg_namespace n ON n.oid = c.relnamespace "
            "WHERE c.relkind = 'r' AND n.nspname = current_schema() AND (c.relname = ANY(?) "
            "OR c.relname IN (SELECT table_name FROM vector_spaces))",
            (list(CRIB_TABLES),),
        )
        return int(rows[0][0])

    def load_vec(self) -> None:
        """Nothing to load: pgvector is a server extension (the shared mixins call this)."""

    # -- schema ----------------------------------------------------------------------------

    def schema_version(self) -> int:
        if self.execute("SELECT to_regclass('crib_schema')")[0][0] is None:
            return 0
        rows = self.execute("SELECT version FROM crib_schema")
        return int(rows[0][0]) if rows else 0

    def migrate(self) -> int:
        """Bring the schema to the latest version under an advisory lock; returns the version.

        The extensions are created first (``vector`` is required; ``pg_trgm`` is optional and its
        index is added only where it exists). A process that waited behind another's migration
        reads the version again once it holds the lock and finds the work done."""
        with self.transaction():
            self.execute("SELECT pg_advisory_xact_lock(?)", (MIGRATION_LOCK,))
            current = self.schema_version()
            if current >= latest_pg_version():
                return current
            self._create_extensions()
            for migration in MIGRATIONS:
                if migration.version <= current:
                    continue
                try:
                    self.execute(migration.sql)
                except StoreError as exc:
                    raise StoreError(f"migration {migration.version} ({migration.name}) failed: {exc}") from None
                self.execute("UPDATE crib_schema SET version = ?", (migration.version,))
            if self.has_extension("pg_trgm"):
                self.execute(TRIGRAM_INDEX)
        return self.schema_version()

    def has_extension(self, name: str) -> bool:
        return bool(self.execute("SELECT 1 FROM pg_extension WHERE extname = ?", (name,)))

    def _create_extensions(self) -> None:
        for name, required in (("vector", True), ("pg_trgm", False)):
            if self.has_extension(name):
                continue
            try:
                with self.transaction():  # a savepoint: a refused optional extension is not fatal
                    self.execute(f"CREATE EXTENSION IF NOT EXISTS {name}")
            except StoreError as exc:
                if required:
                    raise StoreError(
                        f"the PostgreSQL server at {self.path} lacks the {name!r} extension and this role cannot create it "
                        f"({exc}); ask its administrator to run CREATE EXTENSION {name} in this database"
                    ) from None


def _check(store: PostgresStore, readonly: bool, create: bool) -> None:
    version = store.schema_version()
    if version > latest_pg_version():
        raise StoreTooNew(f"{store.path} has schema version {version}, newer than this crib knows ({latest_pg_version()}); upgrade crib")
    if version == 0:
        tables = store.execute("SELECT count(*) FROM information_schema.tables WHERE table_schema = current_schema() AND table_name = 'entries'")
        if tables[0][0]:
            raise NotACribStore(f"{store.path} has an entries table crib did not create; crib left it untouched")
        if readonly or not create:
            raise StoreMissing(f"no crib store at {store.path} yet (run `crib init` with CRIB_DB set to it)")
    elif readonly and version < latest_pg_version():
        raise StoreOutdated(f"{store.path} has schema version {version}, older than this crib's {latest_pg_version()}; crib could not upgrade it here (a read-only store or folder): run `crib init` where it can be written")


class _Closed:
    """Stands in for a closed connection: using a closed store is a clear error, not a crash."""

    def execute(self, *args: Any, **kwargs: Any) -> Any:
        raise StoreError("the store was closed")

    def transaction(self) -> Any:
        raise StoreError("the store was closed")

    def close(self) -> None:
        pass


_POOLS: dict[tuple[str, bool], Any] = {}
POOL_MAX = 4  # connections a long-lived process keeps per store and mode


def _pool(url: str, readonly: bool) -> Any:
    """A ``psycopg_pool`` pool per URL and mode, for long-lived processes (``pooling.use_pool``):
    the MCP server opens a store for every tool call; a pooled connection saves the TCP/TLS and
    authentication round trips each time."""
    key = (url, readonly)
    if key not in _POOLS:
        def configure(conn: Any) -> None:
            if readonly:
                conn.execute("SET default_transaction_read_only = on")

        extra: dict[str, Any] = {} if "connect_timeout" in url else {"connect_timeout": CONNECT_TIMEOUT}
        # check: a pooled connection the server dropped (a restart) is found dead on loan and
        # replaced, instead of failing the first read after it
        _POOLS[key] = ConnectionPool(
            url, min_size=0, max_size=POOL_MAX, open=True, configure=configure, check=ConnectionPool.check_connection,
            kwargs={"autocommit": True, "application_name": "crib", **extra},
        )
    return _POOLS[key]


def _pooled(url: str, readonly: bool) -> tuple[Any, Any]:
    """A connection from the pool, and the pool. With no idle connection to lend, the server is
    first reached directly (one connect, ``connect_timeout``): a server that is down or refuses
    the login fails at once with libpq's own reason, where the pool would retry in the background
    until its timeout and then say only that it got no connection."""
    pool = _pool(url, readonly)
    if not pool.get_stats().get("pool_available", 0):
        connect(url, readonly).close()
    try:
        return pool.getconn(timeout=CONNECT_TIMEOUT), pool
    except Exception as exc:
        raise pg_error(exc, url, "connecting (pool)") from None


def connect(url: str, readonly: bool = False) -> Any:
    """A psycopg connection in autocommit (read-only sessions for readers); StoreError when the
    server does not answer (a missing driver is reported by :func:`crib_plugin.store.open_store`)."""
    extra: dict[str, Any] = {} if "connect_timeout" in url else {"connect_timeout": CONNECT_TIMEOUT}
    try:
        conn = psycopg.connect(url, autocommit=True, application_name="crib", **extra)
        if readonly:
            conn.execute("SET default_transaction_read_only = on")
        return conn
    except psycopg.Error as exc:
        raise pg_error(exc, url, "connecting") from None


def open_postgres(url: str, *, create: bool = True, migrate: bool = True, readonly: bool = False, conn: Any = None) -> PostgresStore:
    """Open the crib store in the database ``url`` names (created and migrated unless ``readonly``
    or ``create=False``). ``conn`` reuses a connection (the MCP server's pool)."""
    pool = None
    if conn is None and pooling():
        conn, pool = _pooled(url, readonly)
    store = PostgresStore(url, conn if conn is not None else connect(url, readonly), readonly=readonly)
    store._pool = pool
    try:
        _check(store, readonly, create)
        if not readonly and migrate and store.schema_version() < latest_pg_version():
            store.migrate()
    except BaseException:
        store.close()
        raise
    return store


def open_postgres_upgraded(url: str) -> PostgresStore:
    """Read-only, migrating first when the schema is older (the hooks' way, like ``open_upgraded``)."""
    try:
        return open_postgres(url, create=False, readonly=True)
    except StoreOutdated:
        upgraded = open_postgres(url, create=False)  # migrations run in one transaction each
        upgraded.close()
        notice(f"crib: upgraded the store at {mask_url(url)} to schema {latest_pg_version()}")
    return open_postgres(url, create=False, readonly=True)


def create_database(server_url: str, name: str, *, replace: bool = False) -> str:
    """Create database ``name`` on the server ``server_url`` reaches (the role needs CREATEDB);
    returns its URL. ``replace`` drops one of that name first. For measurement stores
    (``crib eval --db-url``), not for a team's store, which its administrator creates."""
    if not name.replace("_", "").isalnum():
        raise StoreError(f"not a plain database name: {name!r}")
    conn = connect(server_url)
    try:
        if replace:
            conn.execute(f"DROP DATABASE IF EXISTS {name} WITH (FORCE)")
        conn.execute(f"CREATE DATABASE {name}")
    except Exception as exc:
        raise pg_error(exc, server_url, f"creating database {name}") from None
    finally:
        conn.close()
    parts = urlsplit(server_url)
    return urlunsplit((parts.scheme, parts.netloc, f"/{name}", parts.query, parts.fragment))


#: The names :mod:`crib_plugin.store.factory` looks up in a backend module.
open_store = open_postgres
open_upgraded = open_postgres_upgraded
