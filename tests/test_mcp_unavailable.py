"""A failure is never an empty answer on MCP: when the store cannot be used, ``recall``, ``search``
and ``remember`` fail with one line starting "crib's memory is unavailable: " — fast (a server
that is down fails within the connect timeout, not 20 s) — and a connection the server dropped
(a restart) is replaced, not answered as "nothing relevant"."""

from __future__ import annotations

import socket
import time
from pathlib import Path
from typing import Any, Callable, Iterator
from urllib.parse import urlsplit

import pytest
from mcp.server.mcpserver.exceptions import ToolError

from crib_plugin import Memory
from crib_plugin.hosts import mcp_server
from crib_plugin.store import pooling, postgres

TOOLS: dict[str, tuple[Callable[..., Any], dict[str, Any]]] = {
    "recall": (mcp_server.recall, {"query": "which database did we choose"}),
    "search": (mcp_server.search, {"query": "which database did we choose"}),
    "remember": (mcp_server.remember, {"text": "We chose SQLite for the storage layer"}),
}


def tool(name: str) -> Any:
    fn, arguments = TOOLS[name]
    return mcp_server._guarded(fn)(**arguments)


@pytest.fixture
def pooled() -> Iterator[None]:
    """The MCP server's mode: pooled connections; every pool opened here closed afterwards."""
    before = set(postgres._POOLS)
    pooling.use_pool()
    yield
    pooling.stop_pooling()
    for key in set(postgres._POOLS) - before:
        postgres._POOLS.pop(key).close()


def closed_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return int(sock.getsockname()[1])


@pytest.mark.parametrize("name", sorted(TOOLS))
def test_a_server_that_is_down_is_an_error_at_once(name: str, pooled: None, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("CRIB_DB", f"postgresql://crib:secret-pw@127.0.0.1:{closed_port()}/crib")
    started = time.monotonic()
    with pytest.raises(ToolError) as caught:
        tool(name)
    message = str(caught.value)
    assert message.startswith(mcp_server.UNAVAILABLE) and "\n" not in message
    assert "secret-pw" not in message
    assert time.monotonic() - started < 4.0  # connect_timeout, no background retries


@pytest.mark.parametrize("name", ["recall", "search"])
def test_a_damaged_sqlite_store_is_an_error_not_an_empty_answer(name: str, db: Path) -> None:
    with Memory(db) as memory:
        memory.write("We chose SQLite for the storage layer")
    for path in db.parent.glob(db.name + "*"):
        if path.is_file():
            path.write_bytes(b"\x00garbage" * 4096)
    with pytest.raises(ToolError) as caught:
        tool(name)
    assert str(caught.value).startswith(mcp_server.UNAVAILABLE)


@pytest.mark.parametrize("error", ["StoreFull", "StoreReadOnly", "StoreBusy", "StoreCorrupt"])
def test_a_full_unwritable_locked_or_corrupt_store_is_said_out_loud(error: str, db: Path,
                                                                    monkeypatch: pytest.MonkeyPatch) -> None:
    """What the store layer raises for a full disk, a read-only directory, a lock held past the busy
    timeout or a damaged file reaches the agent as one "unavailable" line (the store layer's own
    tests cover raising them)."""
    from crib_plugin.core import errors

    def failing(*_args: Any, **_kwargs: Any) -> Any:
        raise getattr(errors, error)(f"{db}: {error} for this test")

    monkeypatch.setattr(mcp_server, "open_scope", failing)
    with pytest.raises(ToolError) as caught:
        tool("remember")
    assert str(caught.value) == f"{mcp_server.UNAVAILABLE}{db}: {error} for this test"


def test_no_store_yet_is_still_an_empty_answer(db: Path) -> None:
    assert not db.exists()
    assert tool("search") == {"hits": [], "left_off": 0}
    assert tool("recall") == "No stored memory is relevant to this query."


def _drop_connections(server_url: str, url: str) -> int:
    import psycopg

    name = urlsplit(url).path.lstrip("/")
    with psycopg.connect(server_url, autocommit=True) as conn:
        rows = conn.execute("SELECT pg_terminate_backend(pid) FROM pg_stat_activity WHERE datname = %s "
                            "AND pid <> pg_backend_pid()", (name,)).fetchall()
    return len(rows)


def test_the_first_call_after_a_restart_still_answers(pg_server: str, pg_url: str, pooled: None,  # noqa: F811
                                                      monkeypatch: pytest.MonkeyPatch) -> None:
    """The server dropping every connection (what a restart does to a pool) is not "No stored
    memory is relevant": a dead pooled connection is checked and replaced on loan, a connection lost
    mid-call is retried once (below), and the call answers."""
    monkeypatch.setenv("CRIB_DB", pg_url)
    tool("remember")
    assert "SQLite" in tool("recall")
    assert _drop_connections(pg_server, pg_url) >= 1
    assert "SQLite" in tool("recall")
    assert _drop_connections(pg_server, pg_url) >= 1
    assert tool("search")["hits"]


def test_a_lost_connection_is_retried_once(monkeypatch: pytest.MonkeyPatch) -> None:
    from crib_plugin.core.errors import StoreUnavailable, StoreUnreachable

    calls: list[int] = []

    def flaky() -> str:
        calls.append(1)
        if len(calls) == 1:
            raise StoreUnavailable("server closed the connection unexpectedly")
        return "answer"

    assert mcp_server._guarded(flaky)() == "answer" and len(calls) == 2
    calls.clear()

    def always() -> str:
        calls.append(1)
        raise StoreUnavailable("server closed the connection unexpectedly")

    with pytest.raises(ToolError, match="^crib's memory is unavailable: server closed"):
        mcp_server._guarded(always)()
    assert len(calls) == 2  # once more, not in a loop
    calls.clear()

    def down() -> str:
        calls.append(1)
        raise StoreUnreachable("connection refused")

    with pytest.raises(ToolError):
        mcp_server._guarded(down)()
    assert len(calls) == 1  # a server that refused the connection is not asked again
