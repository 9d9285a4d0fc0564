"""Crash safety and progress (issue 10, item 2).

Bulk import commits in batches as it goes: a crash keeps every batch before it, and a rerun skips
what is stored *before* embedding it (no duplicates, no repeated work). ``on_progress`` follows
the batches. The scaled-down SIGKILL run is ``bench/kill.py`` itself (5 kills); its full size
(50 kills) is quoted in bench/README.md.
"""

from __future__ import annotations

import sys
from pathlib import Path
from typing import Any

import pytest

from crib_plugin import Memory

ROOT = Path(__file__).resolve().parent.parent


class CountingEmbedder:
    """The real offline embedder, counting the texts it is asked to embed."""

    def __init__(self, inner: Any) -> None:
        self.inner = inner
        self.texts = 0

    def __getattr__(self, name: str) -> Any:
        return getattr(self.inner, name)

    def embed_documents(self, texts: Any) -> Any:
        self.texts += len(texts)
        return self.inner.embed_documents(texts)


class Crash(Exception):
    pass


def records(n: int) -> list[dict[str, Any]]:
    return [{"content": f"record {i}: the nightly job {i} moved to the queue", "type": "note"} for i in range(n)]


def test_import_commits_in_batches_and_reports_progress(db: Path) -> None:
    calls: list[tuple[int, int]] = []
    with Memory(db) as memory:
        reports = memory.import_records(records(150), on_progress=lambda done, total: calls.append((done, total)))
        assert len(reports) == 150 and memory.store.count_entries() == 150
    assert calls == [(64, 150), (128, 150), (150, 150)]


def test_an_interrupted_import_keeps_its_batches_and_resumes_without_redoing_them(db: Path) -> None:
    def crash_after_first_batch(done: int, total: int) -> None:
        raise Crash(f"killed at {done}/{total}")

    with Memory(db) as memory:
        with pytest.raises(Crash):
            memory.import_records(records(150), on_progress=crash_after_first_batch)
        assert memory.store.count_entries() == 64  # the first batch was committed before the crash
        counting = CountingEmbedder(memory.embedder())
    with Memory(db, embedder=counting) as memory:
        reports = memory.import_records(records(150))
        assert sum(r.duplicate for r in reports) == 64
        assert memory.store.count_entries() == 150
        dups = memory.store.execute(
            "SELECT count(*) FROM (SELECT 1 FROM entries GROUP BY type, content_hash, metadata HAVING count(*) > 1)")
        assert dups[0][0] == 0
        assert memory.store.pending() == []
    # The first run's batch was committed with its vectors queued (the kill came before the
    # import's second phase): the rerun embeds those 64 and the 86 new entries, each once
    # (+1: the embedding phase's dimension probe). Nothing is embedded twice.
    assert counting.texts == 150 + 1


def test_duplicates_within_one_import_are_stored_once(db: Path) -> None:
    with Memory(db) as memory:
        reports = memory.import_records(records(3) + records(3))
        assert memory.store.count_entries() == 3
        assert [r.duplicate for r in reports] == [False] * 3 + [True] * 3
        assert [r.entry_id for r in reports[3:]] == [r.entry_id for r in reports[:3]]


def test_reindex_reports_progress(db: Path) -> None:
    with Memory(db) as memory:
        memory.import_records(records(40))
        table = memory.store.vector_space(memory.embedder_key())[0]
        with memory.store.transaction():
            memory.store.execute(f"DELETE FROM {table}")
        calls: list[tuple[int, int]] = []
        result = memory.reindex(on_progress=lambda done, total: calls.append((done, total)))
        assert result["embedded"] == 40
    assert calls[0] == (0, 40) and calls[-1] == (40, 40)


@pytest.mark.slow
def test_scaled_down_kill_run(tmp_path: Path) -> None:
    sys.path.insert(0, str(ROOT / "bench"))
    try:
        import kill
    finally:
        sys.path.pop(0)
    db = tmp_path / "kill.db"
    totals = kill.run(kills=5, lines=70, db=db, seed=3, log=False)
    assert totals.kills == 5
    assert totals.integrity_failures == 0, totals.problems
    assert totals.orphans == 0, totals.problems
    assert totals.duplicates == 0
    assert totals.unaccounted == 0
    assert totals.resume_failures == 0, totals.problems
    assert "| 5 | 0 | 0 | 0 | 0 | 0 |" in kill.report(totals, db)


def test_a_rerun_after_a_kill_in_the_embedding_phase_finishes_the_vectors(db: Path) -> None:
    """Killed after every entry was stored but before their vectors were (the import's second
    phase): the rerun finds nothing new to store, and still embeds what the first run left
    queued — docs/managing.md promises it."""
    def crash_while_embedding(done: int, total: int) -> None:
        raise Crash(f"killed while embedding at {done}/{total}")

    with Memory(db) as memory:
        with pytest.raises(Crash):
            memory.import_records(records(150), on_embed_progress=crash_while_embedding)
        assert memory.store.count_entries() == 150
        assert memory.store.pending(), "the kill left vectors queued"
    with Memory(db) as memory:
        reports = memory.import_records(records(150))
        assert all(r.duplicate for r in reports)
        assert memory.store.pending() == []
        table = memory.store.vector_spaces()[next(iter(memory.store.vector_spaces()))][0]
        assert memory.store.entries_without_vector(table) == []
