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
   * **a correction outranks what it corrects** — when a ``correction`` entry and an older entry
     are both hits and share enough content (≥ :data:`CORRECTION_SHARED_WORDS` content words, or a
     fact with the same subject and predicate), the correction moves directly above it. The older
     entry is *not* dropped: the agent sees both, dated, and can tell what changed.

Supported time expressions (case-insensitive; weeks start on Monday; day boundaries are taken in
``now``'s time zone — the local zone by default — and converted to UTC):

==========================================================  =================================================
prompt contains                                             range ``[start, end)``
==========================================================  =================================================
``today``, ``tonight``, ``this morning/afternoon/evening``  today
``yesterday``, ``last night``                               yesterday
``the day before yesterday``                                the day before yesterday
``this week`` / ``last week``                               this / the previous calendar week
``this month`` / ``last month``                             this / the previous calendar month
``this year`` / ``last year``                               this / the previous calendar year
``this weekend`` / ``last weekend``                         Saturday–Sunday of this / the previous week
``N days/weeks/months/years ago`` (N: 3, three, a, …)       the calendar day/week/month/year N back
``a few days ago``                                          the 2–5 days before today
``past/last N days/weeks/months/years``                     from N units before today until now
``on Monday``, ``last Monday`` (any weekday)                the most recent such day (``last``: before today)
``in May 2023``, ``May 2023``, ``May of 2023``              that month
``in May``, ``during March`` (no year)                      the most recent such month, this one included
``on 8 May 2023``, ``May 8th, 2023``, ``2023-05-08``        that day
``8 May``, ``May 8`` (no year)                              the most recent such day, today included
``in 2022``, ``during 2022``, ``year 2022``                 that year (a bare number is never a year)
``since X`` / ``after X``                                   from the start (``after``: the end) of X on
``from X`` (alone: "notes from last week")                  X itself
``before X`` / ``until X``                                  up to the start (``until``: the end) of X
``between X and Y``, ``from X to Y``                        the start of X to the end of Y
``the day/week/month/year before X``                        that long, up to the start of X
``the day/week/month/year after X``                         that long, from the end of X
``the weekend before/after X``                              the Saturday–Sunday before / after X
==========================================================  =================================================

Anything else — "recently", "last summer", "next week", a bare "2022" — gives ``None``: no range, no
boost. The first expression that names its year wins, else the first expression.
"""

from __future__ import annotations

import functools
import re
from dataclasses import dataclass
from datetime import date, datetime, timedelta, timezone
from typing import TYPE_CHECKING, Callable, NamedTuple, Sequence

from .limits import MAX_SCAN_CHARS
from .timeutil import ISO_FORMAT, parse_iso

if TYPE_CHECKING:  # pragma: no cover
    from .records import Hit, Retrieval
    from .store.base import Store

__all__ = [
    "TimeExpression",
    "find_time_expression",
    "parse_time_range",
    "adjust_hits",
    "TIME_BOOST",
    "TIE_TOLERANCE",
    "CORRECTION_SHARED_WORDS",
]

TIME_BOOST = 2.0
"""Multiplier on the fused score of a hit written inside the prompt's time range.

Measured on LoCoMo (1,982 questions, 279 of them with a time expression; offline default): R@10 of the
questions with a range 63.5 → 66.1 at ×1.5, 70.7 at ×2, 73.5 at ×3; overall 73.3 → 74.2 at ×2. ×2 is
the strongest setting that remains a boost: fused scores are strength-gated, so a weak in-range hit
(a small fraction of the best score) still stays below a strong out-of-range one."""

TIE_TOLERANCE = 0.02
"""Hits whose fused score is within 2% of their group's best are a near-tie: newest first."""

CORRECTION_SHARED_WORDS = 2
"""Content words (stemmed) a correction must share with an older hit to be taken as correcting it."""

EARLIEST = "0001-01-01T00:00:00Z"
LATEST = "9999-12-31T23:59:59Z"

# The word lists below are the single source of the month, weekday, unit and named-time words: the
# patterns are built from them, and so is the cheap pre-check (_TRIGGER_WORDS), so the two cannot drift.
_MONTH_NAMES: tuple[tuple[str, ...], ...] = (
    ("january", "jan"), ("february", "feb"), ("march", "mar"), ("april", "apr"), ("may",),
    ("june", "jun"), ("july", "jul"), ("august", "aug"), ("september", "sep", "sept"),
    ("october", "oct"), ("november", "nov"), ("december", "dec"),
)
_WEEKDAY_NAMES: tuple[tuple[str, ...], ...] = (
    ("monday", "mon"), ("tuesday", "tue", "tues"), ("wednesday", "wed"), ("thursday", "thu", "thurs"),
    ("friday", "fri"), ("saturday", "sat"), ("sunday", "sun"),
)
_UNIT_NAMES = ("day", "week", "month", "year")

MONTHS = {name: number for number, names in enumerate(_MONTH_NAMES, start=1) for name in names}
WEEKDAYS = {name: number for number, names in enumerate(_WEEKDAY_NAMES) for name in names}
NUMBERS = {
    "a": 1, "an": 1, "one": 1, "two": 2, "three": 3, "four": 4, "five": 5, "six": 6, "seven": 7,
    "eight": 8, "nine": 9, "ten": 10, "eleven": 11, "twelve": 12, "a couple of": 2, "a couple": 2,
    "a few": 3, "few": 3, "several": 3,
}
UNITS = {form: unit for unit in _UNIT_NAMES for form in (unit, unit + "s")}

# Full month names, and abbreviations only where they cannot be ordinary words ("mar", "may" are
# handled with context below); a longer abbreviation is tried before its prefix ("sept" before "sep").
_AMBIGUOUS_ABBREVIATIONS = ("mar",)
_MONTH_WORDS = tuple(names[0] for names in _MONTH_NAMES) + tuple(
    word
    for names in _MONTH_NAMES
    for word in sorted(names[1:], key=len, reverse=True)
    if word not in _AMBIGUOUS_ABBREVIATIONS
)
_WEEKDAY_WORDS = tuple(names[0] for names in _WEEKDAY_NAMES)  # full names only: "on sat" is too vague
_UNIT_WORDS = tuple(UNITS)
# The named anchors ("today", "last night", "this morning", "last week", ...). Each alternative of the
# named-anchor pattern contains one of _NAMED_WORDS: the phrases "the day before yesterday" and "a few
# days ago" contain "yesterday" and "days", the rest are built from the tuples below.
_NAMED_DAYS = ("today", "tonight", "yesterday")
_NIGHT = "night"  # "last night"
_DAYPARTS = ("morning", "afternoon", "evening")  # "this morning"
_PERIODS = ("week", "weekend", "month", "year")  # "this week", "last year"
_NAMED_WORDS = (*_NAMED_DAYS, _NIGHT, "days", *_DAYPARTS, *_PERIODS)

_MONTH = rf"(?P<month>{'|'.join(_MONTH_WORDS)})\.?"
_MONTH2 = _MONTH.replace("?P<month>", "?P<month2>")
_DAY = r"(?P<day>[0-3]?\d)(?:st|nd|rd|th)?"
_YEAR = r"(?P<year>(?:19|20)\d\d)(?!\.\d|[\w-])"
_NUM = r"(?P<n>\d{1,3}|a couple of|a couple|a few|several|an?|one|two|three|four|five|six|seven|eight|nine|ten|eleven|twelve)"
_UNIT = rf"(?P<unit>{'|'.join(unit + 's?' for unit in _UNIT_NAMES)})"
_WEEKDAY = rf"(?P<weekday>{'|'.join(_WEEKDAY_WORDS)})"
_NAMED = (
    rf"the\s+day\s+before\s+yesterday|a\s+few\s+days\s+ago|{'|'.join(_NAMED_DAYS)}|last\s+{_NIGHT}"
    rf"|this\s+(?:{'|'.join(_DAYPARTS)})|(?:this|last)\s+(?:{'|'.join(_PERIODS)})"
)
# Words that make a bare month or year a time ("in May", "since 2022"); "to"/"and" only count as the
# second half of "between X and Y" / "from X to Y" (see find_time_expression), never alone.
_PREP = r"(?:in|during|since|before|after|until|till|from|of|between|throughout|early|late|mid)"
_BOUND = r"(?![\w-])"


@dataclass(frozen=True)
class TimeExpression:
    """A time expression found in a prompt: the ``[start, end)`` range (ISO UTC) and the words matched."""

    start: str
    end: str
    phrase: str

    @property
    def range(self) -> tuple[str, str]:
        return (self.start, self.end)

    def contains(self, iso: str) -> bool:
        """Whether an ISO UTC timestamp (crib's canonical form) lies in ``[start, end)``."""
        return self.start <= iso < self.end


@dataclass(frozen=True)
class _Span:
    """A calendar span (local dates, end exclusive) found at ``[pos, endpos)`` of the prompt."""

    first: date | None  # None = open at the start
    last: date | None  # exclusive; None = open at the end (or "until now")
    pos: int
    endpos: int
    until_now: bool = False  # "past 3 days": runs to now, not to a date
    absolute: bool = False  # names its year ("May 2023", "in 2022"): preferred over relative words


# -- calendar helpers ----------------------------------------------------------------------------


def _add_months(day: date, months: int) -> date:
    index = day.year * 12 + (day.month - 1) + months
    return date(index // 12, index % 12 + 1, 1)


def _month_span(year: int, month: int) -> tuple[date, date]:
    first = date(year, month, 1)
    return first, _add_months(first, 1)


def _week_start(day: date) -> date:
    return day - timedelta(days=day.weekday())


def _recent_month_year(month: int, today: date) -> int:
    """The year of the most recent ``month`` not in the future (this month counts)."""
    return today.year if month <= today.month else today.year - 1


def _shift(day: date, unit: str, count: int) -> date:
    """``day`` moved by ``count`` days, weeks, months (to the same day, clamped) or years."""
    if unit == "day":
        return day + timedelta(days=count)
    if unit == "week":
        return day + timedelta(weeks=count)
    months = count * (12 if unit == "year" else 1)
    first = _add_months(day.replace(day=1), months)
    return first.replace(day=min(day.day, 28))


def _valid_day(year: int, month: int, day: int) -> date | None:
    try:
        return date(year, month, day)
    except ValueError:
        return None


def _number(text: str) -> int | None:
    text = " ".join(_fold(text).split())
    if text.isdigit():
        return int(text)
    return NUMBERS.get(text)


# -- anchors: one calendar span each --------------------------------------------------------------

Handler = Callable[["re.Match[str]", date], "tuple[date | None, date | None, bool] | None"]


def _h_iso_day(m: "re.Match[str]", today: date) -> tuple[date | None, date | None, bool] | None:
    day = _valid_day(int(m["year"]), int(m["mon"]), int(m["day"]))
    return (day, day + timedelta(days=1), False) if day else None


def _h_day_month_year(m: "re.Match[str]", today: date) -> tuple[date | None, date | None, bool] | None:
    day = _valid_day(int(m["year"]), MONTHS[_fold(m["month"])], int(m["day"]))
    return (day, day + timedelta(days=1), False) if day else None


def _h_day_month(m: "re.Match[str]", today: date) -> tuple[date | None, date | None, bool] | None:
    if m["month"] in ("may", "mar"):  # lower-case and without a year: the verb ("step 1 may fail")
        return None
    month, number = MONTHS[_fold(m["month"])], int(m["day"])
    year = today.year if (month, number) <= (today.month, today.day) else today.year - 1
    day = _valid_day(year, month, number)
    return (day, day + timedelta(days=1), False) if day else None


def _h_month_year(m: "re.Match[str]", today: date) -> tuple[date | None, date | None, bool] | None:
    first, last = _month_span(int(m["year"]), MONTHS[_fold(m["month"])])
    return first, last, False


def _h_month(m: "re.Match[str]", today: date) -> tuple[date | None, date | None, bool] | None:
    month = MONTHS[_fold(m["month"])]
    first, last = _month_span(_recent_month_year(month, today), month)
    return first, last, False


def _h_year(m: "re.Match[str]", today: date) -> tuple[date | None, date | None, bool] | None:
    year = int(m["year"])
    return date(year, 1, 1), date(year + 1, 1, 1), False


def _h_named(m: "re.Match[str]", today: date) -> tuple[date | None, date | None, bool] | None:
    word = " ".join(_fold(m["named"]).split())
    if word in ("today", "tonight", "this morning", "this afternoon", "this evening"):
        return today, today + timedelta(days=1), False
    if word in ("yesterday", "last night"):
        return today - timedelta(days=1), today, False
    if word == "the day before yesterday":
        return today - timedelta(days=2), today - timedelta(days=1), False
    if word == "a few days ago":
        return today - timedelta(days=5), today - timedelta(days=1), False
    which, _, unit = word.partition(" ")
    back = 0 if which == "this" else 1
    if unit == "week":
        first = _week_start(today) - timedelta(weeks=back)
        return first, first + timedelta(weeks=1), False
    if unit == "weekend":
        saturday = _week_start(today) - timedelta(weeks=back) + timedelta(days=5)
        return saturday, saturday + timedelta(days=2), False
    if unit == "month":
        first = _add_months(today.replace(day=1), -back)
        return first, _add_months(first, 1), False
    if unit == "year":
        return date(today.year - back, 1, 1), date(today.year - back + 1, 1, 1), False
    return None


def _h_ago(m: "re.Match[str]", today: date) -> tuple[date | None, date | None, bool] | None:
    count, unit = _number(m["n"]), UNITS[_fold(m["unit"])]
    if count is None or count > 500:
        return None
    if unit == "day":
        day = today - timedelta(days=count)
        return day, day + timedelta(days=1), False
    if unit == "week":
        first = _week_start(today) - timedelta(weeks=count)
        return first, first + timedelta(weeks=1), False
    if unit == "month":
        first = _add_months(today.replace(day=1), -count)
        return first, _add_months(first, 1), False
    return date(today.year - count, 1, 1), date(today.year - count + 1, 1, 1), False


def _h_past(m: "re.Match[str]", today: date) -> tuple[date | None, date | None, bool] | None:
    count, unit = _number(m["n"] or "1"), UNITS[_fold(m["unit"])]
    if count is None or count > 500:
        return None
    if unit == "day":
        first = today - timedelta(days=count)
    elif unit == "week":
        first = today - timedelta(weeks=count)
    elif unit == "month":
        first = _add_months(today.replace(day=1), -count).replace(day=min(today.day, 28))
    else:
        first = date(today.year - count, today.month, min(today.day, 28))
    return first, None, True


def _h_weekday(m: "re.Match[str]", today: date) -> tuple[date | None, date | None, bool] | None:
    target = WEEKDAYS[_fold(m["weekday"])]
    strictly_before = _fold(m["which"] or "") == "last"
    back = (today.weekday() - target) % 7
    if back == 0 and strictly_before:
        back = 7
    day = today - timedelta(days=back)
    return day, day + timedelta(days=1), False


_ABSOLUTE = (_h_iso_day, _h_day_month_year, _h_month_year, _h_year)


class _Patterns(NamedTuple):
    """The compiled patterns of this module (see :func:`_patterns`)."""

    anchors: list[tuple[re.Pattern[str], Handler]]
    """One pattern per kind of anchor, with the handler that turns its match into a calendar span."""
    before: re.Pattern[str]
    """The word right before an anchor that bends its range: "since X", "the week before X", ..."""
    between: re.Pattern[str]
    """The first half of a two-anchor range: "between X" / "from X"."""
    joint: re.Pattern[str]
    """The "and"/"to" joining the two anchors of "between X and Y" / "from X to Y"."""


@functools.cache
def _patterns() -> _Patterns:
    """Compile this module's regexes, once per process, on first use.

    The anchors are ~15 large case-insensitive alternations (months, weekdays, units) whose
    compilation costs more than the rest of the import; compiling them at import time would charge it
    to every ``crib retrieve`` process, although most prompts name no time at all and
    :func:`find_time_expression` can tell so without them (:func:`_may_name_a_time`).
    """
    return _Patterns(
        # Order matters only for matches starting at the same position: the longest match wins.
        anchors=[
            (re.compile(r"\b(?P<year>(?:19|20)\d\d)-(?P<mon>[01]\d)-(?P<day>[0-3]\d)\b"), _h_iso_day),
            (re.compile(rf"\b{_DAY}\s+(?:of\s+)?{_MONTH},?\s+{_YEAR}\b", re.I), _h_day_month_year),
            (re.compile(rf"\b{_MONTH}\s+{_DAY},?\s+{_YEAR}\b", re.I), _h_day_month_year),
            (re.compile(rf"\b{_MONTH},?\s+(?:of\s+)?{_YEAR}\b", re.I), _h_month_year),
            (re.compile(rf"\b{_DAY}\s+(?:of\s+)?{_MONTH}{_BOUND}", re.I), _h_day_month),
            (re.compile(rf"\b{_MONTH}\s+(?P<day>[0-3]?\d)(?:st|nd|rd|th)?(?![\w:.-])", re.I), _h_day_month),
            (re.compile(rf"\b{_PREP}\s+(?:the\s+)?(?:(?:early|late|mid)[\s-]+)?(?P<anchor>{_MONTH[:-3]}){_BOUND}", re.I), _h_month),
            (re.compile(rf"\b(?:{_PREP}|year)\s+(?:the\s+year\s+)?(?P<anchor>{_YEAR})\b", re.I), _h_year),
            (re.compile(rf"\b(?P<named>{_NAMED})\b", re.I), _h_named),
            (re.compile(rf"\b{_NUM}\s+{_UNIT}\s+ago\b", re.I), _h_ago),
            (re.compile(rf"\b(?:in\s+)?(?:the\s+)?(?:past|last)\s+(?:(?P<n>\d{{1,3}}|two|three|four|five|six|seven|eight|nine|ten"
                        rf"|eleven|twelve|a\s+couple\s+of|a\s+few|few|several)\s+)?{_UNIT}\b", re.I), _h_past),
            (re.compile(rf"\b(?:(?P<which>last|on)\s+){_WEEKDAY}\b", re.I), _h_weekday),
        ],
        before=re.compile(r"\b(?P<word>(?:the\s+|last\s+)?(?:day|weekend|week|month|year)\s+(?:before|after)|since|after|before|until|till|prior\s+to|up\s+to|earlier\s+than|later\s+than)\s+(?:the\s+)?$", re.I),
        between=re.compile(r"\b(?P<word>between|from)\s+(?:the\s+)?$", re.I),
        joint=re.compile(r"\s*(?:\band|\bto|\buntil|\btill|\bthrough|-|–)\s*(?:the\s+)?", re.I),
    )


# -- the pre-check: can the text name a time at all? ---------------------------------------------

_TRIGGER_WORDS = frozenset((*_MONTH_WORDS, *_WEEKDAY_WORDS, *_UNIT_WORDS, *_NAMED_WORDS))
"""Every anchor pattern that can match without a digit needs one of these as a whole word: a month
(``in May``), a weekday (``on Monday``), a unit (``two weeks ago``, ``past 3 days``) or a named time
(``yesterday``, ``last night``, ``this morning``, ``last year``)."""

# Under re.I, Python matches these non-ASCII letters with an ASCII one ('ſ' ~ 's', 'K' ~ 'k',
# 'İ' and 'ı' ~ 'i') — the complete list (tests check it against every code point). casefold() maps
# the first two but not the last two ('İ' becomes 'i' + a combining dot, 'ı' stays), so map them here.
_ASCII_EQUIVALENTS = str.maketrans({"\u0130": "i", "\u0131": "i", "\u017f": "s", "\u212a": "k"})
_DIGIT = re.compile(r"\d")  # any Unicode decimal digit, as \d in the anchors
_LETTERS = re.compile(r"[a-z]+")


def _fold(text: str) -> str:
    """``text`` case-folded so that every letter ``re.I`` matches with an ASCII letter becomes it."""
    return text.translate(_ASCII_EQUIVALENTS).casefold()


def _may_name_a_time(text: str) -> bool:
    r"""Whether ``text`` may contain a time expression: a cheap, conservative test before the anchors.

    False only when no anchor pattern can match: every anchor needs either a decimal digit (``\d``,
    any script) or one of :data:`_TRIGGER_WORDS` as a whole word (each pattern bounds those words by
    ``\b``, whitespace or a hyphen). The text is case-folded the way ``re.I`` folds it, so a word
    the patterns match ("YESTERDAY", "yeſterday", "frİday") is found here too. False positives
    ("may", "days-long") only cost compiling the patterns; this never says False when one would match.
    Saves most prompts — which name no time — from compiling the patterns at all (:func:`_patterns`).
    """
    if _DIGIT.search(text):
        return True
    return not _TRIGGER_WORDS.isdisjoint(_LETTERS.findall(_fold(text)))


def _anchors(text: str, today: date) -> list[_Span]:
    """Every anchor in ``text``, left to right; at one position the longest match wins."""
    found: dict[int, _Span] = {}
    for pattern, handler in _patterns().anchors:
        for match in pattern.finditer(text):
            resolved = handler(match, today)
            if resolved is None:
                continue
            first, last, until_now = resolved
            pos = match.start("anchor") if "anchor" in pattern.groupindex else match.start()
            span = _Span(first, last, pos, match.end(), until_now, handler in _ABSOLUTE)
            current = found.get(pos)
            if current is None or span.endpos > current.endpos:
                found[pos] = span
    spans = sorted(found.values(), key=lambda s: s.pos)
    kept: list[_Span] = []
    for span in spans:  # drop anchors nested inside an earlier, longer one
        if kept and span.pos < kept[-1].endpos:
            continue
        kept.append(span)
    return kept


def _second_anchor(text: str, after: int, today: date) -> _Span | None:
    """The ``Y`` of "between X and Y" / "from X to Y": an anchor right after ``and``/``to`` at ``after``.

    A bare month or year there ("between March and May") has no preposition of its own, so the rest
    is read as if it followed "in".
    """
    joint = _patterns().joint.match(text, after)
    if joint is None or joint.end() == after:
        return None
    rest = text[joint.end():]
    for span in _anchors("in " + rest, today):
        if span.pos == 3:
            return _Span(span.first, span.last, span.pos - 3 + joint.end(), span.endpos - 3 + joint.end(), span.until_now)
    return None


# -- public API ------------------------------------------------------------------------------------


def _now(now: str | datetime | None) -> datetime:
    if now is None:
        from .config import fixed_now

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
    between = _patterns().between.search(prefix)
    second = _second_anchor(text, first.endpos, today) if between else None
    if between and second is not None:
        start_pos, end_pos = between.start(), second.endpos
        hi, until_now = second.last, second.until_now
    else:
        before = _patterns().before.search(prefix)
        if before:
            word = " ".join(_fold(before["word"]).split())
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
                    lo, hi, until_now = _shift(lo, unit, -1), lo, False
                elif word.endswith("after") and hi is not None:
                    lo, hi, until_now = hi, _shift(hi, unit, 1), False
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


def _content_words(text: str) -> dict[str, str]:
    """Content words (no stop words, ≥ 3 characters or a number) by stem — what "shared content" means."""
    from .text import STOP_WORDS, stems

    words: dict[str, str] = {}
    for word, stem in stems(text):
        if word not in STOP_WORDS and (len(word) >= 3 or word.isdigit()):
            words.setdefault(stem, word)
    return words


def _fact_keys(store: Store, entry_ids: Sequence[int]) -> dict[int, set[tuple[str, str]]]:
    """``(subject, predicate)`` of every fact (current or superseded) each entry stated."""
    from .facts import facts_for_entries

    keys: dict[int, set[tuple[str, str]]] = {i: set() for i in entry_ids}
    try:
        for fact in facts_for_entries(store, list(entry_ids)):
            for source in fact.source_entry_ids:
                if source in keys:
                    keys[source].add((fact.subject.lower(), fact.predicate))
    except Exception:  # facts are a refinement; a store without them still has the word test
        pass
    return keys


def boost_time_range(hits: list["Hit"], expression: TimeExpression | None, notes: list[tuple[int, str]]) -> None:
    """Multiply the score of every hit written inside ``expression``'s range by :data:`TIME_BOOST`."""
    if expression is None:
        return
    for hit in hits:
        if expression.contains(hit.entry.created_at):
            hit.score *= TIME_BOOST
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
                best_below = 0.0
                for hit in reversed(by_time):  # suffix maximum: non-increasing scores
                    best_below = max(best_below, hit.score)
                    hit.score = best_below
                for position, hit in enumerate(by_time):
                    if group.index(hit) > position:
                        notes.append((hit.entry.id, f"near-tie (within {tolerance:.0%}) with older hits: newer first"))
            group = by_time
        out.extend(group)
    return out


def corrections_first(memory: object, hits: list["Hit"], notes: list[tuple[int, str]]) -> list["Hit"]:
    """Move each ``correction`` hit directly above the best-ranked older hit it corrects (both kept)."""
    corrections = [h for h in hits if h.entry.type == "correction"]
    if not corrections:
        return hits
    store = getattr(memory, "store", None)
    ids = [h.entry.id for h in hits]
    facts = _fact_keys(store, ids) if store is not None else {i: set() for i in ids}
    words: dict[int, dict[str, str]] = {}

    def content(hit: "Hit") -> dict[str, str]:
        if hit.entry.id not in words:
            words[hit.entry.id] = _content_words(hit.entry.content[:MAX_SCAN_CHARS])
        return words[hit.entry.id]

    out = list(hits)
    for correction in corrections:  # best-ranked correction first, so it ends up on top
        position = out.index(correction)
        for target_index, other in enumerate(out[:position]):
            if other.entry.created_at > correction.entry.created_at or (
                other.entry.created_at == correction.entry.created_at and other.entry.id > correction.entry.id
            ):
                continue  # only what was written before the correction can be corrected by it
            shared = sorted(content(correction)[stem] for stem in content(correction).keys() & content(other).keys())
            same_fact = facts.get(correction.entry.id, set()) & facts.get(other.entry.id, set())
            if len(shared) < CORRECTION_SHARED_WORDS and not same_fact:
                continue
            out.pop(position)
            out.insert(target_index, correction)
            correction.score = max(correction.score, other.score)
            why = f"fact {sorted(same_fact)[0][0]} {sorted(same_fact)[0][1]}" if same_fact else f"shares {', '.join(shared[:4])}"
            notes.append((correction.entry.id, f"correction moved above entry {other.entry.id} it corrects ({why}); both kept"))
            break
    return out


def adjust_hits(memory: object, retrieval: "Retrieval", *, now: str | datetime | None = None) -> "Retrieval":
    """Apply the time boost, newer-first near-ties and corrections-first to ``retrieval.hits`` (in place).

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
    hits = corrections_first(memory, hits, notes)
    retrieval.hits = hits
    return retrieval
