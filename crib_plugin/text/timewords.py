"""The vocabulary and patterns of English time expressions: the low, pure layer of :mod:`.temporal`.

Word lists, the anchor patterns built from them (compiled lazily, once: :func:`time_patterns`), the handler
of each anchor (a match to a ``[first, last)`` day range) and the calendar arithmetic they share. No
store, no records: :mod:`.temporal` scans a prompt with these and applies the ranking adjustments.

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
from datetime import date, timedelta
from typing import Callable, NamedTuple

EARLIEST = "0001-01-01T00:00:00Z"
LATEST = "9999-12-31T23:59:59Z"

# Under re.I, Python matches these non-ASCII letters with an ASCII one ('ſ' ~ 's', 'K' ~ 'k',
# 'İ' and 'ı' ~ 'i') — the complete list (tests check it against every code point). casefold() maps
# the first two but not the last two ('İ' becomes 'i' + a combining dot, 'ı' stays), so map them here.
_ASCII_EQUIVALENTS = str.maketrans({"\u0130": "i", "\u0131": "i", "\u017f": "s", "\u212a": "k"})
def fold(text: str) -> str:
    """``text`` case-folded so that every letter ``re.I`` matches with an ASCII letter becomes it."""
    return text.translate(_ASCII_EQUIVALENTS).casefold()


# The word lists below are the single source of the month, weekday, unit and named-time words: the
# patterns are built from them, and so is the cheap pre-check (TRIGGER_WORDS), so the two cannot drift.
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
MONTH_WORDS = tuple(names[0] for names in _MONTH_NAMES) + tuple(
    word
    for names in _MONTH_NAMES
    for word in sorted(names[1:], key=len, reverse=True)
    if word not in _AMBIGUOUS_ABBREVIATIONS
)
WEEKDAY_WORDS = tuple(names[0] for names in _WEEKDAY_NAMES)  # full names only: "on sat" is too vague
_UNIT_WORDS = tuple(UNITS)
# The named anchors ("today", "last night", "this morning", "last week", ...). Each alternative of the
# named-anchor pattern contains one of _NAMED_WORDS: the phrases "the day before yesterday" and "a few
# days ago" contain "yesterday" and "days", the rest are built from the tuples below.
_NAMED_DAYS = ("today", "tonight", "yesterday")
_NIGHT = "night"  # "last night"
_DAYPARTS = ("morning", "afternoon", "evening")  # "this morning"
_PERIODS = ("week", "weekend", "month", "year")  # "this week", "last year"
_NAMED_WORDS = (*_NAMED_DAYS, _NIGHT, "days", *_DAYPARTS, *_PERIODS)

_MONTH = rf"(?P<month>{'|'.join(MONTH_WORDS)})\.?"
_MONTH2 = _MONTH.replace("?P<month>", "?P<month2>")
_DAY = r"(?P<day>[0-3]?\d)(?:st|nd|rd|th)?"
_YEAR = r"(?P<year>(?:19|20)\d\d)(?!\.\d|[\w-])"
_NUM = r"(?P<n>\d{1,3}|a couple of|a couple|a few|several|an?|one|two|three|four|five|six|seven|eight|nine|ten|eleven|twelve)"
_UNIT = rf"(?P<unit>{'|'.join(unit + 's?' for unit in _UNIT_NAMES)})"
_WEEKDAY = rf"(?P<weekday>{'|'.join(WEEKDAY_WORDS)})"
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
class Span:
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


def shift(day: date, unit: str, count: int) -> date:
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
    text = " ".join(fold(text).split())
    if text.isdigit():
        return int(text)
    return NUMBERS.get(text)


# -- anchors: one calendar span each --------------------------------------------------------------

Handler = Callable[["re.Match[str]", date], "tuple[date | None, date | None, bool] | None"]


def _h_iso_day(m: "re.Match[str]", today: date) -> tuple[date | None, date | None, bool] | None:
    day = _valid_day(int(m["year"]), int(m["mon"]), int(m["day"]))
    return (day, day + timedelta(days=1), False) if day else None


def _h_day_month_year(m: "re.Match[str]", today: date) -> tuple[date | None, date | None, bool] | None:
    day = _valid_day(int(m["year"]), MONTHS[fold(m["month"])], int(m["day"]))
    return (day, day + timedelta(days=1), False) if day else None


def _h_day_month(m: "re.Match[str]", today: date) -> tuple[date | None, date | None, bool] | None:
    if m["month"] in ("may", "mar"):  # lower-case and without a year: the verb ("step 1 may fail")
        return None
    month, number = MONTHS[fold(m["month"])], int(m["day"])
    year = today.year if (month, number) <= (today.month, today.day) else today.year - 1
    day = _valid_day(year, month, number)
    return (day, day + timedelta(days=1), False) if day else None


def _h_month_year(m: "re.Match[str]", today: date) -> tuple[date | None, date | None, bool] | None:
    first, last = _month_span(int(m["year"]), MONTHS[fold(m["month"])])
    return first, last, False


def _h_month(m: "re.Match[str]", today: date) -> tuple[date | None, date | None, bool] | None:
    month = MONTHS[fold(m["month"])]
    first, last = _month_span(_recent_month_year(month, today), month)
    return first, last, False


def _h_year(m: "re.Match[str]", today: date) -> tuple[date | None, date | None, bool] | None:
    year = int(m["year"])
    return date(year, 1, 1), date(year + 1, 1, 1), False


def _h_named(m: "re.Match[str]", today: date) -> tuple[date | None, date | None, bool] | None:
    word = " ".join(fold(m["named"]).split())
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
    count, unit = _number(m["n"]), UNITS[fold(m["unit"])]
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
    count, unit = _number(m["n"] or "1"), UNITS[fold(m["unit"])]
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
    target = WEEKDAYS[fold(m["weekday"])]
    strictly_before = fold(m["which"] or "") == "last"
    back = (today.weekday() - target) % 7
    if back == 0 and strictly_before:
        back = 7
    day = today - timedelta(days=back)
    return day, day + timedelta(days=1), False


ABSOLUTE = (_h_iso_day, _h_day_month_year, _h_month_year, _h_year)


class _Patterns(NamedTuple):
    """The compiled patterns of this module (see :func:`time_patterns`)."""

    anchors: list[tuple[re.Pattern[str], Handler]]
    """One pattern per kind of anchor, with the handler that turns its match into a calendar span."""
    before: re.Pattern[str]
    """The word right before an anchor that bends its range: "since X", "the week before X", ..."""
    between: re.Pattern[str]
    """The first half of a two-anchor range: "between X" / "from X"."""
    joint: re.Pattern[str]
    """The "and"/"to" joining the two anchors of "between X and Y" / "from X to Y"."""


@functools.cache
def time_patterns() -> _Patterns:
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

TRIGGER_WORDS = frozenset((*MONTH_WORDS, *WEEKDAY_WORDS, *_UNIT_WORDS, *_NAMED_WORDS))
"""Every anchor pattern that can match without a digit needs one of these as a whole word: a month
(``in May``), a weekday (``on Monday``), a unit (``two weeks ago``, ``past 3 days``) or a named time
(``yesterday``, ``last night``, ``this morning``, ``last year``)."""
