"""Time expressions in prompts, the in-range boost, newer-first near-ties and successors first."""

from __future__ import annotations

import dataclasses
import re
import subprocess
import sys
from datetime import datetime, timedelta, timezone
from types import SimpleNamespace
from unittest import mock

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from crib_plugin.core.records import Entry, Hit, Query, Retrieval
from crib_plugin.output.explain import explain_text
from crib_plugin.read import temporal
from crib_plugin.read.query import prepare
from crib_plugin.read.temporal import (
    TIME_BOOST,
    adjust_hits,
    find_time_expression,
    newer_first_on_ties,
    parse_time_range,
)

NOW = "2023-05-20T15:00:00Z"  # a Saturday
D = "T00:00:00Z"


@pytest.mark.parametrize(
    "prompt, expected",
    [
        ("what did we do yesterday?", ("2023-05-19" + D, "2023-05-20" + D)),
        ("anything new today", ("2023-05-20" + D, "2023-05-21" + D)),
        ("what broke this morning", ("2023-05-20" + D, "2023-05-21" + D)),
        ("what did we try last night", ("2023-05-19" + D, "2023-05-20" + D)),
        ("the day before yesterday", ("2023-05-18" + D, "2023-05-19" + D)),
        ("decisions from last week", ("2023-05-08" + D, "2023-05-15" + D)),
        ("errors this week", ("2023-05-15" + D, "2023-05-22" + D)),
        ("what changed last month", ("2023-04-01" + D, "2023-05-01" + D)),
        ("this month's releases", ("2023-05-01" + D, "2023-06-01" + D)),
        ("everything this year", ("2023-01-01" + D, "2024-01-01" + D)),
        ("what did we ship last year", ("2022-01-01" + D, "2023-01-01" + D)),
        ("what happened in May 2023", ("2023-05-01" + D, "2023-06-01" + D)),
        ("May 2023 incidents", ("2023-05-01" + D, "2023-06-01" + D)),
        ("the plan of March, 2022", ("2022-03-01" + D, "2022-04-01" + D)),
        ("what happened in May?", ("2023-05-01" + D, "2023-06-01" + D)),
        ("notes during August", ("2022-08-01" + D, "2022-09-01" + D)),  # most recent August is 2022
        ("what did we decide in 2022", ("2022-01-01" + D, "2023-01-01" + D)),
        ("in the year 2021", ("2021-01-01" + D, "2022-01-01" + D)),
        ("on 8 May 2023", ("2023-05-08" + D, "2023-05-09" + D)),
        ("May 8th, 2023 outage", ("2023-05-08" + D, "2023-05-09" + D)),
        ("the 8th of May", ("2023-05-08" + D, "2023-05-09" + D)),
        ("deploy on 2023-05-08", ("2023-05-08" + D, "2023-05-09" + D)),
        ("two weeks ago", ("2023-05-01" + D, "2023-05-08" + D)),
        ("3 days ago", ("2023-05-17" + D, "2023-05-18" + D)),
        ("a month ago", ("2023-04-01" + D, "2023-05-01" + D)),
        ("a few days ago", ("2023-05-15" + D, "2023-05-19" + D)),
        ("errors in the past 3 days", ("2023-05-17" + D, "2023-05-20T15:00:01Z")),
        ("last Monday", ("2023-05-15" + D, "2023-05-16" + D)),
        ("on saturday", ("2023-05-20" + D, "2023-05-21" + D)),
        ("last weekend", ("2023-05-13" + D, "2023-05-15" + D)),
        ("since March", ("2023-03-01" + D, "9999-12-31T23:59:59Z")),
        ("before 2023", ("0001-01-01" + D, "2023-01-01" + D)),
        ("after April 2023", ("2023-05-01" + D, "9999-12-31T23:59:59Z")),
        ("until last week", ("0001-01-01" + D, "2023-05-15" + D)),
        ("between March and May", ("2023-03-01" + D, "2023-06-01" + D)),
        ("from 2021 to 2022", ("2021-01-01" + D, "2023-01-01" + D)),
        ("notes from last week", ("2023-05-08" + D, "2023-05-15" + D)),
        ("the week before August 3, 2023", ("2023-07-27" + D, "2023-08-03" + D)),
        ("the day after 8 May 2023", ("2023-05-09" + D, "2023-05-10" + D)),
        ("last weekend before April 10, 2023", ("2023-04-08" + D, "2023-04-10" + D)),
        ("what we did last week, in March 2022", ("2022-03-01" + D, "2022-04-01" + D)),  # a named year wins
        # no range
        ("When did Caroline go to the LGBTQ support group?", None),
        ("step 1 may fail", None),
        ("we need to march on", None),
        ("upgrade to 2022.3", None),
        ("listen on port 2022", None),
        ("recently", None),
        ("next week", None),
        ("", None),
    ],
)
def test_time_expressions(prompt: str, expected: tuple[str, str] | None) -> None:
    assert parse_time_range(prompt, NOW) == expected


def test_day_boundaries_follow_now_time_zone() -> None:
    tokyo = timezone(timedelta(hours=9))
    found = find_time_expression("yesterday", datetime(2023, 5, 20, 8, 0, tzinfo=tokyo))
    assert found is not None and found.range == ("2023-05-18T15:00:00Z", "2023-05-19T15:00:00Z")
    assert found.phrase == "yesterday"


def test_prepare_sets_time_range() -> None:
    assert prepare("what did we decide in May 2023?").time_range == ("2023-05-01" + D, "2023-06-01" + D)
    assert prepare("what did we decide about caching?").time_range is None


def _hit(entry_id: int, score: float, created: str, type: str = "note", content: str = "x") -> Hit:
    return Hit(Entry(entry_id, type, content, created), score)


def test_newer_first_only_on_near_ties() -> None:
    old, new = _hit(1, 1.0, "2023-01-01T00:00:00Z"), _hit(2, 0.99, "2023-02-01T00:00:00Z")
    far = _hit(3, 0.80, "2023-03-01T00:00:00Z")
    notes: list[tuple[int, str]] = []
    ordered = newer_first_on_ties([old, new, far], notes)
    assert [h.entry.id for h in ordered] == [2, 1, 3]
    assert [h.score for h in ordered] == sorted((h.score for h in ordered), reverse=True)
    assert notes and notes[0][0] == 2 and "newer first" in notes[0][1]
    assert (old.score, new.score, far.score) == (1.0, 0.99, 0.80)  # the hits it was given are not rescored


def test_equal_times_keep_fused_order() -> None:
    a, b = _hit(1, 1.0, "2023-01-01T00:00:00Z"), _hit(2, 0.995, "2023-01-01T00:00:00Z")
    notes: list[tuple[int, str]] = []
    assert [h.entry.id for h in newer_first_on_ties([a, b], notes)] == [1, 2] and notes == []


def test_boost_ranks_in_range_entry_above_out_of_range_near_tie(memory) -> None:
    memory.write("Cache decision: sessions stored in Redis with a one hour expiry.", created_at="2023-05-10T09:00:00Z")
    memory.write("Cache decision: sessions stored in Memcached with a one hour expiry.", created_at="2022-11-10T09:00:00Z")
    baseline = memory.recall("cache decision for sessions expiry", channels=["fts"])
    assert len(baseline.hits) == 2
    assert baseline.query.time_range is None
    boosted = memory.recall("cache decision for sessions expiry in May 2023", channels=["fts"])
    assert boosted.query.time_range == ("2023-05-01" + D, "2023-06-01" + D)
    assert "Redis" in boosted.hits[0].entry.content
    assert len(boosted.hits) == 2  # a boost, not a filter: the out-of-range entry is still there
    assert any(f"×{TIME_BOOST:g}" in note for _, note in boosted.notes)


def test_boost_overturns_a_better_out_of_range_hit() -> None:
    retrieval = Retrieval(query=Query(text="x", time_range=("2023-05-01" + D, "2023-06-01" + D)))
    retrieval = dataclasses.replace(retrieval, hits=[_hit(1, 1.0, "2022-01-01T00:00:00Z"), _hit(2, 0.8, "2023-05-03T00:00:00Z")])
    retrieval = adjust_hits(None, retrieval)
    assert [h.entry.id for h in retrieval.hits] == [2, 1]
    assert retrieval.hits[0].score == pytest.approx(0.8 * TIME_BOOST)


def test_correction_outranks_what_it_corrects_and_both_are_kept(memory) -> None:
    old = memory.write("The staging database runs PostgreSQL 14 on port 5433.", created_at="2023-01-10T10:00:00Z")
    fix = memory.write(
        "type=correction The staging database now runs PostgreSQL 16 on port 5434.", created_at="2023-03-10T10:00:00Z"
    )
    memory.write("Lunch orders go in the kitchen channel.", created_at="2023-02-10T10:00:00Z")
    assert memory.store.superseded([old]) == {old: fix}  # the write path linked them
    retrieval = memory.select(memory.recall("staging database PostgreSQL port 5433"))
    ids = [h.entry.id for h in retrieval.hits]
    assert old in ids and fix in ids
    assert ids.index(fix) < ids.index(old)
    assert f"moved above entry {old}, which it supersedes" in explain_text(retrieval)


class _Links:
    """A store that knows only supersession links (old id → the id that superseded it)."""

    def __init__(self, links: dict[int, int]) -> None:
        self.links = links

    def superseded(self, ids: list[int]) -> dict[int, int]:
        return {i: self.links[i] for i in ids if i in self.links}


def _adjusted(hits: list[Hit], links: dict[int, int]) -> list[Hit]:
    memory = SimpleNamespace(store=_Links(links))
    return adjust_hits(memory, dataclasses.replace(Retrieval(query=Query(text="x")), hits=hits)).hits


def test_a_successor_moves_above_what_it_supersedes_and_keeps_the_order_monotone() -> None:
    old = _hit(1, 1.0, "2023-01-01T00:00:00Z", content="staging database port is 5433")
    other = _hit(2, 0.9, "2023-01-05T00:00:00Z", content="lunch menu for friday")
    fix = _hit(3, 0.5, "2023-03-01T00:00:00Z", type="correction", content="the staging database port is 5434")
    hits = _adjusted([old, other, fix], {1: 3})
    assert [h.entry.id for h in hits] == [3, 1, 2]
    assert [h.score for h in hits] == sorted((h.score for h in hits), reverse=True)
    assert fix.score == 0.5  # moved on a copy: the fused stage's hit is unchanged


def test_a_chain_is_followed_past_a_link_that_is_not_a_hit() -> None:
    old, newest = _hit(1, 1.0, "2023-01-01T00:00:00Z"), _hit(3, 0.4, "2023-05-01T00:00:00Z", type="correction")
    assert [h.entry.id for h in _adjusted([old, newest], {1: 2, 2: 3})] == [3, 1]


def test_a_correction_without_a_link_stays_where_fusion_put_it() -> None:
    """Sharing words is not superseding: on the coding set a word rule lifted four corrections above
    unrelated memories of their project on dozens of prompts."""
    older = _hit(1, 1.0, "2023-01-01T00:00:00Z", content="logsift grep reads the config file")
    fix = _hit(2, 0.5, "2023-03-01T00:00:00Z", type="correction", content="logsift tail polls the config file on NFS")
    assert [h.entry.id for h in _adjusted([older, fix], {})] == [1, 2]
    ahead = _hit(4, 1.0, "2023-06-01T00:00:00Z", type="correction")
    assert [h.entry.id for h in _adjusted([ahead, _hit(3, 0.5, "2023-03-01T00:00:00Z")], {3: 4})] == [4, 3]  # already above


# -- lazy patterns and the pre-check ---------------------------------------------------------------

# The expressions of the module docstring's table, plus a few of each kind.
TABLE_EXPRESSIONS = [
    "today", "tonight", "this morning", "this afternoon", "this evening", "yesterday", "last night",
    "the day before yesterday", "this week", "last week", "this month", "last month", "this year",
    "last year", "this weekend", "last weekend", "3 days ago", "three weeks ago", "a month ago",
    "a couple of years ago", "a few days ago", "past 3 days", "last two weeks", "past months",
    "on Monday", "last Friday", "on sunday", "in May 2023", "May 2023", "May of 2023", "in May",
    "during March", "since september", "on 8 May 2023", "May 8th, 2023", "2023-05-08", "8 May", "May 8",
    "in 2022", "during 2022", "year 2022", "since March", "after April 2023", "from last week",
    "before 2023", "until last week", "between March and May", "from 2021 to 2022", "the day before 8 May",
    "the week after May 8, 2023", "the weekend before April 10, 2023", "early jan", "in mid-aug", "the 8th of Sept.",
]
GLUE_WORDS = ["in", "on", "of", "the", "a", "an", "few", "couple", "last", "this", "past", "ago", "since", "before",
              "after", "until", "till", "from", "between", "and", "to", "through", "during", "early", "late", "mid",
              "year", "next", "recently", "mar", "mon", "sun", "sat", "wed", "may", "night", "nights", "days"]
ODD = ["ſ", "K", "İ", "ı", "ß", "ﬀ", "é", "Σ", "ǅ", "\u0307", "\u00a0", "\u2009", "２０２３", "٢٠٢٣", "٨", "２", "൬"]
PUNCTUATION = list(".,;:-–/'\"?!()") + ["'s", "..."]
SEPARATORS = [" ", " ", " ", "", "-", ".", ", ", "\n", "\u00a0", "\t", "  "]
# Spellings re.I matches with an ASCII letter (so the real patterns match them) and digits of other
# scripts (which \d matches): the mangler swaps them in to look for a pre-check that misses them.
SWAPS = {"s": ["ſ", "S"], "k": ["K", "K"], "i": ["İ", "ı", "I"], "0": ["０", "٠"], "2": ["２", "٢"],
         "3": ["３", "٣"], "8": ["８", "٨"], "1": ["１", "١"]}


@st.composite
def _fragment(draw: st.DrawFn) -> str:
    """One piece of a prompt: a time word or expression, a plain word, a number, punctuation or odd text."""
    piece = draw(
        st.one_of(
            st.sampled_from(sorted(temporal.TRIGGER_WORDS | set(temporal.MONTHS) | set(temporal.WEEKDAYS))),
            st.sampled_from(TABLE_EXPRESSIONS),
            st.sampled_from(GLUE_WORDS),
            st.text(alphabet="abcdefghijklmnopqrstuvwxyz", min_size=1, max_size=8),
            st.integers(0, 2100).map(str),
            st.sampled_from(PUNCTUATION),
            st.sampled_from(ODD),
            st.text(max_size=3),
        )
    )
    rnd = draw(st.randoms(use_true_random=False))
    mode = rnd.random()
    if mode < 0.2:
        piece = piece.upper()
    elif mode < 0.3:
        piece = piece.title()
    if rnd.random() < 0.5:  # swap in look-alikes
        piece = "".join(rnd.choice(SWAPS[c.lower()]) if c.lower() in SWAPS and rnd.random() < 0.5 else c for c in piece)
    return piece


@st.composite
def _prompt(draw: st.DrawFn) -> str:
    """A prompt of up to eight fragments joined by spaces, nothing, punctuation or odd white space."""
    pieces = draw(st.lists(_fragment(), max_size=8))
    out = ""
    for piece in pieces:
        out += piece + draw(st.sampled_from(SEPARATORS))
    return out


def _outcome(text: str) -> tuple[str, object]:
    """``find_time_expression(text)`` as a comparable value: its result, or the type of what it raised.

    (Nothing should raise — see ``test_look_alike_spellings_resolve`` — but if something did, the
    pre-check must not change that either.)
    """
    try:
        return "result", find_time_expression(text, NOW)
    except Exception as error:  # noqa: BLE001
        return "raised", type(error)


def _reference(text: str) -> tuple[str, object]:
    """:func:`_outcome` with the pre-check switched off: the patterns alone decide."""
    with mock.patch.object(temporal, "_may_name_a_time", lambda text: True):
        return _outcome(text)


def _any_anchor_matches(text: str) -> bool:
    """Whether any anchor pattern matches anywhere in ``text`` (whatever its handler then makes of it)."""
    return any(pattern.search(text) for pattern, _ in temporal.time_patterns().anchors)


@pytest.mark.slow
@settings(max_examples=600, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(_prompt())
def test_pre_check_never_hides_a_time_expression(text: str) -> None:
    """With or without the pre-check, the same outcome; and where it says no, no anchor pattern matches."""
    expected = _reference(text)
    assert _outcome(text) == expected
    if not temporal._may_name_a_time(text):
        assert expected == ("result", None)
        assert not _any_anchor_matches(text)  # not a single anchor pattern could have matched


@pytest.mark.parametrize(
    "prompt",
    [
        "what did we do yeſterday?",  # long s: re.I matches it with "s", casefold() maps it
        "laſt weeK",  # Kelvin sign: re.I matches it with "k"
        "on frİday",  # dotted capital I: re.I matches it with "i", casefold() gives "i" + a combining dot
        "on frıday",  # dotless i: re.I matches it with "i", casefold() leaves it
        "what happened in aprİl?",
        "TWO DAYſ AGO",
        "THIS MORNİNG",
        "on ٨ May 2023",  # Arabic-Indic digit: \d matches it
        "what did we decide in 20２３",  # fullwidth digits
    ],
)
def test_pre_check_sees_what_re_ignorecase_matches(prompt: str) -> None:
    """Spellings the case-insensitive patterns match (look-alike letters, non-ASCII digits) pass the pre-check."""
    assert _any_anchor_matches(prompt)
    assert temporal._may_name_a_time(prompt)
    assert _outcome(prompt) == _reference(prompt)


@pytest.mark.parametrize("prompt", ["on frİday", "what happened in aprİl?", "past 3 dayſ", "THIS MORNİNG", "laſt frİday", "ſince March 2023"])
def test_look_alike_spellings_resolve(prompt: str) -> None:
    """A word ``re.I`` matched is looked up folded the same way: "ON FRİDAY" (a Turkish keyboard's
    capital i) is Friday, not a KeyError that would empty the retrieval."""
    outcome = _outcome(prompt)
    assert outcome[0] == "result" and outcome[1] is not None, outcome


@pytest.mark.parametrize(
    "prompt, expected",
    [
        ("laſt weeK", ("2023-05-08" + D, "2023-05-15" + D)),
        ("on ٨ May 2023", ("2023-05-08" + D, "2023-05-09" + D)),
        ("what did we decide in 20２３", ("2023-01-01" + D, "2024-01-01" + D)),
        ("mid-aug", None),  # a trigger word but no preposition: the pre-check says maybe, the patterns no
    ],
)
def test_look_alike_and_non_ascii_digit_ranges(prompt: str, expected: tuple[str, str] | None) -> None:
    """Ranges of look-alike and non-ASCII-digit spellings (as before the pre-check; see also _outcome)."""
    assert parse_time_range(prompt, NOW) == expected


EVERY_WORD = (
    [f"in {month}" for month in temporal.MONTH_WORDS]
    + [f"on {weekday}" for weekday in temporal.WEEKDAY_WORDS]
    + [f"two {unit} ago" for unit in temporal.UNITS]
    + [f"past {unit}" for unit in temporal.UNITS]
)


@pytest.mark.parametrize("expression", TABLE_EXPRESSIONS + EVERY_WORD)
def test_pre_check_sees_every_expression_and_its_look_alikes(expression: str) -> None:
    """Every table expression and every month/weekday/unit word, in any case or look-alike spelling the patterns
    still match, passes the pre-check: a word left out of _TRIGGER_WORDS shows up here."""
    assert _any_anchor_matches(expression)
    variants = [expression, expression.upper(), expression.title()]
    for old, new in [("s", "ſ"), ("k", "K"), ("i", "İ"), ("i", "ı"), ("S", "ſ"), ("I", "İ"), ("I", "ı")]:
        variants += [variant.replace(old, new) for variant in variants[:3]]
    for variant in variants:
        if _any_anchor_matches(variant):
            assert temporal._may_name_a_time(variant), variant


def test_pre_check_says_no_to_prompts_without_time_words() -> None:
    """The point of the pre-check: ordinary prompts skip the patterns; glued or abbreviated time words do not."""
    for prompt in ["how do we keep the model's answers the same from run to run?", "what did we decide about caching?",
                   "When did Caroline go to the LGBTQ support group?", "recently", "next steps", "notes from the mayor"]:
        assert not temporal._may_name_a_time(prompt), prompt
    for prompt in ["what did we decide last week?", "may2023", "port 2022", "days-long", "jan.", "THIS WEEKEND"]:
        assert temporal._may_name_a_time(prompt), prompt


def test_fold_maps_every_re_ignorecase_equivalent_of_an_ascii_letter() -> None:
    """_fold turns each character ``re.I`` matches with an ASCII letter into that letter, and nothing else into one.

    The pre-check relies on this: a trigger word the patterns match (case-insensitively, bounded by
    non-word characters) is then exactly a ``[a-z]+`` word of the folded text.
    """
    letter = re.compile("[a-z]", re.I)
    word = re.compile(r"\w")
    for code in range(sys.maxunicode + 1):
        char = chr(code)
        if letter.fullmatch(char):  # 'A', 'a', and the four non-ASCII ones: 'İ', 'ı', 'ſ', 'K'
            folded = temporal.fold(char)
            assert re.fullmatch("[a-z]", folded) and re.fullmatch(folded, char, re.I), hex(code)
        elif not word.match(char):
            assert not re.search("[a-z]", temporal.fold(char)), hex(code)  # a boundary stays a boundary


def test_import_and_a_prompt_without_time_compile_no_pattern() -> None:
    """In a fresh process: importing compiles no anchor pattern, nor does a prompt without time words; "yesterday" does."""
    code = (
        "import re, crib_plugin.read.temporal as t\n"
        "def compiled():\n"
        "    return any('january' in str(key) for key in getattr(re, '_cache', {}))\n"
        "assert t.time_patterns.cache_info().currsize == 0 and not compiled(), 'compiled at import'\n"
        "assert t.parse_time_range(\"how do we keep the model's answers the same from run to run?\") is None\n"
        "assert t.time_patterns.cache_info().currsize == 0 and not compiled(), 'compiled for a prompt without time words'\n"
        "assert t.parse_time_range('what did we do yesterday?') is not None\n"
        "assert t.time_patterns.cache_info().currsize == 1 and compiled(), 'not compiled for yesterday'\n"
    )
    result = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True)
    assert result.returncode == 0, result.stderr
