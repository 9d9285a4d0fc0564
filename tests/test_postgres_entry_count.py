"""The entry count kept by triggers on PostgreSQL (migration 6) agrees with count(*): through
inserts, deletes, a bulk ``COPY``, concurrent writers on separate connections, and an upgrade of a
store that already holds entries."""

from __future__ import annotations

import multiprocessing
import subprocess
import sys
from pathlib import Path
from typing import Any

from crib_plugin.store import open_store
from crib_plugin.store.postgres import PostgresStore, open_postgres

T0 = "2026-01-01T00:00:00Z"


def _counted(store: PostgresStore) -> tuple[int, int]:
    """(the kept count, the real count)."""
    return store.count_entries(), int(store.execute("SELECT count(*) FROM entries")[0][0])


def test_the_kept_count_follows_inserts_deletes_and_copies(pg_url: str) -> None:  # noqa: F811
    store = open_postgres(pg_url)
    try:
        seen: list[str] = []
        run = store.execute
        store.execute = lambda sql, bindings=(): (seen.append(sql), run(sql, bindings))[1]  # type: ignore[method-assign]
        assert store.count_entries() == 0
        assert not any("FROM entries" in sql for sql in seen), seen  # read from the kept count, not count(*)
        with store.transaction():
            ids = [store.insert_entry("note", f"note {i} about the release runner", T0, {}) for i in range(5)]
        assert _counted(store) == (5, 5)
        with store.transaction():
            store.delete_entry(ids[1])
            store.delete_entry(ids[2])
        assert _counted(store) == (3, 3)
        with store.conn.cursor().copy("COPY entries(type, content, created_at, content_hash) FROM STDIN") as copy:
            for i in range(40):
                copy.write_row(("note", f"copied {i}", T0, f"h{i}"))
        assert _counted(store) == (43, 43)
        store.execute("DELETE FROM entries WHERE content LIKE 'copied 1%'")
        assert _counted(store) == (32, 32)
        store.execute("TRUNCATE entries CASCADE")
        assert _counted(store) == (0, 0)
    finally:
        store.close()


def _writer(url: str, barrier: Any, n: int) -> None:
    """One agent: ``n`` writes, each its own transaction, deleting every fifth entry it wrote."""
    store = open_store(url)
    barrier.wait()
    for i in range(n):
        with store.transaction():
            entry = store.insert_entry("note", f"writer note {i}", T0, {})
            if i % 5 == 4:
                store.delete_entry(entry)
    store.close()


def test_concurrent_writers_leave_the_count_exact(pg_url: str) -> None:  # noqa: F811
    context = multiprocessing.get_context("fork")
    writers, writes = 8, 25
    barrier = context.Barrier(writers)
    processes = [context.Process(target=_writer, args=(pg_url, barrier, writes)) for _ in range(writers)]
    for process in processes:
        process.start()
    for process in processes:
        process.join(120)
        assert process.exitcode == 0
    store = open_postgres(pg_url)
    try:
        assert _counted(store) == (writers * writes * 4 // 5,) * 2
    finally:
        store.close()


def _older_store(url: str, entries: int) -> None:
    """A store of schema version 5 (no kept count) holding ``entries`` entries."""
    with open_postgres(url) as store:
        with store.transaction():
            for i in range(entries):
                store.insert_entry("decision", f"decision {i}: keep the runner on zsh", T0, {})
        store.execute("DROP TABLE entry_count; DROP FUNCTION crib_count_entries() CASCADE; UPDATE crib_schema SET version = 5")


def test_an_upgraded_store_starts_from_its_real_count(pg_url: str) -> None:  # noqa: F811
    _older_store(pg_url, 7)
    store = open_postgres(pg_url)  # migrates to the latest version
    try:
        assert _counted(store) == (7, 7)
        with store.transaction():
            store.insert_entry("note", "an eighth entry after the upgrade", T0, {})
        assert _counted(store) == (8, 8)
    finally:
        store.close()


def test_the_count_bench_leaves_an_older_store_as_found(pg_url: str) -> None:  # noqa: F811
    _older_store(pg_url, 3)
    bench = Path(__file__).resolve().parents[1] / "bench" / "pg_count.py"
    result = subprocess.run([sys.executable, str(bench), pg_url, "--runs", "1"], capture_output=True, text=True, timeout=120)
    assert result.returncode == 0, result.stderr
    assert "schema version 5" in result.stdout and "[(3, 3)]" in result.stdout
    assert "| kept by triggers (schema 6) |" in result.stdout
    with open_postgres(pg_url, migrate=False) as store:
        assert store.execute("SELECT to_regclass('entry_count')")[0][0] is None  # rolled back
