"""PostgreSQL's document frequencies are asked with crib's stems and must not stem them again.

Callers (the relevance gate, the common-word cut, deep recall) pass porter stems from
:mod:`crib_plugin.text.words`; a ``to_tsquery`` would stem ``releas`` once more into ``relea`` and
find nothing. The word index stems with Porter (migration 5), so crib's stems are its lexemes; and a
stem counts the same entries on both backends (the parity test, over the coding set's memories).
"""

from __future__ import annotations

import json
from collections.abc import Iterator
from pathlib import Path

import pytest

from crib_plugin.store import open_store
from crib_plugin.store.postgres import PostgresStore, open_postgres
from crib_plugin.text.words import stems

CODING_MEMORIES = Path(__file__).resolve().parents[1] / "crib_eval" / "data" / "coding_memory.jsonl"

# each word's double stem differs from its stem: releas → relea, technolog → technolog (but the
# index's lexeme is technologi), possibl → possibl (possibli) ...
DOUBLE_STEMMED = {
    "release": ["the release script broke", "we delayed the releases", "it was released on friday", "no word here"],
    "technology": ["the technology stack", "two technologies compared", "nothing relevant"],
    "possibly": ["possibly the cache", "it is possible", "impossible to say"],
    "agreed": ["we agreed on zsh", "they agree", "an agreement was signed"],
    "adding": ["adding a column", "added two rows", "the add button"],
}


@pytest.fixture
def pg_store(pg_url: str) -> Iterator[PostgresStore]:  # noqa: F811
    store = open_postgres(pg_url)
    try:
        yield store
    finally:
        store.close()


def _fill(store: object, texts: list[str]) -> None:
    for i, text in enumerate(texts):
        store.insert_entry("note", text, f"2026-01-01T00:00:{i % 60:02d}", {})  # type: ignore[attr-defined]


@pytest.mark.parametrize("word", sorted(DOUBLE_STEMMED))
def test_a_stem_is_not_stemmed_again(pg_store: PostgresStore, tmp_path: Path, word: str) -> None:
    texts = DOUBLE_STEMMED[word]
    _fill(pg_store, texts)
    sqlite = open_store(tmp_path / "s.db")
    try:
        _fill(sqlite, texts)
        (stem,) = [s for _w, s in stems(word)]
        expected = sqlite.term_document_frequency(stem)
    finally:
        sqlite.close()
    assert expected >= 2
    assert pg_store.term_document_frequency(stem) == expected


def test_sqlite_and_postgres_agree_on_every_stem(pg_store: PostgresStore, tmp_path: Path) -> None:
    rows = [json.loads(line) for line in CODING_MEMORIES.read_text(encoding="utf-8").splitlines() if line.strip()]
    texts = [row["content"] for row in rows] + [t for group in DOUBLE_STEMMED.values() for t in group]
    _fill(pg_store, texts)
    sqlite = open_store(tmp_path / "s.db")
    try:
        _fill(sqlite, texts)
        vocabulary = sorted({s for text in texts for w, s in stems(text) if len(w) >= 3} | {"zebrafish", "relea"})
        on_sqlite = {s: sqlite.term_document_frequency(s) for s in vocabulary}
    finally:
        sqlite.close()
    on_pg = {s: pg_store.term_document_frequency(s) for s in vocabulary}
    assert len(vocabulary) > 300
    assert {s: (on_sqlite[s], on_pg[s]) for s in vocabulary if on_sqlite[s] != on_pg[s]} == {}
