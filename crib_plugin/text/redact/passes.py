"""The redaction passes: find secret spans (crib's rules, then detect-secrets' on short lines), merge
them and replace each with ``[REDACTED:KIND]``; :func:`redact` for writes, :func:`redact_for_render`
for what is shown.
"""

from __future__ import annotations

import bisect
import re
from collections.abc import Iterable, Sequence
from typing import Any

from ...core.config import redact_enabled
from ...core.errors import ConfigError
from ...core.limits import MAX_SCAN_CHARS

#: The replacement for a secret of kind ``k``: ``MARKER.format(kind=k)``.
from .detect import plugin_rules
from .rules import CRIB_RULES, KEYWORD_KIND, MAX_LINE_FOR_PLUGINS, Rule, keyword_kind, marker

Span = tuple[int, int, str]


def _spans(text: str, rules: Sequence[Rule], offset: int = 0) -> Iterable[tuple[int, int, int, str]]:
    """(start, end, rule order, kind) of every accepted match of ``rules`` in ``text``."""
    lowered = text.lower()
    keyword_starts: list[int] | None = None
    for order, rule in enumerate(rules):
        if not rule.may_match(lowered):
            continue
        if rule.kind == KEYWORD_KIND:
            if keyword_starts is None:
                keyword_starts = _keyword_starts(text, lowered)
            compiled = rule.pattern.compiled()
            matches: Iterable[re.Match[str]] = filter(None, (compiled.match(text, q) for q in keyword_starts))
        else:
            matches = rule.pattern.finditer(text)
        for m in matches:
            group = rule.group if rule.group and m.group(rule.group) is not None else 0
            start, end = m.span(group)
            if end <= start or text.startswith("[REDACTED:", start):
                continue
            if rule.accept is not None and not rule.accept(m, m.group(group)):
                continue
            if end - start >= 2 and text[start] in "\"'`" and text[end - 1] == text[start]:
                start, end = start + 1, end - 1  # a quoted value: the quotes stay
            kind = keyword_kind(m) if rule.kind == KEYWORD_KIND else rule.kind
            yield start + offset, end + offset, order, kind


_KEYWORD_HINT = re.compile(r"pass|pwd|secret|token|key|credential|contrase", re.IGNORECASE)
_LEADING_RUN = re.compile(r"[A-Za-z0-9_.\-]*")  # matched on the reversed text before a keyword
# A keyword rule's match starts at most _KEY_BEFORE characters before its keyword.
_KEY_BEFORE = 160


def _keyword_positions(text: str, lowered: str) -> Iterable[int]:
    """Where a secret-ish keyword starts (``str.find`` on the lowercased text is far faster than a
    case-insensitive regex; when lowercasing changed the length, positions would not line up, so
    the regex runs instead)."""
    if len(lowered) != len(text):
        return (m.start() for m in _KEYWORD_HINT.finditer(text))
    found: list[int] = []
    for word in _KEYWORD_WORDS:
        i = lowered.find(word)
        while i >= 0:
            found.append(i)
            i = lowered.find(word, i + 1)
    return found


_KEYWORD_WORDS = ("pass", "pwd", "secret", "token", "key", "credential", "contrase")


def _keyword_starts(text: str, lowered: str) -> list[int]:
    """Where a keyword rule can start: for each secret-ish keyword, the start of the run of key
    characters it sits in, and each position after a ``-`` in that run up to the keyword (the
    rules' look-behind forbids any other start).  Trying the rules only there costs one anchored
    match per keyword instead of a search through the whole text."""
    starts: set[int] = set()
    for k in _keyword_positions(text, lowered):
        lo = max(0, k - _KEY_BEFORE)
        run = _LEADING_RUN.match(text[lo:k][::-1])
        p = k - (run.end() if run else 0)
        starts.add(p)
        dash = text.find("-", p, k)
        while dash >= 0:
            starts.add(dash + 1)
            dash = text.find("-", dash + 1, k)
    return sorted(starts)


def _line_windows(text: str) -> Iterable[tuple[int, str]]:
    """(offset, line) for each line short enough for detect-secrets' regexes."""
    start = 0
    while start <= len(text):
        end = text.find("\n", start)
        if end < 0:
            end = len(text)
        if end - start <= MAX_LINE_FOR_PLUGINS:
            yield start, text[start:end]
        start = end + 1


def find_secrets(text: str, *, plugins: bool = True) -> list[Span]:
    """The secrets in ``text`` as sorted, non-overlapping ``(start, end, kind)`` spans.

    Overlapping matches of crib's rules merge into one span named after the most specific rule
    (the earliest in :data:`CRIB_RULES`), so ``DB_PASSWORD=postgres://u:pw@h`` is one span.  A
    detect-secrets match that overlaps one of crib's is dropped: it adds only what crib misses."""
    found = list(_spans(text, CRIB_RULES))
    if plugins:
        lowered = text.lower()
        active = [r for r in plugin_rules() if r.may_match(lowered)]
        if active:
            base = len(CRIB_RULES)
            own = _union((s, e) for s, e, _, _ in found)
            for offset, line in _line_windows(text):
                for s, e, o, k in _spans(line, active, offset):
                    if not _overlaps(own, s, e):
                        found.append((s, e, o + base, k))
    if not found:
        return []
    found.sort()
    merged: list[list[object]] = []
    for start, end, order, kind in found:
        if merged and start < merged[-1][1]:  # type: ignore[operator]
            last = merged[-1]
            if order < last[3]:  # type: ignore[operator]
                last[2], last[3] = kind, order
            last[1] = max(last[1], end)  # type: ignore[call-overload]
            continue
        merged.append([start, end, kind, order])
    return [(int(s), int(e), str(k)) for s, e, k, _ in merged]  # type: ignore[call-overload]


def _overlaps(spans: Sequence[tuple[int, int]], start: int, end: int) -> bool:
    """Whether [start, end) overlaps one of ``spans`` (sorted, non-overlapping)."""
    i = bisect.bisect_right(spans, (start, float("inf")))
    return (i > 0 and spans[i - 1][1] > start) or (i < len(spans) and spans[i][0] < end)


def _union(spans: Iterable[tuple[int, int]]) -> list[tuple[int, int]]:
    out: list[tuple[int, int]] = []
    for s, e in sorted(spans):
        if out and s < out[-1][1]:
            out[-1] = (out[-1][0], max(out[-1][1], e))
        else:
            out.append((s, e))
    return out


def _apply(text: str, spans: Sequence[Span]) -> str:
    out: list[str] = []
    prev = 0
    for start, end, kind in spans:
        out.append(text[prev:start])
        out.append(marker(kind))
        prev = end
    out.append(text[prev:])
    return "".join(out)


def _enabled() -> bool:
    """``CRIB_REDACT``; a malformed value keeps redaction on (failing safe, never open)."""
    try:
        return redact_enabled()
    except ConfigError:
        return True


def redact(text: str) -> str:
    """The write pass: replace every secret crib's rules or detect-secrets' find by its marker."""
    if not text or not _enabled():
        return text
    spans = find_secrets(text, plugins=True)
    return _apply(text, spans) if spans else text


def redact_for_render(text: str) -> str:
    """The render pass (per prompt): crib's own precompiled rules only, no detect-secrets import."""
    if not text or not _enabled():
        return text
    spans = find_secrets(text, plugins=False)
    return _apply(text, spans) if spans else text


def redact_head_for_render(text: str, chars: int = MAX_SCAN_CHARS) -> str:
    """:func:`redact_for_render` of the first ``chars`` characters of ``text``: all a one-line
    snippet (a pointer, a manifest row) shows of it. A pointer to a 5 MB entry (an older store's,
    written before entries were capped) cost 0.26 s to redact whole, for 40 characters shown."""
    return redact_for_render(text[:chars])


def redact_value(value: Any) -> Any:
    """``value`` with :func:`redact_for_render` applied to every string in it (dicts and lists
    walked): an entry's content *and* metadata as ``crib export``, ``list`` and ``show`` print them,
    so text stored before redaction existed never leaves the store verbatim."""
    if isinstance(value, str):
        return redact_for_render(value)
    if isinstance(value, dict):
        return {k: redact_value(v) for k, v in value.items()}
    if isinstance(value, list):
        return [redact_value(v) for v in value]
    return value
