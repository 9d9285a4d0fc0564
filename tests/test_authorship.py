"""Every audit row names who made the change — user@machine, agent, session, project — on both
backends, and ``crib log`` shows it."""

from __future__ import annotations

import getpass
import json
import socket
from typing import Any

import pytest


@pytest.fixture(params=["sqlite", "postgres"])
def store_url(request: pytest.FixtureRequest, monkeypatch: pytest.MonkeyPatch) -> str:
    if request.param == "postgres":
        url = request.getfixturevalue("pg_url")
        monkeypatch.setenv("CRIB_DB", url)
        return url
    import os

    return os.environ["CRIB_DB"]


def test_log_shows_who_wrote_what(store_url: str, crib: Any, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delenv("CLAUDECODE", raising=False)
    monkeypatch.delenv("CI", raising=False)
    assert crib("write", "type=decision Chose PostgreSQL for the team store.").returncode == 0
    assert crib("write", "Written by an agent.", env={"CLAUDECODE": "1"}).returncode == 0
    rows = json.loads(crib("log", "--json").stdout)
    writes = sorted((r for r in rows if r["action"] == "write"), key=lambda r: r["id"])
    me = f"{getpass.getuser()}@{socket.gethostname()}"
    assert [(r["detail"]["by"], r["detail"]["agent"]) for r in writes] == [(me, "cli"), (me, "claude-code")]
    assert all(r["detail"]["session"] and r["detail"]["project"] for r in writes)
    assert f"by={me}" in crib("log").stdout
    assert "host" not in writes[0]["detail"] and writes[1]["detail"]["host"] == "claude-code"


@pytest.mark.parametrize(("env", "agent", "host"), [
    ({"CRIB_HOST": "codex", "CODEX_SANDBOX": "seatbelt"}, "cli", "codex"),
    ({"GEMINI_CLI": "1"}, "cli", "gemini-cli"),
    ({"CRIB_HOST": "opencode"}, "cli", "opencode"),
])
def test_the_audit_row_names_the_agent_host(crib: Any, monkeypatch: pytest.MonkeyPatch, env: dict[str, str], agent: str, host: str) -> None:
    for name in ("CLAUDECODE", "CI", "GEMINI_CLI", "OPENCODE", "CODEX_SANDBOX", "CODEX_THREAD_ID"):
        monkeypatch.delenv(name, raising=False)
    assert crib("write", f"Written through {host}.", env=env).returncode == 0
    row = next(r for r in json.loads(crib("log", "--json").stdout) if r["action"] == "write")
    assert (row["detail"]["agent"], row["detail"]["host"]) == (agent, host)
    assert f"host={host}" in crib("log").stdout


def test_pooled_stores_reuse_one_connection(pg_url: str) -> None:  # noqa: F811
    """The MCP server's mode: a store closed hands its connection back; the next one reuses it."""
    from crib_plugin.store import open_store, pooling

    pooling.use_pool()
    try:
        first = open_store(pg_url)
        pid = first.execute("SELECT pg_backend_pid()")[0][0]  # type: ignore[attr-defined]
        first.close()
        second = open_store(pg_url)
        assert second.execute("SELECT pg_backend_pid()")[0][0] == pid  # type: ignore[attr-defined]
        second.close()
    finally:
        pooling.stop_pooling()
