"""Supersession on a crowded store finds the same predecessor as on a small one.

On a big store the write path no longer ranks the whole store for a new entry's every word: words
held by more than ``COMMON_DOCS`` entries are left out of its full-text search
(:func:`crib_plugin.supersede.uncommon_expression`), and its vector search goes through the side
index (:mod:`crib_plugin.store.vector_index`). Here both thresholds are lowered and the store is
padded with older look-alike notes that share the cases' common words, and the cases of
``tests/test_supersede.py`` must still link the same entries.
"""

from __future__ import annotations

from typing import Any, Callable

import pytest
import test_supersede as cases

from crib_plugin.memory import NewEntry
from crib_plugin.store import vector_index
from crib_plugin.text.common_terms import RAREST_KEPT, uncommon_expression
from crib_plugin.write import supersede

FILLER = (
    "Note {n}: the CI job builds the web app, runs the msrv check and the build step, "
    "and the user reads the shell output of the job in the CI log ({n})."
)


_CROWD_VECTORS: dict[tuple[Any, ...], list[Any]] = {}


def _crowd(memory: Any, count: int = 60) -> None:
    """Pad the store with ``count`` look-alike notes through the real write path.

    Their vectors are the embedder's own, computed by the first test of this process to crowd a
    store and then reused (the same texts, the same model): embedding the 60 notes is nearly all of
    a crowding's CPU, and every test here crowds."""
    real = memory.embed_texts

    def embed_texts(contents: Any, previous: Any, notes: list[str]) -> list[Any] | None:
        key = (memory.embedder_key(), tuple(contents), tuple(previous))
        if key not in _CROWD_VECTORS:
            vectors = real(contents, previous, notes)
            if vectors is None:
                return None
            _CROWD_VECTORS[key] = [v.copy() for v in vectors]
        return [v.copy() for v in _CROWD_VECTORS[key]]

    memory.embed_texts = embed_texts
    try:
        memory.write_many([NewEntry(FILLER.format(n=n), "note", created_at=f"2025-12-{1 + n % 28:02d}T09:00:00Z")
                           for n in range(count)], extract=False)
    finally:
        del memory.embed_texts  # the instance attribute: the class's method again


@pytest.mark.parametrize("case", [
    cases.test_a_decision_naming_the_old_value_supersedes_the_decision_not_the_error,
    cases.test_an_error_is_superseded_only_by_an_entry_naming_its_fix,
    cases.test_a_preference_that_changes_supersedes_the_old_one,
    cases.test_a_look_alike_does_not_take_over_a_chain,
], ids=lambda f: f.__name__[5:40])
@pytest.mark.parametrize("value_docs", [supersede.VALUE_DOCS, 0], ids=["holders-read", "ranked-search"])
def test_same_predecessor_in_a_crowded_store(
    memory: Any, monkeypatch: pytest.MonkeyPatch, case: Callable[[Any], None], value_docs: int,
) -> None:
    """Both ways of finding a named value's holders: all of them read (a value few entries hold),
    and the ranked searches (``VALUE_DOCS`` 0: every value counts as common)."""
    monkeypatch.setattr(supersede, "COMMON_DOCS", 20)
    monkeypatch.setattr(supersede, "VALUE_DOCS", value_docs)
    monkeypatch.setattr(vector_index, "MIN_VECTORS", 20)
    _crowd(memory)
    case(memory)
    table = memory.store.vector_space(memory.embedder_key())[0]
    assert vector_index.usable_index(memory.store, table, 384) is not None  # the index was in use


def test_common_words_leave_the_supersession_search(memory: Any, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(supersede, "COMMON_DOCS", 20)
    text = "MSRV raised from 1.74 to 1.80 so the CI job runs LazyLock"
    small = uncommon_expression(memory.store, text, supersede.COMMON_DOCS)
    assert "\"job\"" in small and "\"lazylock\"" in small  # a small store: every word searched
    _crowd(memory)
    crowded = uncommon_expression(memory.store, text, supersede.COMMON_DOCS)
    assert "\"job\"" not in crowded and "\"ci\"" not in crowded
    assert "\"lazylock\"" in crowded and "\"1 74\"" in crowded and "\"raised\"" in crowded and "\"msrv\"" not in crowded
    only_common = uncommon_expression(memory.store, "the CI job runs the build step", supersede.COMMON_DOCS)
    assert only_common.count(" OR ") == RAREST_KEPT - 1  # never nothing: the rarest few


def test_a_named_value_reads_its_holders_not_a_ranking(memory: Any, monkeypatch: pytest.MonkeyPatch) -> None:
    """A decision naming a value few entries hold weighs each of them after one unranked read of
    the full-text index: no BM25 ranking of its whole text, no word counted against the common-word
    cut (issue 23: that was ≈ 70 ms of a 60-word decision's write at 10⁶ memories)."""
    monkeypatch.setattr(supersede, "COMMON_DOCS", 20)
    _crowd(memory)
    old = memory.write("type=preference Shell: the user uses fish, so give shell snippets in fish syntax.",
                       created_at="2026-01-02T10:00:00Z")
    text = "The user switched the CI job shell from fish to zsh; shell snippets in the CI log use export again."
    store, seen = memory.store, []
    real = store.execute
    monkeypatch.setattr(store, "execute", lambda sql, bindings=(): seen.append(sql) or real(sql, bindings))
    with store.transaction():
        new = store.insert_entry("decision", text, "2026-02-01T10:00:00Z", {})
        seen.clear()
        assert supersede.record_supersession(store, new, "decision", text, "2026-02-01T10:00:00Z", [], deferred=True) == [old]
    searches = [sql for sql in seen if "MATCH" in sql]
    assert len(searches) == 1 and not any("bm25" in sql for sql in seen), searches
