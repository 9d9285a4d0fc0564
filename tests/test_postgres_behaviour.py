"""The behavioural suite on PostgreSQL: the README session, hooks, forget/correct, the MCP server and
scopes, with ``CRIB_DB`` naming a database on the session's server (``tests/pg.py``).

The tests are the SQLite suite's own, imported and collected here, where ``CRIB_DB`` (and the ``db``
fixture) point at a fresh PostgreSQL database instead of a file: the same assertions, the other
backend. Only tests that look at the store through crib are imported (not those that open the
SQLite file themselves).
"""

from __future__ import annotations

import os
from pathlib import Path
from typing import Any, Iterator

import pytest
from pg import new_database
from test_claude import (  # noqa: F401  (collected here, on PostgreSQL)
    test_another_session_gets_it_again,
    test_only_new_memories_are_injected_later_in_the_session,
    test_prints_the_memory_block_as_hook_json,
)
from test_manage import (  # noqa: F401
    stocked,
    test_correct_keeps_history_and_shows_the_corrected_text_first,
    test_every_change_is_audited,
    test_forget_by_query_previews_and_asks,
    test_forget_yes_for_scripts_and_by_id,
    test_list_filters_and_json,
    test_stats,
)
from test_mcp import test_store_recall_correct_and_forget_through_the_client  # noqa: F401
from test_memory import test_forget_removes_from_every_channel, test_identical_write_is_not_duplicated, test_search_json_fields  # noqa: F401
from test_projects import test_a_shared_store_answers_for_one_project_or_all  # noqa: F401
from test_smoke import (  # noqa: F401
    test_retrieve_orders_entries_newest_first,
    test_retrieve_prints_nothing_when_nothing_is_relevant,
    test_retrieve_via_fts_with_tags_time_and_dates,
    test_retrieve_via_vectors_without_shared_words,
    test_the_readme_session_verbatim,
    test_write_stores_and_respects_type_prefix,
)


@pytest.fixture(autouse=True)
def on_postgres(clean_env: Path, pg_url: str, monkeypatch: pytest.MonkeyPatch) -> str:  # noqa: F811
    """Every test of this module runs with its project store on PostgreSQL."""
    monkeypatch.setenv("CRIB_DB", pg_url)
    return pg_url


@pytest.fixture
def db(on_postgres: str) -> str:
    return on_postgres


@pytest.fixture
def memory(on_postgres: str) -> Iterator[Any]:
    from crib_plugin import Memory

    with Memory(on_postgres) as mem:
        yield mem


def test_the_store_in_use_is_postgres(memory: Any) -> None:
    memory.write("type=decision Chose PostgreSQL for the team store.")
    assert memory.store.backend == "postgres"


def test_scopes_project_on_a_server_global_on_another(pg_server: str, crib: Any, monkeypatch: pytest.MonkeyPatch) -> None:  # noqa: F811
    """A project store and a global store may each be a server database (or a file)."""
    global_url = new_database(pg_server)
    monkeypatch.setenv("CRIB_GLOBAL_DB", global_url)
    assert "(global)" in crib("write", "--global", "I prefer tabs over spaces for indentation in Python files").stdout
    assert crib("write", "type=decision The billing service retries Stripe webhooks three times").returncode == 0
    assert "I prefer tabs over spaces" in crib("retrieve", "tabs or spaces for indentation in Python files?").stdout
    block = crib("retrieve", "Stripe webhooks retries and tabs or spaces indentation").stdout
    assert " global]" in block and " project]" in block
    where = crib("where").stdout
    assert where.count("postgresql://") == 2


def test_where_config_and_doctor_never_show_the_password(pg_url: str, crib: Any, monkeypatch: pytest.MonkeyPatch) -> None:  # noqa: F811
    """A URL with a password is shown masked everywhere crib prints the store's locator."""
    from urllib.parse import urlsplit, urlunsplit

    parts = urlsplit(pg_url)
    user, host = parts.netloc.rsplit("@", 1) if "@" in parts.netloc else ("postgres", parts.netloc)
    with_secret = urlunsplit((parts.scheme, f"{user.split(':')[0]}:hunter2secret@{host}", parts.path, parts.query, ""))
    monkeypatch.setenv("CRIB_DB", with_secret)  # the test server trusts local connections: any password works
    assert crib("write", input="Secrets stay secret.\n").returncode == 0
    for args in (("where",), ("where", "--json"), ("config",), ("doctor",), ("stats",), ("log",)):
        result = crib(*args)
        shown = result.stdout + result.stderr
        assert "hunter2secret" not in shown, args
    assert "***" in crib("where").stdout
    monkeypatch.setenv("CRIB_DB", with_secret.replace(parts.path, "/no_such_database"))
    failed = crib("list")
    assert failed.returncode != 0 and "hunter2secret" not in failed.stdout + failed.stderr and "***" in failed.stderr


def test_a_database_crib_never_wrote_to_reads_as_no_store_yet(pg_server: str, crib: Any, tmp_path: Path) -> None:  # noqa: F811
    """Like a missing file: retrieve and the hooks print nothing and log nothing; a write creates it."""
    import json

    from crib_plugin.store.postgres import create_database

    url = create_database(pg_server, f"crib_empty_{os.getpid()}", replace=True)
    env = {"CRIB_DB": url, "CRIB_HOOK_TIMEOUT": "60"}  # a loaded machine must not turn a slow hook into a logged failure
    assert crib("retrieve", input="what database did we choose?\n", env=env).stdout == ""
    for event, extra in (("user-prompt-submit", {"prompt": "what database?"}), ("session-start", {"source": "startup"})):
        hook = json.dumps({"hook_event_name": "", "session_id": "s1", "cwd": str(tmp_path), **extra})
        result = crib("hook", event, input=hook, env=env)
        assert result.returncode == 0 and result.stdout == ""
    assert not (tmp_path / "crib.log").exists(), (tmp_path / "crib.log").read_text()  # CRIB_ERROR_LOG: nothing was a failure
    assert crib("write", "type=decision Chose PostgreSQL.", env=env).returncode == 0
    assert "Chose PostgreSQL" in crib("retrieve", input="which database did we choose?\n", env=env).stdout
