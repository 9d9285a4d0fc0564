"""Time expressions in prompts, the in-range boost, newer-first near-ties and corrections first."""

from __future__ import annotations

from datetime import datetime, timedelta, timezone

import pytest

from crib_plugin.explain import explain_text
from crib_plugin.query import prepare
from crib_plugin.records import Entry, Hit, Query, Retrieval
from crib_plugin.temporal import (
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
    retrieval.hits = [_hit(1, 1.0, "2022-01-01T00:00:00Z"), _hit(2, 0.8, "2023-05-03T00:00:00Z")]
    adjust_hits(None, retrieval)
    assert [h.entry.id for h in retrieval.hits] == [2, 1]
    assert retrieval.hits[0].score == pytest.approx(0.8 * TIME_BOOST)


def test_correction_outranks_what_it_corrects_and_both_are_kept(memory) -> None:
    old = memory.write("The staging database runs PostgreSQL 14 on port 5433.", created_at="2023-01-10T10:00:00Z")
    fix = memory.write(
        "type=correction The staging database now runs PostgreSQL 16 on port 5434.", created_at="2023-03-10T10:00:00Z"
    )
    memory.write("Lunch orders go in the kitchen channel.", created_at="2023-02-10T10:00:00Z")
    retrieval = memory.select(memory.recall("staging database PostgreSQL port 5433"))
    ids = [h.entry.id for h in retrieval.hits]
    assert old in ids and fix in ids
    assert ids.index(fix) < ids.index(old)
    assert any(entry_id == fix and "corrects" in note for entry_id, note in retrieval.notes)
    text = explain_text(retrieval)
    assert f"correction moved above entry {old}" in text


def test_correction_does_not_jump_unrelated_or_newer_hits() -> None:
    retrieval = Retrieval(query=Query(text="x"))
    newer = _hit(1, 1.0, "2023-06-01T00:00:00Z", content="staging database port 5434 confirmed")
    unrelated = _hit(2, 0.9, "2023-01-01T00:00:00Z", content="lunch menu for friday")
    fix = _hit(3, 0.5, "2023-03-01T00:00:00Z", type="correction", content="staging database port is 5434")
    retrieval.hits = [newer, unrelated, fix]
    adjust_hits(None, retrieval)
    assert [h.entry.id for h in retrieval.hits] == [1, 2, 3]


def test_correction_moves_above_older_related_hit() -> None:
    retrieval = Retrieval(query=Query(text="x"))
    old = _hit(1, 1.0, "2023-01-01T00:00:00Z", content="staging database port is 5433")
    other = _hit(2, 0.9, "2023-01-05T00:00:00Z", content="lunch menu for friday")
    fix = _hit(3, 0.5, "2023-03-01T00:00:00Z", type="correction", content="correction: the staging database port is 5434")
    retrieval.hits = [old, other, fix]
    adjust_hits(None, retrieval)
    assert [h.entry.id for h in retrieval.hits] == [3, 1, 2]
    assert [h.score for h in retrieval.hits] == sorted((h.score for h in retrieval.hits), reverse=True)
