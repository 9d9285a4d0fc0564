"""Vectors stored after their entries (crib_plugin.write.deferred): the import's two phases lose
nothing — the entries are queued in their own transaction, found by full text meanwhile, and the
supersession steps that need a vector run once it is stored, with the inline write's outcome."""

from __future__ import annotations

from pathlib import Path

from crib_plugin import Memory
from crib_plugin.core.write_types import NewEntry
from crib_plugin.write.deferred import DEFERRED
from crib_plugin.write.maintenance import embed_pending

ENTRIES = [
    ("decision", "2025-01-01T00:00:00+00:00", "The atlas service pins Node 20 in its build image and deploy workers."),
    ("note", "2025-01-02T00:00:00+00:00", "The billing export runs nightly at two and writes parquet files to the archive bucket."),
    ("decision", "2025-02-01T00:00:00+00:00", "The atlas service now uses Node 22 in its build image and deploy workers."),
    ("correction", "2025-02-03T00:00:00+00:00", "Billing export actually runs nightly at three and writes parquet files to the archive bucket."),
]
"""Two supersessions found by vector resemblance (no named old value, no closed fact)."""


def _items() -> list[NewEntry]:
    return [NewEntry(text, kind, created) for kind, created, text in ENTRIES]


def test_deferred_vectors_end_as_the_inline_write_does(tmp_path: Path) -> None:
    with Memory(tmp_path / "inline.db") as memory:
        ids = [r.entry_id for r in memory.write_many(_items())]
        inline = memory.store.superseded(ids)
    assert inline  # the case exercises the vector step

    with Memory(tmp_path / "deferred.db") as memory:
        ids = [r.entry_id for r in memory.write_many(_items(), defer_vectors=True)]
        store = memory.store
        assert store.pending(memory.embedder_name()) == ids  # queued in the entries' transactions
        assert store.superseded(ids) == {}  # the vector steps wait for the vectors
        reasons = {r[0] for r in store.execute("SELECT reason FROM pending_embeddings")}
        assert reasons == {DEFERRED}
        assert ids[2] in [h.entry.id for h in memory.search("atlas Node 22 build image", limit=5)]  # full text meanwhile
        _key, done = embed_pending(memory)
        assert done == len(ids)
        assert store.pending(memory.embedder_name()) == []
        assert store.superseded(ids) == inline


def test_import_embeds_in_a_second_phase_and_reports_both(tmp_path: Path) -> None:
    seen: dict[str, list[tuple[int, int]]] = {"write": [], "embed": []}
    records = [{"type": kind, "created_at": created, "content": text} for kind, created, text in ENTRIES]
    with Memory(tmp_path / "import.db") as memory:
        reports = memory.import_records(records, on_progress=lambda d, t: seen["write"].append((d, t)),
                                        on_embed_progress=lambda d, t: seen["embed"].append((d, t)))
        ids = [r.entry_id for r in reports]
        assert memory.store.pending() == []
        assert len(memory.store.superseded(ids)) == 2
    assert seen["write"][-1] == (4, 4)
    assert seen["embed"][0] == (0, 4) and seen["embed"][-1] == (4, 4)


def test_a_failing_model_in_the_second_phase_keeps_the_entries_queued(tmp_path: Path, monkeypatch) -> None:
    from crib_plugin.core.errors import ModelError
    from crib_plugin.write import maintenance

    def down(*_args: object, **_kwargs: object) -> None:
        raise ModelError("model down")

    monkeypatch.setattr(maintenance, "_embed_missing", down)
    with Memory(tmp_path / "down.db") as memory:
        reports = memory.import_records([{"content": text} for _k, _c, text in ENTRIES])
        assert len(memory.store.pending(memory.embedder_name())) == len(reports)
        assert any("queued for `crib reindex`" in w for w in memory.warnings)
        monkeypatch.undo()
        memory.reindex()
        assert memory.store.pending() == []
