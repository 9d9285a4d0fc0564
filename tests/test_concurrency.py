"""Concurrency (issue 10, item 1): writes take the lock up front, wait for another writer with a
jittered busy handler, and several processes can create, migrate and write one store at once.

The scaled-down stress run (4 writer processes × 25 `crib write`, 2 readers) is ``bench/stress.py``
itself, imported; its full size (8 × 500, 4 readers) is quoted in bench/README.md.
"""

from __future__ import annotations

import subprocess
import sys
import threading
import time
from pathlib import Path

import apsw
import pytest

from crib_plugin.core.errors import StoreBusy
from crib_plugin.store import open_store

ROOT = Path(__file__).resolve().parent.parent


def other_connection(db: Path, timeout_ms: int = 0) -> apsw.Connection:
    conn = apsw.Connection(str(db))
    conn.setbusytimeout(timeout_ms)
    return conn


def test_a_write_transaction_holds_the_write_lock_from_its_start(db: Path) -> None:
    """BEGIN IMMEDIATE: once the transaction has begun (even having only read), no other writer
    gets in — so it can never fail half-way for a lock (a deferred one hits SQLITE_BUSY_SNAPSHOT)."""
    store = open_store(db)
    other = other_connection(db)
    try:
        with store.transaction():
            store.execute("SELECT count(*) FROM entries")
            with pytest.raises(apsw.BusyError):
                other.execute("INSERT INTO settings(key, value) VALUES ('other', '1')")
            store.execute("INSERT INTO settings(key, value) VALUES ('mine', '1')")
        other.execute("INSERT INTO settings(key, value) VALUES ('other', '1')")
        assert store.get_setting("mine") == "1" and store.get_setting("other") == "1"
    finally:
        other.close()
        store.close()


def test_a_writer_waits_for_a_lock_released_within_the_timeout(db: Path) -> None:
    store = open_store(db)
    other = other_connection(db)
    other.execute("BEGIN IMMEDIATE")
    release = threading.Timer(0.5, lambda: other.execute("COMMIT"))
    release.start()
    try:
        store.set_setting("after", "1")  # waits in the busy handler, then succeeds
        assert store.get_setting("after") == "1"
    finally:
        release.join()
        other.close()
        store.close()


def test_a_lock_held_past_the_timeout_is_one_clear_error(db: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("CRIB_BUSY_TIMEOUT", "0.3")
    store = open_store(db)
    other = other_connection(db)
    other.execute("BEGIN IMMEDIATE")
    try:
        started = time.monotonic()
        with pytest.raises(StoreBusy, match="locked by another writer"):
            store.set_setting("never", "1")
        assert time.monotonic() - started >= 0.3
    finally:
        other.execute("ROLLBACK")
        other.close()
        store.close()


@pytest.mark.slow
def test_eight_simultaneous_first_writes_on_a_new_store(tmp_path: Path) -> None:
    """They race to create and migrate the store: every one must succeed, once each."""
    db = tmp_path / "new" / "crib.db"
    import os

    from conftest import run_crib  # noqa: F401 - same environment as the crib fixture

    env = dict(os.environ, CRIB_DB=str(db))
    procs = [
        subprocess.Popen([sys.executable, "-m", "crib_plugin", "write", f"first write number {i}"], env=env,
                         stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
        for i in range(8)
    ]
    results = [(p.wait(timeout=600), p.stdout.read(), p.stderr.read()) for p in procs]  # type: ignore[union-attr]
    for code, out, err in results:
        assert code == 0, err
        assert "stored entry" in out
    conn = apsw.Connection(str(db), flags=apsw.SQLITE_OPEN_READONLY)
    assert list(conn.execute("SELECT count(*) FROM entries"))[0][0] == 8
    assert list(conn.execute("SELECT count(*) FROM vector_spaces"))[0][0] == 1
    conn.close()
    assert sorted(p.name for p in db.parent.iterdir() if ".new" in p.name) == []  # no temp store left


@pytest.mark.slow
def test_scaled_down_stress_run(tmp_path: Path) -> None:
    sys.path.insert(0, str(ROOT / "bench"))
    try:
        import stress
    finally:
        sys.path.pop(0)
    # four writers racing, two readers: the contention is in the concurrency, not the count (each
    # write is a cold process; bench/stress.py runs the 4,000-write version)
    result = stress.run(writers=4, writes=8, readers=2, db=tmp_path / "stress.db", pause=0.2)
    assert result["attempted"] == 32
    assert result["failed"] == 0, result["failures"]
    assert result["lost"] == 0
    assert result["stored"] == 32 and result["entries_in_store"] == 32
    assert result["reader_errors"] == 0, result["read_failures"]
    assert result["reads"] > 0
    assert result["integrity"] == "ok"
    assert "| 32 | 32 | 32 | 0 | 0 |" in stress.report(result)
