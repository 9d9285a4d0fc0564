"""Document frequencies on a big PostgreSQL store come from the planner's statistics.

A small store counts exactly (tests compare PostgreSQL with SQLite); above ``BIG_STORE`` entries a
common lexeme's frequency is read from ``pg_stats`` (no ``count`` over its posting list) and a rare
one is counted with a ``LIMIT``. Here a small store stands in for a big one: the threshold is
lowered and ``ANALYZE`` samples every row, so the estimates equal the exact counts and the ranking
must not change.
"""

from __future__ import annotations

from collections.abc import Iterator

import pytest

from crib_plugin.store.pg_frequencies import TermStatistics
from crib_plugin.store.postgres import PostgresStore, open_postgres
from crib_plugin.text import common_terms


@pytest.fixture
def filled(pg_url: str) -> Iterator[str]:  # noqa: F811
    store = open_postgres(pg_url)
    try:
        for i in range(200):
            words = ["release notes"] if i % 4 else ["deploy checklist"]
            if i in (7, 93):
                words.append("zebrafish tank")
            topic = f"topic{chr(97 + i % 20)}"  # 10 words in 10 cues each: listed, where the aquarium (2) is not
            cue = {"when": f"when writing code on {topic}" + (" for the aquarium" if i in (7, 93) else "")} if i % 2 else {}
            store.insert_entry("decision", f"entry {i}: " + " and ".join(words), f"2026-01-01T00:00:{i % 60:02d}", cue)
        store.execute("ALTER TABLE entries ALTER COLUMN fts SET STATISTICS 1", ())  # 10 lexemes listed at most
        store.execute("ALTER TABLE entries ALTER COLUMN cue_fts SET STATISTICS 1", ())
        store.execute("ANALYZE entries", ())
    finally:
        store.close()
    yield pg_url


def statements(store: PostgresStore) -> list[str]:
    """Every statement the store runs from now on (its SQL text)."""
    seen: list[str] = []
    run = store.execute

    def recording(sql: str, bindings=()):  # type: ignore[no-untyped-def]
        seen.append(sql)
        return run(sql, bindings)

    store.execute = recording  # type: ignore[method-assign]
    return seen


def test_small_store_counts_exactly(filled: str) -> None:
    store = open_postgres(filled)
    try:
        assert not store.term_statistics().usable  # 200 entries: far below BIG_STORE
        seen = statements(store)
        assert store.term_document_frequency("note") == 150
        assert any("count(*)" in sql for sql in seen)
    finally:
        store.close()


def test_big_store_reads_common_words_from_statistics(filled: str, monkeypatch: pytest.MonkeyPatch) -> None:
    exact = open_postgres(filled)
    try:
        expected = exact.fts_search("notes OR zebrafish OR deploy", 50)
        expected_df = {stem: exact.term_document_frequency(stem) for stem in ("note", "zebrafish", "deploi")}
    finally:
        exact.close()
    monkeypatch.setattr(common_terms, "BIG_STORE", 100)
    store = open_postgres(filled)
    try:
        stats = store.term_statistics()
        assert stats.usable and stats.rows == 200 and stats.shares["note"] == pytest.approx(0.75)
        assert "zebrafish" not in stats.shares  # two entries: not among the 10 listed
        seen = statements(store)
        assert store.term_document_frequency("note") == expected_df["note"] == 150
        assert not any("count(" in sql for sql in seen), seen  # the common word: no count at all
        assert store.term_document_frequency("zebrafish") == expected_df["zebrafish"] == 2
        assert any("LIMIT" in sql and "count(" in sql for sql in seen)  # the rare word: a bounded count
        assert store.term_document_frequency("deploi") == expected_df["deploi"] == 50  # crib's stem of "deploy"
        seen.clear()
        assert store.documents_up_to("notes", 10) == 10 and store.documents_up_to("notes", 1000) == 150
        assert not any("count(" in sql for sql in seen), seen
        assert store.documents_up_to("zebrafish", 10) == 2 and store.documents_up_to("release notes", 1000) == 150
        assert any("count(" in sql for sql in seen)  # a rare word, and a phrase, are counted
        found = store.fts_search("notes OR zebrafish OR deploy", 50)
        assert [i for i, _ in found] == [i for i, _ in expected]  # the same ranking...
        assert [score for _, score in found] == pytest.approx([score for _, score in expected])  # ...and scores
        assert store.term_statistics() is stats  # read once per store
    finally:
        store.close()


def test_estimates() -> None:
    stats = TermStatistics(1_000_000, {"releas": 0.2, "note": 0.05})
    assert stats.usable and stats.rare_bound == 50_000
    assert stats.estimate("'releas'") == 200_000
    assert stats.estimate("'releas' <-> 'note'") == 50_000  # a phrase: no more than its rarest word
    assert stats.estimate("'releas' & 'zebrafish'") is None  # a word not listed is counted
    assert stats.estimate("'releas' | 'note'") == 250_000  # a disjunction of lexemes: the sum
    assert stats.estimate("'zebrafish' | 'zebrafishi'") is None  # none listed: counted
    assert stats.estimate("('releas' | 'note') & 'deploy'") is None
    assert not TermStatistics(-1, {}).usable and not TermStatistics(1_000_000, {}).usable


def test_big_store_reads_common_cue_words_from_the_cues_statistics(filled: str, monkeypatch: pytest.MonkeyPatch) -> None:
    """The recall cues' column has statistics of its own: a word most cues hold is read from them
    (no count over its posting list), a rare one counted up to the limit; the entries' words'
    statistics are not consulted for cues, nor the cues' for words."""
    monkeypatch.setattr(common_terms, "BIG_STORE", 100)
    store = open_postgres(filled)
    try:
        cues = store.term_statistics("cue_fts")
        assert cues.usable and cues.shares["write"] == pytest.approx(0.5) and "write" not in store.term_statistics().shares
        seen = statements(store)
        assert store.cue_documents_up_to("writing", 1000) == 100 and store.cue_documents_up_to("writing", 10) == 10
        assert not any("count(" in sql for sql in seen), seen  # the common cue word: no count at all
        assert store.cue_documents_up_to("aquarium", 1000) == 2
        assert any("cue_fts @@" in sql and "count(" in sql for sql in seen)  # the rare one: a bounded count
        assert store.documents_up_to("writing", 1000) == 0  # the entries' words never hold a cue's
        with pytest.raises(ValueError, match="no statistics"):
            store.term_statistics("content")
    finally:
        store.close()
