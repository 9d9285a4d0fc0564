"""``crib migrate``: SQLite → PostgreSQL → SQLite round-trips exactly, and a killed migration resumed
gives the same result as an uninterrupted one."""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import time
from pathlib import Path
from typing import Any

import pytest

from crib_plugin import Memory
from crib_plugin.store import open_store
from crib_plugin.store.transfer import migrate_store, snapshot
from crib_plugin.write import manage

ROOT = Path(__file__).resolve().parent.parent


def _stock(path: Path, n: int = 40) -> None:
    """A store with every kind of row: threads, CJK, facts with history, a correction, a forgotten
    entry, a recall cue, a queued item, two vector spaces, settings and the audit log."""
    with Memory(path) as memory:
        for i in range(n):
            memory.write(f"Turn {i}: we discussed the cache layer and Redis option {i}.", metadata={"thread": f"chat{i % 3}"})
        memory.write("type=decision Chose SQLite for storage.")
        memory.write("type=decision We use PostgreSQL for storage now.")
        first = memory.write("使用缓存提高速度 (cache speeds things up)")
        manage.correct(memory, first, "使用缓存提高速度, measured: 3x.")
        gone = memory.write("A memory to forget.")
        memory.forget(gone)
        store = memory.store
        table = store.ensure_vector_space("fake:tiny:3", 3)
        with store.transaction():
            store.put_vector(table, first, b"\x00\x00\x80?" + b"\x00" * 8)
            store.queue_embedding(first, "other:3", "model down")
        store.set_gate("fake:tiny:3", 0.3)


def test_sqlite_to_postgres_to_sqlite_round_trips_exactly(tmp_path: Path, pg_url: str) -> None:  # noqa: F811
    origin = tmp_path / "origin.db"
    _stock(origin)
    src, pg = open_store(origin), open_store(pg_url)
    migrate_store(src, pg)
    back = open_store(tmp_path / "back.db")
    migrate_store(pg, back)
    before = snapshot(src)
    assert before["entries"] and before["relations"] and before["audit"] and before["vectors"]["fake:tiny:3"]
    assert snapshot(pg) == before
    assert snapshot(back) == before
    # the copies answer like the original: search, facts and ids
    assert {i for i, _ in pg.fts_search('"redis"', 100)} == {i for i, _ in back.fts_search('"redis"', 100)} != set()
    assert pg.cjk_search('"缓存"', 5) and back.cjk_search('"缓存"', 5)
    with pg.transaction():
        new = pg.insert_entry("note", "After the migration.", "2026-06-01T00:00:00Z", {})
    assert new > max(r[0] for r in before["entries"]) and new > max((r[3] or 0) for r in before["audit"])
    for store in (src, pg, back):
        store.close()


@pytest.mark.slow
def test_a_killed_migration_resumes_to_the_same_result(tmp_path: Path, pg_url: str) -> None:  # noqa: F811
    origin = tmp_path / "origin.db"
    _stock(origin, n=120)
    script = (
        "import sys, time\n"
        "from crib_plugin.store import open_store, transfer\n"
        "transfer.CHUNK = 10\n"
        "src, dst = open_store(sys.argv[1]), open_store(sys.argv[2])\n"
        "transfer.migrate_store(src, dst, on_progress=lambda d, t: time.sleep(0.2))\n"
    )
    env = {**os.environ, "PYTHONPATH": str(ROOT)}
    proc = subprocess.Popen([sys.executable, "-c", script, str(origin), pg_url], env=env)
    reader = open_store(pg_url, readonly=True)
    deadline = time.monotonic() + 60
    try:
        while reader.count_entries() < 30:
            assert proc.poll() is None, "the migration ended before it could be killed"
            assert time.monotonic() < deadline
            time.sleep(0.05)
        proc.send_signal(signal.SIGKILL)
        proc.wait(10)
        partial = reader.count_entries()
    finally:
        reader.close()
    src, dst = open_store(origin), open_store(pg_url)
    assert 0 < partial < src.count_entries()
    migrate_store(src, dst)  # the rerun
    assert snapshot(dst) == snapshot(src)
    src.close()
    dst.close()


def test_the_command_copies_and_refuses_to_copy_onto_itself(crib: Any, db: Path, pg_url: str) -> None:  # noqa: F811
    assert crib("write", "type=decision Chose SQLite for storage.").returncode == 0
    result = crib("migrate", "--to", pg_url)
    assert result.returncode == 0, result.stderr
    assert "entries 1" in result.stdout
    listed = crib("list", env={"CRIB_DB": pg_url}).stdout
    assert "Chose SQLite for storage." in listed
    assert crib("migrate", "--to", str(db)).returncode != 0
    again = crib("migrate", "--to", pg_url)  # the same command again copies no entry twice
    assert again.returncode == 0 and "entries" not in again.stdout
