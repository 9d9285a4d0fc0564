"""Damaged stores (issue 10, item 8): read commands never create, migrate or convert a file, and
every damaged case gives one clear line naming the cause and leaves the file byte-identical.

Cases: an empty file, a foreign SQLite database, a truncated store, a store of a newer schema
version, an older schema on a read command, a full database (``PRAGMA max_page_count``), a
read-only store, and an entry id outside SQLite's range.
"""

from __future__ import annotations

import hashlib
import os
import shutil
from pathlib import Path
from typing import Any, Callable

import apsw
import pytest

from crib_plugin.core.errors import NotACribStore, StoreCorrupt, StoreFull, StoreOutdated, StoreReadOnly, StoreTooNew

READ_COMMANDS: list[tuple[str, ...]] = [("export",), ("search", "sqlite"), ("facts",)]
TIMEOUT = 180


def digest(path: Path) -> str:
    return hashlib.sha256(path.read_bytes()).hexdigest()


def one_clean_line(stderr: str, *words: str) -> None:
    lines = [line for line in stderr.splitlines() if line.strip()]
    assert len(lines) == 1, stderr
    assert "Traceback" not in stderr
    for word in words:
        assert word in lines[0], lines[0]


@pytest.fixture(scope="module")
def good_store(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """A small real store built once (three entries), copied by the tests that need one."""
    from crib_plugin import Memory
    from crib_plugin.core.config import Settings

    path = tmp_path_factory.mktemp("good") / "crib.db"
    with Memory(path, settings=Settings(db=path)) as memory:
        for text in ("We chose SQLite with WAL for the store.", "Alice prefers tabs.", "The deploy runs at noon."):
            memory.write(text)
    return path


def copy_store(good: Path, to: Path) -> Path:
    shutil.copy(good, to)
    for suffix in ("-wal", "-shm"):
        if Path(f"{good}{suffix}").exists():
            shutil.copy(f"{good}{suffix}", f"{to}{suffix}")
    return to


def check_every_command(crib: Callable[..., Any], db: Path, *words: str, write_too: bool = True) -> None:
    """Each read command (and write) fails with one line naming the cause; retrieve exits 0."""
    before = digest(db)
    env = {"CRIB_DB": str(db)}
    for command in READ_COMMANDS:
        result = crib(*command, env=env, timeout=TIMEOUT)
        assert result.returncode == 1, (command, result.stdout, result.stderr)
        one_clean_line(result.stderr, *words)
        assert result.stdout == ""
    result = crib("retrieve", input="what did we choose for the store?", env=env, timeout=TIMEOUT)
    assert result.returncode == 0 and result.stdout == ""
    one_clean_line(result.stderr, *words)
    doctor = crib("doctor", env=env, timeout=TIMEOUT)
    assert "Traceback" not in doctor.stderr and words[0] in doctor.stdout
    if write_too:
        result = crib("write", "a new memory", env=env, timeout=TIMEOUT)
        assert result.returncode == 1
        one_clean_line(result.stderr, *words)
    assert digest(db) == before, "the file changed"


def test_empty_file(crib: Callable[..., Any], tmp_path: Path) -> None:
    db = tmp_path / "empty.db"
    db.write_bytes(b"")
    check_every_command(crib, db, "empty")
    assert db.stat().st_size == 0


def test_foreign_sqlite_database_is_not_migrated_or_switched_to_wal(crib: Callable[..., Any], tmp_path: Path) -> None:
    db = tmp_path / "app.db"
    conn = apsw.Connection(str(db))
    conn.execute("CREATE TABLE users(id INTEGER PRIMARY KEY, name TEXT); INSERT INTO users(name) VALUES ('ann')")
    conn.close()
    check_every_command(crib, db, "did not create", "users")
    conn = apsw.Connection(str(db), flags=apsw.SQLITE_OPEN_READONLY)
    assert list(conn.execute("PRAGMA journal_mode"))[0][0] == "delete"
    conn.close()


def test_not_sqlite_at_all(crib: Callable[..., Any], tmp_path: Path) -> None:
    db = tmp_path / "notes.db"
    db.write_text("these are my notes, not a database\n" * 50)
    check_every_command(crib, db, "not a SQLite database")


def test_truncated_store(crib: Callable[..., Any], good_store: Path, tmp_path: Path) -> None:
    conn = apsw.Connection(str(good_store))
    conn.execute("PRAGMA wal_checkpoint(TRUNCATE)")
    conn.close()
    db = tmp_path / "crib.db"
    db.write_bytes(good_store.read_bytes()[:20000])
    check_every_command(crib, db, "truncated")


def test_newer_schema_version(crib: Callable[..., Any], good_store: Path, tmp_path: Path) -> None:
    db = copy_store(good_store, tmp_path / "crib.db")
    conn = apsw.Connection(str(db))
    conn.execute("PRAGMA user_version = 999")
    conn.execute("PRAGMA wal_checkpoint(TRUNCATE)")
    conn.close()
    check_every_command(crib, db, "newer", "upgrade crib")


def test_read_commands_create_nothing(crib: Callable[..., Any], tmp_path: Path) -> None:
    db = tmp_path / "missing" / "crib.db"
    env = {"CRIB_DB": str(db)}
    for command in READ_COMMANDS:
        result = crib(*command, env=env, timeout=TIMEOUT)
        assert result.returncode == 1 and "no crib database" in result.stderr
    assert crib("retrieve", input="anything", env=env, timeout=TIMEOUT).returncode == 0
    assert not db.exists() and not db.parent.exists()


def test_read_commands_work_on_a_healthy_store_without_changing_it(crib: Callable[..., Any], good_store: Path, tmp_path: Path) -> None:
    db = copy_store(good_store, tmp_path / "crib.db")
    conn = apsw.Connection(str(db))
    conn.execute("PRAGMA wal_checkpoint(TRUNCATE)")
    conn.close()
    before = digest(db)
    env = {"CRIB_DB": str(db)}
    assert len(crib("export", env=env, timeout=TIMEOUT).stdout.splitlines()) == 3
    assert "SQLite" in crib("search", "sqlite", env=env, timeout=TIMEOUT).stdout
    assert "SQLite" in crib("retrieve", input="what did we choose for the store? sqlite", env=env, timeout=TIMEOUT).stdout
    assert digest(db) == before


def test_full_database_is_one_clean_error_and_nothing_changes(good_store: Path, tmp_path: Path) -> None:
    from crib_plugin import Memory
    from crib_plugin.core.config import Settings

    db = copy_store(good_store, tmp_path / "crib.db")
    with Memory(db, settings=Settings(db=db)) as memory:
        store = memory.store
        store.execute("PRAGMA wal_checkpoint(TRUNCATE)")
        before = digest(db)
        count = store.count_entries()
        pages = int(store.execute("PRAGMA page_count")[0][0])
        store.execute(f"PRAGMA max_page_count = {pages}")  # the "disk" is full now
        with pytest.raises(StoreFull, match="full.*nothing was stored"):
            memory.write("a long memory that needs new pages " * 400)
        store.execute("PRAGMA max_page_count = 1073741823")
        assert store.count_entries() == count
    assert digest(db) == before


def test_read_only_connection_names_the_cause_on_write(good_store: Path, tmp_path: Path) -> None:
    """Works as root too: a read-only open refuses writes with StoreReadOnly, not a traceback."""
    from crib_plugin import Memory
    from crib_plugin.core.config import Settings

    db = copy_store(good_store, tmp_path / "crib.db")
    with Memory(db, settings=Settings(db=db), create=False, readonly=True) as memory:
        assert len(list(memory.export())) == 3
        with pytest.raises(StoreReadOnly, match="read-only"):
            memory.write("cannot be stored")


@pytest.mark.skipif(hasattr(os, "geteuid") and os.geteuid() == 0, reason="root ignores file permissions")
def test_read_only_directory_can_be_read_and_exported(crib: Callable[..., Any], good_store: Path, tmp_path: Path) -> None:
    folder = tmp_path / "ro"
    folder.mkdir()
    db = copy_store(good_store, folder / "crib.db")
    conn = apsw.Connection(str(db))
    conn.execute("PRAGMA wal_checkpoint(TRUNCATE)")
    conn.close()
    for suffix in ("-wal", "-shm"):
        Path(f"{db}{suffix}").unlink(missing_ok=True)
    before = digest(db)
    db.chmod(0o444)
    folder.chmod(0o555)
    try:
        env = {"CRIB_DB": str(db)}
        exported = crib("export", env=env, timeout=TIMEOUT)
        assert exported.returncode == 0, exported.stderr
        assert len(exported.stdout.splitlines()) == 3
        assert "SQLite" in crib("search", "sqlite", env=env, timeout=TIMEOUT).stdout
        result = crib("write", "cannot be stored", env=env, timeout=TIMEOUT)
        assert result.returncode == 1
        one_clean_line(result.stderr, "read-only")
    finally:
        folder.chmod(0o755)
        db.chmod(0o644)
    assert digest(db) == before


def test_forget_an_id_beyond_sqlite_range(crib: Callable[..., Any]) -> None:
    assert crib("write", "something to keep", timeout=TIMEOUT).returncode == 0
    result = crib("forget", "99999999999999999999", timeout=TIMEOUT)
    assert result.returncode == 1
    one_clean_line(result.stderr, "no entry with id 99999999999999999999")


def test_error_classes_are_store_errors() -> None:
    from crib_plugin.core.errors import StoreError

    for cls in (NotACribStore, StoreCorrupt, StoreFull, StoreOutdated, StoreReadOnly, StoreTooNew):
        assert issubclass(cls, StoreError)
