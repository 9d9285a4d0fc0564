"""Time expressions in prompts, and the time/type adjustments applied to fused hits.

Two things live here, both deterministic and explained per hit in ``--explain``:

1. :func:`parse_time_range` turns an English time expression in a prompt ("yesterday", "last month",
   "in May 2023", "two weeks ago", "since March", "before 2023") into an ISO ``[start, end)`` range
   relative to a ``now`` (injectable for tests).
2. :func:`adjust_hits` re-orders fused hits after fusion:

   * **time boost** — an entry whose ``created_at`` lies in the prompt's range has its fused score
     multiplied by :data:`TIME_BOOST`. A boost, not a filter: ``created_at`` is when a memory was
     *written*, which is not always when the thing it describes happened ("in May we chose SQLite"
     may be written in June, or imported later with the import date). A filter would hide such a
     memory entirely; a boost only lifts the in-range ones above out-of-range near-equals.
   * **newer first on near-ties** — hits whose fused scores are within :data:`TIE_TOLERANCE` of the
     best of their group are ordered newest first (a later memory usually supersedes an earlier
     one on the same topic; when the channels cannot tell them apart, time can).
   * **a successor outranks what it supersedes** — when an entry and a later one that superseded it
     (a correction, ``crib correct``, an agent's rewrite: the store's own ``superseded_by`` link, its
     chain followed) are both hits, the successor moves directly above it. The older entry is *not*
     dropped: the agent sees both, dated, and can tell what changed. Only the store's link counts:
     an older rule moved any ``correction`` above an older hit sharing two content words, which on
     the coding set lifted four corrections above unrelated memories of their project on dozens of
     prompts (raw R@5 on its test split 71.9 with it, 77.6 without; docs/benchmarks.md).

The supported time expressions are listed in :mod:`.timewords`, with the patterns that match them.
"""

from __future__ import annotations

import re
from dataclasses import replace
from datetime import date, datetime, timedelta, timezone
from typing import TYPE_CHECKING

from ..core.config import fixed_now
from ..core.timeutil import ISO_FORMAT, parse_iso
from ..text.timewords import (  # noqa: F401  (re-exported: callers and tests name these from here)
    ABSOLUTE,
    EARLIEST,
    LATEST,
    MONTH_WORDS,
    MONTHS,
    TRIGGER_WORDS,
    UNITS,
    WEEKDAY_WORDS,
    WEEKDAYS,
    Span,
    TimeExpression,
    fold,
    shift,
    time_patterns,
)
from ..write.supersede import successor_chain  # the write path's walk along a supersession chain

if TYPE_CHECKING:  # pragma: no cover
    from ..core.records import Hit, Retrieval

__all__ = [
    "TimeExpression",
    "find_time_expression",
    "parse_time_range",
    "adjust_hits",
    "TIME_BOOST",
    "TIE_TOLERANCE",
]

TIME_BOOST = 2.0
"""Multiplier on the fused score of a hit written inside the prompt's time range.

Measured on LoCoMo (1,982 questions, 279 of them with a time expression; offline default): R@10 of the
questions with a range 63.5 → 66.1 at ×1.5, 70.7 at ×2, 73.5 at ×3; overall 73.3 → 74.2 at ×2. ×2 is
the strongest setting that remains a boost: fused scores are strength-gated, so a weak in-range hit
(a small fraction of the best score) still stays below a strong out-of-range one."""

TIE_TOLERANCE = 0.02
"""Hits whose fused score is within 2% of their group's best are a near-tie: newest first."""

_DIGIT = re.compile(r"\d")  # any Unicode decimal digit, as \d in the anchors
_LETTERS = re.compile(r"[a-z]+")


def _may_name_a_time(text: str) -> bool:
    r"""Whether ``text`` may contain a time expression: a cheap, conservative test before the anchors.

    False only when no anchor pattern can match: every anchor needs either a decimal digit (``\d``,
    any script) or one of :data:`TRIGGER_WORDS` as a whole word (each pattern bounds those words by
    ``\b``, whitespace or a hyphen). The text is case-folded the way ``re.I`` folds it, so a word
    the patterns match ("YESTERDAY", "yeſterday", "frİday") is found here too. False positives
    ("may", "days-long") only cost compiling the patterns; this never says False when one would match.
    Saves most prompts — which name no time — from compiling the patterns at all (:func:`time_patterns`).
    """
    if _DIGIT.search(text):
        return True
    return not TRIGGER_WORDS.isdisjoint(_LETTERS.findall(fold(text)))


def _anchors(text: str, today: date) -> list[Span]:
    """Every anchor in ``text``, left to right; at one position the longest match wins."""
    found: dict[int, Span] = {}
    for pattern, handler in time_patterns().anchors:
        for match in pattern.finditer(text):
            resolved = handler(match, today)
            if resolved is None:
                continue
            first, last, until_now = resolved
            pos = match.start("anchor") if "anchor" in pattern.groupindex else match.start()
            span = Span(first, last, pos, match.end(), until_now, handler in ABSOLUTE)
            current = found.get(pos)
            if current is None or span.endpos > current.endpos:
                found[pos] = span
    spans = sorted(found.values(), key=lambda s: s.pos)
    kept: list[Span] = []
    for span in spans:  # drop anchors nested inside an earlier, longer one
        if kept and span.pos < kept[-1].endpos:
            continue
        kept.append(span)
    return kept


def _second_anchor(text: str, after: int, today: date) -> Span | None:
    """The ``Y`` of "between X and Y" / "from X to Y": an anchor right after ``and``/``to`` at ``after``.

    A bare month or year there ("between March and May") has no preposition of its own, so the rest
    is read as if it followed "in".
    """
    joint = time_patterns().joint.match(text, after)
    if joint is None or joint.end() == after:
        return None
    rest = text[joint.end():]
    for span in _anchors("in " + rest, today):
        if span.pos == 3:
            return Span(span.first, span.last, span.pos - 3 + joint.end(), span.endpos - 3 + joint.end(), span.until_now)
    return None


# -- public API ------------------------------------------------------------------------------------


def _now(now: str | datetime | None) -> datetime:
    if now is None:
        fixed = fixed_now()
        if fixed is None:
            return datetime.now().astimezone()
        now = fixed
    if isinstance(now, datetime):
        return now if now.tzinfo is not None else now.replace(tzinfo=timezone.utc)
    return parse_iso(now)


def _iso(day: date | None, tz: object, default: str) -> str:
    if day is None:
        return default
    moment = datetime(day.year, day.month, day.day, tzinfo=tz)  # type: ignore[arg-type]
    return moment.astimezone(timezone.utc).strftime(ISO_FORMAT)


def find_time_expression(text: str, now: str | datetime | None = None) -> TimeExpression | None:
    """The time expression of ``text`` as a :class:`TimeExpression`, or ``None``.

    The first one that names its year wins ("last weekend before April 10, 2023" is about 2023);
    otherwise the first one.

    ``now`` is an ISO string (taken as UTC), an aware datetime (its zone sets day boundaries), or
    ``None`` for the current local time.
    """
    if not text:
        return None
    moment = _now(now)  # before the pre-check: a malformed ``now`` still raises
    if not _may_name_a_time(text):
        return None
    today, tz = moment.date(), moment.tzinfo
    now_iso = moment.astimezone(timezone.utc).strftime(ISO_FORMAT)
    spans = _anchors(text, today)
    if not spans:
        return None
    first = next((span for span in spans if span.absolute), spans[0])
    start_pos, end_pos = first.pos, first.endpos
    lo, hi, until_now = first.first, first.last, first.until_now
    prefix = text[:first.pos]
    between = time_patterns().between.search(prefix)
    second = _second_anchor(text, first.endpos, today) if between else None
    if between and second is not None:
        start_pos, end_pos = between.start(), second.endpos
        hi, until_now = second.last, second.until_now
    else:
        before = time_patterns().before.search(prefix)
        if before:
            word = " ".join(fold(before["word"]).split())
            start_pos = before.start()
            if word.endswith(("before", "after")) and " " in word:  # "the week before X"
                unit = word.split()[-2]
                if unit == "weekend" and word.endswith("before") and lo is not None:
                    saturday = lo - timedelta(days=(lo.weekday() - 5) % 7 or 7)
                    lo, hi, until_now = saturday, saturday + timedelta(days=2), False
                elif unit == "weekend" and hi is not None:
                    saturday = hi + timedelta(days=(5 - hi.weekday()) % 7)
                    lo, hi, until_now = saturday, saturday + timedelta(days=2), False
                elif word.endswith("before") and lo is not None:
                    lo, hi, until_now = shift(lo, unit, -1), lo, False
                elif word.endswith("after") and hi is not None:
                    lo, hi, until_now = hi, shift(hi, unit, 1), False
            elif word == "since":
                hi, until_now = None, False
            elif word in ("after", "later than"):
                lo, hi, until_now = (hi if hi is not None else lo), None, False
            elif word in ("before", "prior to", "earlier than"):
                lo, hi, until_now = None, lo, False
            else:  # until, till, up to: X included
                lo = None
    start = _iso(lo, tz, EARLIEST)
    end = now_iso if until_now else _iso(hi, tz, LATEST)
    if until_now:  # "past 3 days" runs to now; keep a second's slack so an entry written now counts
        end = (moment.astimezone(timezone.utc) + timedelta(seconds=1)).strftime(ISO_FORMAT)
    if start >= end:
        return None
    return TimeExpression(start, end, " ".join(text[start_pos:end_pos].split()))


def parse_time_range(text: str, now: str | datetime | None = None) -> tuple[str, str] | None:
    """The ISO ``[start, end)`` range of the first time expression in ``text``, or ``None``."""
    found = find_time_expression(text, now)
    return found.range if found else None


# -- adjustments after fusion ----------------------------------------------------------------------


def boost_time_range(hits: list["Hit"], expression: TimeExpression | None, notes: list[tuple[int, str]]) -> None:
    """Multiply the score of every hit written inside ``expression``'s range by :data:`TIME_BOOST`."""
    if expression is None:
        return
    for hit in hits:
        if expression.contains(hit.entry.created_at):
            hit.score *= TIME_BOOST
            if hit.evidence is not None:
                hit.evidence *= TIME_BOOST
            notes.append((hit.entry.id, f"written {hit.entry.created_at[:10]}, inside {expression.phrase!r}: score ×{TIME_BOOST:g}"))


def newer_first_on_ties(hits: list["Hit"], notes: list[tuple[int, str]], tolerance: float = TIE_TOLERANCE) -> list["Hit"]:
    """Order each group of near-tied hits newest first; returns the new list (best first).

    A group starts at the best hit not yet grouped and takes every following hit whose score is
    within ``tolerance`` of that leader's, so grouping never chains down a long slope. Hits written
    at the same time keep fusion's order. A hit that moves up takes the score of the best hit it
    passed, so scores stay non-increasing for later stages (the reranker reads them).
    """
    ordered = sorted(hits, key=lambda h: -h.score)  # stable: fusion's own tie-breaks stay
    out: list[Hit] = []
    index = 0
    while index < len(ordered):
        leader = ordered[index]
        group = [leader]
        index += 1
        while index < len(ordered) and ordered[index].score >= leader.score * (1.0 - tolerance):
            group.append(ordered[index])
            index += 1
        if len(group) > 1:
            by_time = sorted(group, key=lambda h: h.entry.created_at, reverse=True)  # stable for equal times
            if by_time != group:
                for position, hit in enumerate(by_time):
                    if group.index(hit) > position:
                        notes.append((hit.entry.id, f"near-tie (within {tolerance:.0%}) with older hits: newer first"))
                group = _non_increasing(by_time)
        out.extend(group)
    return out


def _non_increasing(hits: list["Hit"]) -> list["Hit"]:
    """``hits`` in their order, each one below a higher score given that score (a suffix maximum:
    scores stay non-increasing), as new hits: the hits the fused stage was given stay as they were."""
    out: list[Hit] = []
    best_below = 0.0
    for hit in reversed(hits):
        best_below = max(best_below, hit.score)
        out.append(hit if hit.score == best_below else replace(hit, score=best_below))
    out.reverse()
    return out


def successors_first(memory: object, hits: list["Hit"], notes: list[tuple[int, str]]) -> list["Hit"]:
    """Move each hit that supersedes an earlier hit (its first successor among the hits along the
    store's ``superseded_by`` chain, :func:`~crib_plugin.write.supersede.successor_chain`) directly
    above the best-ranked one it supersedes; both are kept, and the successor takes that hit's score
    and evidence where they were higher (the order stays monotone in score)."""
    store = getattr(memory, "store", None)
    if store is None or not hasattr(store, "superseded") or len(hits) < 2:
        return hits
    try:
        links = store.superseded([h.entry.id for h in hits])
    except Exception:  # a store without migration 4 (a plugin store): nothing moves
        return hits
    out = list(hits)
    among = {h.entry.id for h in hits}
    for old in hits:
        if old.entry.id not in links:
            continue
        try:
            chain = successor_chain(store, old.entry.id, links[old.entry.id])
        except Exception:  # a damaged store: this hit stays where fusion put it
            continue
        successor = next((i for i in chain if i in among), None)
        ids = [h.entry.id for h in out]
        if successor is None or ids.index(successor) < ids.index(old.entry.id):
            continue
        at, target = ids.index(successor), ids.index(old.entry.id)
        moved, above = out.pop(at), out[target]
        evidence = moved.evidence
        if evidence is not None and above.evidence is not None:
            evidence = max(evidence, above.evidence)
        out.insert(target, replace(moved, score=max(moved.score, above.score), evidence=evidence))
        notes.append((successor, f"moved above entry {old.entry.id}, which it supersedes; both kept"))
    return out


def adjust_hits(memory: object, retrieval: "Retrieval", *, now: str | datetime | None = None) -> "Retrieval":
    """``retrieval`` with the time boost, newer-first near-ties and successors-first applied to its hits.

    Every hit that moves or changes score gets a note in ``retrieval.notes`` for ``--explain``.
    """
    hits = list(retrieval.hits)
    if not hits:
        return retrieval
    notes: list[tuple[int, str]] = getattr(retrieval, "notes", [])
    expression: TimeExpression | None = None
    if retrieval.query.time_range is not None:
        start, end = retrieval.query.time_range
        expression = find_time_expression(retrieval.query.text, now)
        if expression is None or expression.range != (start, end):
            expression = TimeExpression(start, end, f"{start[:10]} – {end[:10]}")
    boost_time_range(hits, expression, notes)
    hits = newer_first_on_ties(hits, notes)
    hits = successors_first(memory, hits, notes)
    return replace(retrieval, hits=hits)
