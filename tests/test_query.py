"""The FTS sanitiser: no user text can raise an FTS5 syntax error, and identifiers match exactly."""

from __future__ import annotations

import pytest
from conftest import assert_fts_ran
from hypothesis import given, settings
from hypothesis import strategies as st

from crib_plugin.read.query import fts_expression, has_cjk, prepare, terms

HOSTILE = [
    'System.out.println("hello")*',
    '"unbalanced quote',
    "a AND OR NOT b",
    "NEAR(a b, 3)",
    "col:value ^start",
    "(((",
    "*",
    "-excluded +included",
    "'single' \"double\" `back`",
    "x\x00y",
    "DROP TABLE entries; --",
    "emoji 🎉 and ümlauts",
    "ERR_VAL_9021 valid_until foo-bar.baz",
    '""',
    "{}[]<>|&;!",
]


@pytest.mark.parametrize("text", HOSTILE)
def test_hostile_input_never_raises_in_fts5(memory, text: str) -> None:
    memory.write("System.out.println prints a line; ERR_VAL_9021 is a validation error; valid_until marks history.")
    memory.search(text)  # must not raise
    assert_fts_ran(memory, text)  # and FTS5 must not have raised inside the channel either


def test_the_hostile_input_test_fails_when_fts5_errors(memory, monkeypatch: pytest.MonkeyPatch) -> None:
    """Break the sanitiser on purpose (raw text as the MATCH expression): FTS5 raises on hostile
    input, the channel reports ``ran=False``, and the test above must fail."""
    from dataclasses import replace

    from crib_plugin.read import recall

    real = recall.prepare
    monkeypatch.setattr(recall, "prepare", lambda text: replace(real(text), fts_expression=text))
    failures = 0
    for text in HOSTILE:
        try:
            test_hostile_input_never_raises_in_fts5(memory, text)
        except AssertionError:
            failures += 1
    assert failures >= 5


@settings(max_examples=200, deadline=None)
@given(st.text(max_size=80))
def test_any_text_is_a_valid_fts_expression(text: str) -> None:
    import apsw

    conn = apsw.Connection(":memory:")
    conn.execute("CREATE VIRTUAL TABLE t USING fts5(x, tokenize='porter unicode61')")
    conn.execute("INSERT INTO t(x) VALUES ('hello world')")
    expression = fts_expression(text)
    if expression:
        list(conn.execute("SELECT rowid FROM t WHERE t MATCH ?", (expression,)))


def test_identifiers_and_phrases_are_kept_as_phrases() -> None:
    found = {t.text: t.phrase for t in terms('why does ERR_VAL_9021 fire in System.out.println "exact words here"')}
    assert found["err val 9021"] is True
    assert found["system out println"] is True
    assert found["exact words here"] is True


def test_stop_words_are_dropped() -> None:
    assert prepare("what did we choose for the database?").keywords == ["choose", "database"]


def test_identifier_matches_exactly(memory) -> None:
    a = memory.write("The column valid_until is set when a fact is superseded.")
    memory.write("The offer is valid for a month, until Friday.")
    hits = memory.search("valid_until", channels=["fts"])
    assert hits[0].entry.id == a


def test_cjk_detection() -> None:
    assert has_cjk("大别山项目") and has_cjk("データベース") and has_cjk("데이터베이스")
    assert not has_cjk("database")
