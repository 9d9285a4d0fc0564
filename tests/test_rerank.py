"""Rerank when over budget: the Ollama path (fake server), failing open, offline MMR."""

from __future__ import annotations

import math
import re
import struct
import subprocess
import sys
import time
from pathlib import Path

import numpy as np
import pytest

from crib_plugin import Memory
from crib_plugin.core.records import Entry, Hit, Query, Retrieval
from crib_plugin.read.rerank import (
    MODEL_DEPTH,
    RerankReport,
    _jaccard,
    _words,
    mmr_order,
    over_budget,
    rerank_candidates,
    reranker_choice,
    similarity_matrix,
)
from crib_plugin.store.sqlite import open_store

DEPLOY = "The deploy script lives in scripts/deploy.sh and needs the AWS profile named prod."
DEPLOY_TWIN = "The deploy script lives in scripts/deploy.sh and it needs the AWS profile named prod."
NOTIFY = "Deploy notifications are posted to the ops channel by the deploy script."
ROLLBACK = "Rolling back a deploy: run the deploy script with --rollback and the release tag."


def _hit(entry_id: int, score: float, content: str, created: str = "2023-01-01T00:00:00Z") -> Hit:
    return Hit(Entry(entry_id, "note", content, created), score)


def _write_all(memory: Memory, texts: list[str]) -> list[int]:
    return [memory.write(t, created_at=f"2023-01-{i + 1:02d}T00:00:00Z") for i, t in enumerate(texts)]


def test_choice_from_environment() -> None:
    assert reranker_choice({}) == "mmr"
    assert reranker_choice({"CRIB_RERANK_MODEL": "gemma3:1b"}) == "ollama"
    assert reranker_choice({"CRIB_RERANK": "ollama"}) == "ollama"
    assert reranker_choice({"CRIB_RERANK": "off", "CRIB_RERANK_MODEL": "x"}) == "off"
    assert reranker_choice({"CRIB_RERANK": "mmr", "CRIB_RERANK_MODEL": "x"}) == "mmr"


def test_over_budget() -> None:
    hits = [_hit(i, 1.0 / i, "word " * 20) for i in range(1, 4)]
    assert not over_budget(hits, 8000, 10)
    assert over_budget(hits, 8000, 2)
    assert over_budget(hits, 500, 10)


def test_nothing_happens_when_everything_fits(memory: Memory) -> None:
    _write_all(memory, [DEPLOY, NOTIFY])
    retrieval = memory.recall("deploy script")
    before = [h.entry.id for h in retrieval.hits]
    assert [h.entry.id for h in rerank_candidates(memory, retrieval, 8000, 10)] == before
    assert "rerank" not in retrieval.timings


def test_offline_mmr_removes_near_duplicate_from_injected_top(memory: Memory, monkeypatch: pytest.MonkeyPatch) -> None:
    # The rerank stage alone: the per-entry cut (tested in test_evidence.py) would leave only the twins.
    ids = dict(zip("DTNR", _write_all(memory, [DEPLOY, DEPLOY_TWIN, NOTIFY, ROLLBACK])))
    prompt = "where does the deploy script live and which AWS profile does it need?"
    monkeypatch.setenv("CRIB_RERANK", "off")
    plain = memory.select(memory.recall(prompt), max_items=2, per_entry=False)
    assert {h.entry.id for h in plain.hits} == {ids["D"], ids["T"]}  # fused order: both twins on top
    monkeypatch.delenv("CRIB_RERANK")
    chosen = memory.select(memory.recall(prompt), max_items=2, per_entry=False)
    kept = [h.entry.id for h in chosen.hits]
    assert len(kept) == 2 and len({ids["D"], ids["T"]} & set(kept)) == 1
    assert "rerank" in chosen.timings
    assert any("near-duplicate" in note for _, note in chosen.notes)
    assert any("mmr (cosine)" in note for entry_id, note in chosen.notes if entry_id == 0)
    # deterministic
    again = memory.select(memory.recall(prompt), max_items=2, per_entry=False)
    assert [h.entry.id for h in again.hits] == kept


def test_mmr_word_overlap_fallback_without_vectors() -> None:
    hits = [_hit(1, 1.0, DEPLOY), _hit(2, 0.99, DEPLOY), _hit(3, 0.7, ROLLBACK)]
    sims, kind = similarity_matrix(None, hits)
    assert kind == "jaccard" and sims[0][1] == pytest.approx(1.0)
    report = RerankReport()
    assert [h.entry.id for h in mmr_order(hits, sims, report)] == [1, 3, 2]


def test_mmr_never_demotes_a_corrected_entry() -> None:
    hits = [_hit(1, 1.0, DEPLOY), _hit(2, 0.99, DEPLOY_TWIN), _hit(3, 0.7, ROLLBACK)]
    hits[0].entry.type = "correction"
    sims, _ = similarity_matrix(None, hits)
    assert [h.entry.id for h in mmr_order(hits, sims, RerankReport())] == [1, 2, 3]


def test_mmr_keeps_related_but_distinct_memories_in_order() -> None:
    hits = [_hit(i, 1.0 - i / 100, f"text {i}") for i in range(1, 6)]
    sims = np.full((5, 5), 0.7)
    np.fill_diagonal(sims, 1.0)
    report = RerankReport()
    assert [h.entry.id for h in mmr_order(hits, sims, report)] == [1, 2, 3, 4, 5]
    assert report.notes == []


def test_mmr_recency_prior_breaks_near_ties() -> None:
    hits = [_hit(1, 1.0, "a", "2023-01-01T00:00:00Z"), _hit(2, 0.995, "b", "2023-06-01T00:00:00Z")]
    sims = np.eye(2)
    assert [h.entry.id for h in mmr_order(hits, sims, RerankReport())] == [2, 1]
    hits[1].score = 0.9
    assert [h.entry.id for h in mmr_order(hits, sims, RerankReport())] == [1, 2]


def _cosine(a: list[float], b: list[float]) -> float:
    dot = sum(x * y for x, y in zip(a, b))
    norms = math.sqrt(sum(x * x for x in a)) * math.sqrt(sum(y * y for y in b))
    return dot / norms if norms else 0.0


def test_vector_similarities_are_cosines_computed_in_sqlite(db: Path) -> None:
    vectors = {
        1: [1.0, 2.0, 3.0, 4.0],
        2: [4.0, 3.0, 2.0, 1.0],
        3: [0.0, 0.0, 0.0, 0.0],  # no direction: similarity 0 with everything, no error
        4: [-1.0, -2.0, -3.0, -4.0],
        5: [1.0, 2.0, 3.0, 4.1],
    }
    with open_store(db) as store:
        table = store.ensure_vector_space("toy:test:4", 4)
        with store.transaction():
            for entry_id, vector in vectors.items():
                store.put_vector(table, entry_id, struct.pack("<4f", *vector))
        have, sims = store.vector_similarities(table, [5, 2, 99, 3, 1, 2, 4])  # 99 has no vector; 2 twice
        assert have == [5, 2, 3, 1, 4]
        for i, a in enumerate(have):
            assert sims[i][i] == 1.0
            for j, b in enumerate(have):
                if i != j:
                    assert sims[i][j] == sims[j][i]
                    assert sims[i][j] == pytest.approx(_cosine(vectors[a], vectors[b]), abs=1e-6)
        assert sims[have.index(1)][have.index(4)] == pytest.approx(-1.0, abs=1e-6)
        assert all(sims[have.index(3)][j] == 0.0 for j in range(len(have)) if have[j] != 3)
        assert store.vector_similarities(table, []) == ([], [])
        assert store.vector_similarities(table, [99]) == ([], [])
        assert store.vector_similarities(table, [2]) == ([2], [[1.0]])


def test_similarity_matrix_matches_numpy_cosine_and_mixes_in_jaccard(memory: Memory) -> None:
    ids = _write_all(memory, [DEPLOY, DEPLOY_TWIN, NOTIFY, ROLLBACK])
    entries = memory.store.get_entries(ids)
    hits = [_hit(i, 1.0 - k / 10, entries[i].content) for k, i in enumerate(ids)]
    table, dim = memory.store.vector_space(memory.embedder_key())
    memory.store.load_vec()
    blobs = dict(memory.store.execute(f"SELECT rowid, embedding FROM {table} WHERE rowid IN ({','.join('?' * len(ids))})", ids))
    matrix = np.stack([np.frombuffer(blobs[i], dtype="<f4") for i in ids]).astype(np.float64)
    matrix /= np.linalg.norm(matrix, axis=1, keepdims=True)
    expected = matrix @ matrix.T
    np.fill_diagonal(expected, 1.0)
    sims, kind = similarity_matrix(memory, hits)
    assert kind == "cosine"
    assert np.max(np.abs(np.array(sims) - expected)) < 1e-6
    assert sims[0][1] > 0.95  # the twins

    memory.store.execute(f"DELETE FROM {table} WHERE rowid = ?", (ids[3],))  # ROLLBACK loses its vector
    sims, kind = similarity_matrix(memory, hits)
    assert kind == "cosine+jaccard"
    assert sims[0][1] == pytest.approx(expected[0][1], abs=1e-6)
    assert sims[0][3] == sims[3][0] == pytest.approx(_jaccard(_words(DEPLOY), _words(ROLLBACK)))  # word overlap now
    assert sims[2][3] == pytest.approx(_jaccard(_words(NOTIFY), _words(ROLLBACK))) and sims[3][3] == 1.0


def test_mmr_order_same_for_lists_and_numpy_arrays() -> None:
    hits = [_hit(1, 1.0, DEPLOY), _hit(2, 0.99, DEPLOY_TWIN), _hit(3, 0.8, NOTIFY), _hit(4, 0.7, ROLLBACK)]
    sims = [
        [1.0, 0.99, 0.6, 0.5],
        [0.99, 1.0, 0.6, 0.5],
        [0.6, 0.6, 1.0, 0.4],
        [0.5, 0.5, 0.4, 1.0],
    ]
    as_lists, as_array = RerankReport(), RerankReport()
    order = [h.entry.id for h in mmr_order(hits, sims, as_lists)]
    assert order == [1, 3, 4, 2]
    assert as_lists.notes == [(2, "near-duplicate of entry 1 (similarity 0.990): moved down")]
    assert [h.entry.id for h in mmr_order(hits, np.array(sims), as_array)] == order
    assert as_array.notes == as_lists.notes


def test_rerank_does_not_import_numpy() -> None:
    """The per-prompt process must not pay for numpy (≈120 ms) just to rerank."""
    code = "import sys, crib_plugin.read.rerank; assert 'numpy' not in sys.modules, 'numpy imported'"
    result = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=60)
    assert result.returncode == 0, result.stderr


# -- the Ollama path -----------------------------------------------------------------------------

GRADES = {"prod": 2, "ops channel": 9, "rollback": 6}


def _grade_for(request) -> dict[str, int]:  # type: ignore[no-untyped-def]
    memory_text = request.body["messages"][-1]["content"].split("Memory:", 1)[1]
    for needle, grade in GRADES.items():
        if needle in memory_text:
            return {"score": grade}
    return {"score": 0}


def _over_budget_retrieval(memory: Memory) -> tuple[Retrieval, dict[str, str]]:
    _write_all(memory, [DEPLOY, NOTIFY, ROLLBACK])
    retrieval = memory.recall("deploy script")
    assert len(retrieval.hits) == 3
    return retrieval, {h.entry.id: h.entry.content for h in retrieval.hits}


def test_ollama_rerank_orders_by_grade_and_never_rewrites(memory: Memory, fake_ollama_env, monkeypatch) -> None:
    monkeypatch.setenv("CRIB_RERANK_MODEL", "gemma3:1b")
    fake_ollama_env.respond_with(_grade_for)
    retrieval, texts = _over_budget_retrieval(memory)
    chosen = memory.select(retrieval, max_items=2)
    contents = [h.entry.content for h in chosen.hits]
    assert contents == [NOTIFY, ROLLBACK]  # grades 9, 6; DEPLOY (2) is cut
    assert all(texts[h.entry.id] == h.entry.content for h in chosen.hits)  # same text, untouched
    assert memory.entry(chosen.hits[0].entry.id).content == NOTIFY
    chats = fake_ollama_env.requests_to("/api/chat")
    assert len(chats) == 3
    for request in chats:
        assert request.options["temperature"] == 0
        assert request.body["model"] == "gemma3:1b"
        assert request.body["format"]["required"] == ["score"]
    assert any("rerank grade 9/10" in note for _, note in chosen.notes)


def test_ollama_rerank_grades_at_most_model_depth(memory: Memory, fake_ollama_env, monkeypatch) -> None:
    monkeypatch.setenv("CRIB_RERANK", "ollama")
    fake_ollama_env.respond_with(lambda request: {"score": 5})
    _write_all(memory, [f"Deploy step {i}: run the deploy script stage {i} carefully." for i in range(MODEL_DEPTH + 5)])
    retrieval = memory.recall("deploy script stage")
    assert len(retrieval.hits) > MODEL_DEPTH
    order = [h.entry.id for h in retrieval.hits]
    ranked = rerank_candidates(memory, retrieval, 8000, 10)
    assert len(fake_ollama_env.requests_to("/api/chat")) == MODEL_DEPTH
    assert [h.entry.id for h in ranked] == order  # equal grades: fused order stays


def test_ollama_failure_keeps_fused_order(memory: Memory, fake_ollama_env, monkeypatch) -> None:
    monkeypatch.setenv("CRIB_RERANK_MODEL", "gemma3:1b")
    fake_ollama_env.fail(500, "boom", path="/api/chat")
    retrieval, _ = _over_budget_retrieval(memory)
    fused = [h.entry.id for h in retrieval.hits]
    chosen = memory.select(retrieval, max_items=2)
    assert [h.entry.id for h in chosen.hits] == fused[:2]
    assert any(entry_id == 0 and "failed open" in note for entry_id, note in chosen.notes)


def test_ollama_too_slow_keeps_fused_order(memory: Memory, fake_ollama_env, monkeypatch) -> None:
    monkeypatch.setenv("CRIB_RERANK_MODEL", "gemma3:1b")
    monkeypatch.setenv("CRIB_RERANK_DEADLINE", "0.3")
    fake_ollama_env.slow(5, path="/api/chat")
    retrieval, _ = _over_budget_retrieval(memory)
    fused = [h.entry.id for h in retrieval.hits]
    started = time.monotonic()
    chosen = memory.select(retrieval, max_items=2)
    assert time.monotonic() - started < 2.0
    assert [h.entry.id for h in chosen.hits] == fused[:2]
    assert any(re.search(r"failed open.*within 0.3s", note) for _, note in chosen.notes)


def test_inside_a_hook_the_model_reranker_gives_up_by_the_hook_s_deadline(memory: Memory, fake_ollama_env, monkeypatch) -> None:
    """CRIB_RERANK_DEADLINE is 3 s by default, longer than a hook's 2 s budget: inside a hook the
    reranker stops in time for the fused order to be printed (crib_plugin.deadline.capped)."""
    from crib_plugin.core import deadline

    monkeypatch.setenv("CRIB_RERANK_MODEL", "gemma3:1b")
    fake_ollama_env.slow(5, path="/api/chat")
    retrieval, _ = _over_budget_retrieval(memory)
    monkeypatch.setattr(deadline, "_hard_deadline", time.monotonic() + 0.5)
    chosen = memory.select(retrieval, max_items=2)
    (note,) = [n for _, n in chosen.notes if "failed open" in n]
    assert float(re.search(r"within ([\d.]+)s", note).group(1)) < 0.5


def test_ollama_not_answering_falls_back_to_offline(memory: Memory, monkeypatch) -> None:
    monkeypatch.setenv("CRIB_RERANK_MODEL", "gemma3:1b")  # OLLAMA_HOST points at a closed port
    retrieval, _ = _over_budget_retrieval(memory)
    chosen = memory.select(retrieval, max_items=2)
    assert len(chosen.hits) == 2
    assert any("offline MMR instead" in note for _, note in chosen.notes)


def test_reranker_bug_fails_open() -> None:
    class Broken:
        workers = 2

        def score(self, query, texts):  # type: ignore[no-untyped-def]
            raise RuntimeError("plugin bug")

    from crib_plugin.read.rerank import model_order

    hits = [_hit(1, 1.0, "a"), _hit(2, 0.5, "b")]
    report = RerankReport()
    assert model_order(Broken(), "q", hits, report) == hits
    assert "plugin bug" in report.notes[0][1]


def test_rerank_explained(memory: Memory) -> None:
    _write_all(memory, [DEPLOY, DEPLOY_TWIN, NOTIFY])
    from crib_plugin.output.explain import explain_text

    chosen = memory.select(memory.recall("deploy script AWS profile"), max_items=1)
    text = explain_text(chosen)
    assert "over budget: reranked by mmr" in text and "rerank" in text.split("timings:")[1]


def test_unused_retrieval_fields_survive() -> None:
    retrieval = Retrieval(query=Query(text="q"))
    assert rerank_candidates(None, retrieval, 8000, 10) == []  # type: ignore[arg-type]
