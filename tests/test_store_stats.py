"""The store's cached statistics (entry count, term document frequencies) never go stale."""

from __future__ import annotations

from pathlib import Path

import pytest

from crib_plugin.store import open_store


def _add(store, text: str) -> int:  # type: ignore[no-untyped-def]
    with store.transaction():
        return store.insert_entry("note", text, "2026-11-22T00:00:00Z", {})


def test_counts_follow_this_connections_writes(tmp_path: Path) -> None:
    store = open_store(tmp_path / "a.db")
    assert store.count_entries() == 0 and store.term_document_frequency("sqlite") == 0
    first = _add(store, "Chose SQLite for storage.")
    assert store.count_entries() == 1 and store.term_document_frequency("sqlite") == 1
    with store.transaction():
        store.delete_entry(first)
    assert store.count_entries() == 0 and store.term_document_frequency("sqlite") == 0


def test_counts_follow_another_connections_commits(tmp_path: Path) -> None:
    reader, writer = open_store(tmp_path / "a.db"), open_store(tmp_path / "a.db")
    assert reader.count_entries() == 0 and reader.term_document_frequency("postgr") == 0
    _add(writer, "Switched to Postgres.")
    assert reader.count_entries() == 1  # PRAGMA data_version moved: the cache was dropped
    assert reader.term_document_frequency("postgr") == 1


def test_a_rolled_back_write_leaves_no_cached_count(tmp_path: Path) -> None:
    store = open_store(tmp_path / "a.db")
    with pytest.raises(RuntimeError):
        with store.transaction():
            store.insert_entry("note", "Chose SQLite.", "2026-11-22T00:00:00Z", {})
            assert store.count_entries() == 1  # read inside the transaction
            raise RuntimeError("abort")
    assert store.count_entries() == 0


def test_counts_are_read_once_while_nothing_changes(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    store = open_store(tmp_path / "a.db")
    _add(store, "Chose SQLite for storage.")
    store.count_entries(), store.term_document_frequency("sqlite")
    seen: list[str] = []
    original = store.execute

    def spy(sql: str, bindings=()):  # type: ignore[no-untyped-def]
        seen.append(sql)
        return original(sql, bindings)

    monkeypatch.setattr(store, "execute", spy)
    assert store.count_entries() == 1 and store.term_document_frequency("sqlite") == 1
    assert all(sql.startswith("PRAGMA data_version") for sql in seen), seen
