"""CRIB_WRITE_VECTORS=background: `crib write` commits the entry (full text, facts) with its
embedding queued and a detached worker embeds it; nothing is lost and the vector-based
supersession still happens."""

from __future__ import annotations

import time
from pathlib import Path

from conftest import run_crib

from crib_plugin import Memory

BACKGROUND = {"CRIB_WRITE_VECTORS": "background"}


def _settled(db: Path, wanted: int, timeout: float = 60.0) -> Memory:
    """The store once ``wanted`` entries have vectors and nothing is queued (the worker is done)."""
    deadline = time.monotonic() + timeout
    while True:
        memory = Memory(db, create=False)
        store = memory.store
        table = store.vector_space(memory.embedder_key())
        done = table is not None and store.vector_count(table[0]) >= wanted and not store.pending()
        if done or time.monotonic() > deadline:
            return memory
        memory.close()
        time.sleep(0.5)


def test_a_background_write_is_embedded_by_the_worker(db: Path) -> None:
    first = run_crib("write", "--type", "decision", "The atlas service pins Node 20 in its build image and deploy workers.", env=BACKGROUND)
    assert first.returncode == 0, first.stderr
    assert "vector queued (embedded in the background)" in first.stdout
    with _settled(db, 1) as memory:
        assert memory.store.pending() == []
        assert memory.store.vector_count(memory.store.vector_space(memory.embedder_key())[0]) == 1
    second = run_crib("write", "--type", "decision", "The atlas service now uses Node 22 in its build image and deploy workers.", env=BACKGROUND)
    assert second.returncode == 0, second.stderr
    with _settled(db, 2) as memory:
        assert memory.store.pending() == []
        assert memory.store.superseded([1, 2]) == {1: 2}  # found by vector, after the write returned
        assert [h.entry.id for h in memory.search("atlas Node 22", limit=3)][:1] == [2]


def test_a_small_store_embeds_inline_by_default(db: Path) -> None:
    result = run_crib("write", "a note about the release runner")
    assert result.returncode == 0 and ", vector," in result.stdout


def test_auto_leaves_a_cold_write_to_a_big_store_to_the_worker(monkeypatch) -> None:
    from types import SimpleNamespace

    from crib_plugin.store import vector_index
    from crib_plugin.write.deferred import in_background

    monkeypatch.delenv("CRIB_WRITE_VECTORS", raising=False)  # auto, the default
    monkeypatch.setattr(vector_index, "MIN_VECTORS", 100)
    big = SimpleNamespace(path=Path("/tmp/crib.db"), count_entries=lambda: 100)
    small = SimpleNamespace(path=Path("/tmp/crib.db"), count_entries=lambda: 99)
    assert in_background(big, 1)
    assert not in_background(big, 1, model_loaded=True)  # a warm server embeds one entry in milliseconds
    assert not in_background(small, 1)
    assert not in_background(big, 2)


def test_only_a_single_write_to_a_sqlite_file_goes_to_the_background(monkeypatch) -> None:
    from types import SimpleNamespace

    from crib_plugin.core.dburl import ServerURL
    from crib_plugin.write.deferred import in_background

    monkeypatch.setenv("CRIB_WRITE_VECTORS", "background")
    sqlite = SimpleNamespace(path=Path("/tmp/crib.db"))
    assert in_background(sqlite, 1)
    assert not in_background(sqlite, 2)  # a bulk write embeds in its own batches (or its second phase)
    assert not in_background(SimpleNamespace(path=ServerURL("postgresql://u:p@localhost/crib")), 1)  # no file for a worker
    monkeypatch.setenv("CRIB_WRITE_VECTORS", "inline")
    assert not in_background(sqlite, 1)
