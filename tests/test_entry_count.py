"""The entry count kept by triggers (migration 5) agrees with count(*) through writes and deletes,
and an upgraded store starts from its real count."""

from __future__ import annotations

from pathlib import Path

from crib_plugin import Memory


def _counted(memory: Memory) -> tuple[int, int]:
    store = memory.store
    kept = int(store.execute("SELECT n FROM entry_count WHERE id = 1")[0][0])
    return kept, int(store.execute("SELECT count(*) FROM entries")[0][0])


def test_the_kept_count_follows_writes_and_deletes(db: Path) -> None:
    with Memory(db) as memory:
        assert memory.store.count_entries() == 0
        ids = [memory.write(f"note number {i} about the release runner") for i in range(5)]
        assert _counted(memory) == (5, 5)
        with memory.store.transaction():
            memory.store.delete_entry(ids[1])
        assert _counted(memory) == (4, 4)
        assert memory.store.count_entries() == 4


def test_an_upgraded_store_starts_from_its_real_count(db: Path) -> None:
    import apsw

    with Memory(db) as memory:
        for i in range(3):
            memory.write(f"decision {i}: keep the runner on zsh")
    conn = apsw.Connection(str(db))
    conn.execute("DROP TRIGGER entries_count_ai; DROP TRIGGER entries_count_ad; DROP TABLE entry_count;"
                 "DROP INDEX entries_project; ALTER TABLE entries DROP COLUMN project;"  # migration 6, after it
                 "PRAGMA user_version = 4; PRAGMA wal_checkpoint(TRUNCATE);")
    conn.close()
    with Memory(db) as memory:
        assert _counted(memory) == (3, 3)
        memory.write("a fourth entry after the upgrade")
        assert _counted(memory) == (4, 4)
