"""Phrase and identifier boosts: an entry holding a quoted phrase or an exact identifier of the
prompt outranks entries that only share loose words — cheaply, and safely for any input."""

from __future__ import annotations

from typing import Any

import apsw
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from crib_plugin.read import query as query_mod
from crib_plugin.read.channels.fulltext import boosted
from crib_plugin.read.query import (
    boost_expression,
    cjk_grams,
    cjk_terms,
    glued_words,
    gram_expression,
    literal_expression,
    terms,
    trigram_expression,
)

# Each shares more loose words with its prompt than the exact entry does (even the words of the
# phrase or identifier, even adjacent ones), so BM25 alone ranks it first.
LOOSE = [
    "Payment gateway fix: NoneType object errors from non-iterable payment objects; gateway fix again.",
    "println debugging: the system ran out of memory, so call println less; the system memory call.",
    "Validation errors mean err val 9021 codes; validation errors are logged with err val 9021.",
    "The offer is valid until Friday; valid coupons remain valid until they expire, set or not.",
]
EXACT = {
    "phrase": "Traceback: TypeError: cannot unpack non-iterable NoneType object (returned a tuple).",
    "println": "Use System.out.println only in the CLI entry point.",
    "err": "ERR_VAL_9021 is raised when a schema field is missing.",
    "valid_until": "The column valid_until closes a superseded fact.",
}
PROMPTS = {
    "phrase": 'how did we fix "cannot unpack non-iterable NoneType object" in the payment gateway?',
    "println": "where do we call System.out.println, and why did the system run out of memory?",
    "err": "what does ERR_VAL_9021 mean for validation errors?",
    "valid_until": "when is valid_until set, is the offer still valid?",
}


@pytest.fixture
def mem(memory: Any) -> tuple[Any, dict[str, int]]:
    for text in LOOSE:
        memory.write(text)
    ids = {key: memory.write(text) for key, text in EXACT.items()}
    return memory, ids


def fts(memory: Any, prompt: str) -> list[int]:
    return [h.entry.id for h in memory.search(prompt, channels=["fts"])]


@pytest.mark.parametrize("key", sorted(PROMPTS))
def test_exact_phrase_or_identifier_outranks_loose_words(mem: tuple[Any, dict[str, int]], key: str) -> None:
    memory, ids = mem
    assert fts(memory, PROMPTS[key])[0] == ids[key]


def test_the_boost_is_what_lifts_them(mem: tuple[Any, dict[str, int]], monkeypatch: pytest.MonkeyPatch) -> None:
    """Without the boosts, loose words win every prompt: the test above measures the boost, not a
    lucky BM25."""
    memory, ids = mem
    monkeypatch.setattr(query_mod, "boost_expression", lambda found: "")  # the channel imports them at search time
    monkeypatch.setattr(query_mod, "literal_expression", lambda found: "")
    unboosted = {key: fts(memory, prompt)[0] == ids[key] for key, prompt in PROMPTS.items()}
    assert not any(unboosted.values()), unboosted


def test_exact_hits_rank_above_every_loose_hit(mem: tuple[Any, dict[str, int]]) -> None:
    memory, ids = mem
    hits = memory.search(PROMPTS["println"], channels=["fts"])
    exact = [h for h in hits if h.entry.id == ids["println"]][0].channels["fts"]
    assert exact.rank == 1 and exact.strength == 1.0
    assert all(h.channels["fts"].score < exact.score for h in hits if h.entry.id != ids["println"])


def test_quoted_phrase_words_still_match_loosely(memory: Any) -> None:
    """A paraphrase of the quoted phrase is still found — below the entry that quotes it."""
    paraphrase = memory.write("NoneType unpack failures came from the parser returning nothing.")
    exact = memory.write("cannot unpack non-iterable NoneType object, raised by the parser")
    memory.write("Unrelated: the deploy runs on Fridays.")
    assert fts(memory, 'fix "cannot unpack non-iterable NoneType object"') == [exact, paraphrase]


def test_quoted_single_word_is_exact() -> None:
    found = {t.text: t for t in terms('is "redis" faster than memcached')}
    assert found["redis"].exact and not found["memcached"].exact


def test_boost_costs_one_extra_query_and_only_when_needed(mem: tuple[Any, dict[str, int]], monkeypatch: pytest.MonkeyPatch) -> None:
    memory, _ = mem
    calls: list[tuple[str, str]] = []
    for name in ("fts_search", "trigram_search"):
        original = getattr(memory.store, name)

        def counting(expression: str, limit: int, _name: str = name, _original: Any = original) -> list[tuple[int, float]]:
            calls.append((_name, expression))
            return _original(expression, limit)

        monkeypatch.setattr(memory.store, name, counting)
    fts(memory, "payment gateway timeouts")
    assert [c[0] for c in calls] == ["fts_search"]
    calls.clear()
    fts(memory, PROMPTS["err"])  # an identifier: its literal, in the trigram index
    assert calls[1:] == [("trigram_search", '"ERR_VAL_9021"')]
    calls.clear()
    fts(memory, PROMPTS["phrase"])  # a quoted phrase: a phrase MATCH in the word index
    assert calls[1:] == [("fts_search", '"cannot unpack non iterable nonetype object"')]


def test_identifier_boost_is_literal(memory: Any) -> None:
    """"valid until Friday" holds the words of valid_until, adjacent — only the literal is exact."""
    memory.write("The offer is valid until Friday; valid coupons remain valid until they expire.")
    exact = memory.write("The column valid_until closes a superseded fact.")
    assert fts(memory, "is valid_until still valid?")[0] == exact


def test_boost_expressions() -> None:
    assert boost_expression(terms("plain words only")) == literal_expression(terms("plain words only")) == ""
    assert literal_expression(terms("valid_until")) == '"valid_until"'  # plus loose "valid": a boost
    assert boost_expression(terms('"exact"')) == ""  # every term exact: boosting all is no boost
    found = terms('see "foo bar" and x.y.z')
    assert boost_expression(found) == '"foo bar"' and literal_expression(found) == '"x.y.z"'
    assert literal_expression(terms('is "valid_until" set')) == '"valid_until"'  # quoted identifier


def test_boosted_merge() -> None:
    loose = [(1, 5.0), (2, 3.0), (3, 1.0)]
    assert [i for i, _ in boosted(loose, [(3, 0.5)])] == [3, 1, 2]
    assert [i for i, _ in boosted(loose, [(9, 0.4), (3, 0.5)])] == [3, 9, 1, 2]  # 9 was past the limit
    assert [i for i, _ in boosted(loose, [(2, 1.0)], [(3, 9.0), (2, 9.0)])] == [2, 3, 1]  # two exact matches beat one
    assert boosted(loose, [], []) == loose


# -- hostile input ---------------------------------------------------------------------------------

HOSTILE = [
    '"unbalanced "quote" phrase',
    '"a" NEAR("b" "c")',
    'col:"x y" ^"z"',
    '"*" "(" ")" "OR" "AND"',
    'System.out.println("hello")*',
    '"" "" ""',
    '"ERR_VAL_9021" OR valid_until NOT "x"',
    '"缓存" "数据 库" 데이터베이스를',
    '"\x00" "\\"',
]


@pytest.mark.parametrize("text", HOSTILE)
def test_hostile_input_with_phrases_never_raises(mem: tuple[Any, dict[str, int]], text: str) -> None:
    memory, _ = mem
    memory.search(text)
    memory.search(text, channels=["fts"])


PIECES = ['"', "缓存", "valid_until", "OR", "*", " ", "데이터", "ｶﾀ", "(", "a.b", "NEAR", ":", "^", "我们"]


@settings(max_examples=300, deadline=None)
@given(st.text(max_size=80) | st.lists(st.sampled_from(PIECES), max_size=12).map("".join))
def test_every_expression_is_valid_fts5(text: str) -> None:
    """Every user-text → MATCH path of the channel (the word expression is tested in test_query)."""
    conn = apsw.Connection(":memory:")
    conn.execute("CREATE VIRTUAL TABLE w USING fts5(x, tokenize='porter unicode61')")
    conn.execute("CREATE VIRTUAL TABLE g USING fts5(x, content='', contentless_delete=1, tokenize='unicode61 remove_diacritics 0')")
    conn.execute("CREATE VIRTUAL TABLE t USING fts5(x, tokenize='trigram')")
    found = terms(text)
    for table, expression in (
        ("w", boost_expression(found)),
        ("t", literal_expression(found)),
        ("t", trigram_expression(cjk_terms(text))),
        ("g", gram_expression(cjk_grams(text), [t.text for t in found if not t.phrase] + glued_words(text))),
    ):
        if expression:
            list(conn.execute(f"SELECT rowid FROM {table} WHERE {table} MATCH ?", (expression,)))


def test_code_identifiers_are_exact_compounds_are_phrases() -> None:
    """Both stay phrases of the word index; only code identifiers are boosted (by their literal)."""
    found = {t.text: t for t in terms("is self-care in valid_until, GPT-4, System.out.println or e-mail?")}
    assert found["self care"].phrase and not found["self care"].exact
    assert found["e mail"].phrase and not found["e mail"].exact
    for text, literal in (("valid until", "valid_until"), ("gpt 4", "GPT-4"), ("system out println", "System.out.println")):
        assert found[text].exact and found[text].literal == literal
