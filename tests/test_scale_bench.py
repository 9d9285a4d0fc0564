"""bench/scale.py runs end to end at 10³ and builds the same store twice.

No timing is asserted (figures belong to the benchmark, docs/scale.md); what is proven is that the
script builds its store through crib's own store methods, times the real console script and prints
the issue's table, the write latencies, the recall line and the import slices.
"""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest
from test_bench_scripts import bench_module, run_script, table_rows


@pytest.mark.slow
def test_scale_runs_end_to_end_at_a_thousand(tmp_path: Path) -> None:
    out = run_script("scale.py", "--sizes", "1000", "--runs", "1", "--writes", "1", "--recall", "5", "--base", "60",
                     "--import-entries", "40", "--write-vectors", "inline,background", "--cache", str(tmp_path), timeout=900)
    rows = [r for r in table_rows(out) if r[0] == "1,000"]
    assert len(rows) == 1, out
    retrieve, ratio, size = rows[0][1], rows[0][2], rows[0][5]
    assert retrieve.endswith(" ms") and float(ratio) > 0 and size.endswith("MB"), rows
    assert "`crib write` (inline) median ms by type — note" in out and "preference" in out
    assert "`crib write` (background) median ms by type — note" in out
    assert "vector recall@10 vs exact 100.0 %" in out  # below the index threshold: the exact scan itself
    assert "- import (40 entries" in out and "failed" not in out


def test_the_build_is_reproducible(tmp_path: Path) -> None:
    scale = bench_module("scale")
    vectors = np.random.default_rng(3).standard_normal((50, 384)).astype("<f4")
    snapshots = []
    for name in ("a", "b"):
        db = tmp_path / name / "scale-300-x.db"
        db.parent.mkdir()
        scale.build_store(db, 300, 50, vectors)
        from crib_plugin.store import open_store

        store = open_store(db, readonly=True)
        table = next(iter(store.vector_spaces().values()))[0]
        rows = store.execute("SELECT id, type, content, created_at FROM entries ORDER BY id")
        snapshots.append((rows, store.stored_vectors(table, [r[0] for r in rows])))
        store.close()
    assert snapshots[0] == snapshots[1] and len(snapshots[0][0]) == 300
    assert len({r[2] for r in snapshots[0][0]}) == 300  # replicas differ from their base memory


def test_a_store_with_cues_has_a_cue_and_a_cue_vector_for_every_memory(tmp_path: Path) -> None:
    scale = bench_module("scale")
    vectors = np.random.default_rng(4).standard_normal((50, 384)).astype("<f4")
    db = tmp_path / "scale-200-cues.db"
    scale.build_store(db, 200, 50, vectors, cues=True)
    from crib_plugin.core.cues import cue_of, cue_space_key
    from crib_plugin.store import open_store

    store = open_store(db, readonly=True)
    key = next(k for k in store.vector_spaces() if not k.startswith("when:"))
    content, cues = store.vector_space(key)[0], store.vector_space(cue_space_key(key))[0]
    ids = [r[0] for r in store.execute("SELECT id FROM entries ORDER BY id")]
    entries = store.get_entries(ids)
    assert all(cue_of(entries[i].metadata) for i in ids)
    assert store.vector_count(cues) == store.vector_count(content) == 200
    assert store.stored_vectors(cues, ids[:5]) != store.stored_vectors(content, ids[:5])  # a cue is not its memory
    assert len(store.cue_search('"when"', 500)) == 200  # the cues' word index holds every cue
    store.close()
