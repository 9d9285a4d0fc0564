"""Memory-block scrubbing and tag neutralisation.

crib injects recalled memory into an agent's context as blocks::

    <memory-context context_time="2026-11-22T10:00:00Z">…</memory-context>  (fenced, with a note)
    <memory context_time="2026-11-22T10:00:00Z" channels="fts">…</memory>  (the classic crib block)

A model may echo such a block back.  Three tools keep memory markup where it belongs:

* :class:`Scrubber` (and :func:`scrub_text`, :func:`scrub_stream`) removes memory blocks from model
  output on its way to the user.  Output arrives as chunks split at arbitrary characters, so the
  scrubber is a small state machine that holds back *only* what could still turn out to be a memory
  tag, and emits everything else at once.  It runs in linear time: every character is looked at a
  bounded number of times, whatever the chunking.
* :func:`strip_memory_blocks` removes injected blocks from text an agent asks to store, so recalled
  memory is never stored again as new memory (write hygiene).
* :func:`neutralise_tags` makes memory tags inside stored text inert before that text is rendered
  inside a block, so stored text can never close (or open) the fence.

What counts as a crib tag
-------------------------
Only the tags crib's own templates render (``templates/memory.md.j2``, ``memory_context.md.j2``)
are cut; every other ``<…>`` -- generics (``Vec<Memory>``), includes (``#include <memory>``), HTML,
a ``<memory>`` mentioned in prose -- is text.  With ``NAME`` = ``memory`` or ``memory-context``
(ASCII letters, any case) and ``WS`` = space, tab, CR, LF, FF, VT:

* **opener**: ``"<" NAME (WS+ ATTR '="' VALUE '"')+ WS* ">"`` where every ``ATTR`` is one of crib's
  (:data:`CRIB_ATTRIBUTES`: ``context_time``, ``channels``, ``skipped``), ``context_time`` is among
  them (crib always writes it) and ``VALUE`` holds no ``"`` or ``<`` (it may hold ``>``).  So
  ``<memory context_time="2026-11-22T10:00:00Z" channels="fts">`` opens a block and ``<memory>``,
  ``<Memory>``, ``<memory id="1">``, ``<memory context_time=x>`` do not.
* **closer**: ``"</" NAME WS* ">"``; it closes the innermost open block of its name and every
  block opened inside it.  With no open block of its name it is not crib's: outside a block it
  stays as text (``"the </memory> tag"``), inside a block it is dropped with the block.
* Nothing may come between ``<``, the optional ``/`` and ``NAME``.  ``<`` is never part of a tag, not
  even inside a quoted value: it ends any candidate as "not a tag" and starts a new one, so
  candidates never overlap and the scrubber runs in one linear pass.
* A tag is at most :data:`MAX_TAG_LENGTH` characters long; a longer candidate is text.  This bounds
  what can be held back.

Block semantics
---------------
* Blocks nest.  A block still open at the end of the stream is dropped, never emitted: its opener
  was crib's, so what follows is recalled memory.
* An unfinished candidate at the end of the stream (``"<"``, ``"<memory"``, ``"<memory id="``) is
  emitted as text -- never is text after an unclosed tag lost -- unless it already is crib's opener
  cut off after ``context_time=`` (``<memory context_time="2026-11``): cut-off crib markup, dropped.
"""

from __future__ import annotations

import functools
import re
from collections.abc import Iterable, Iterator
from typing import Any

__all__ = [
    "CRIB_ATTRIBUTES",
    "MAX_TAG_LENGTH",
    "NEUTRAL_LT",
    "Scrubber",
    "neutralise_tags",
    "scrub_stream",
    "scrub_text",
    "strip_memory_blocks",
]

#: Longest string (``<`` … ``>`` inclusive) that is still accepted as one memory tag.
MAX_TAG_LENGTH = 1024

#: What :func:`neutralise_tags` puts in place of the ``<`` of a memory tag (U+2039, "‹").
NEUTRAL_LT = "\u2039"

_WS = " \t\n\r\f\v"
_NAME = "memory-context"  # "memory" is its first six characters
_NAME_UPPER = _NAME.upper()
_SHORT, _LONG = 6, len(_NAME)  # name-index values at which a complete name has been matched
_NAMES = {_SHORT: "memory", _LONG: "memory-context"}

# Phases of the tag recogniser.
_IDLE = 0  # no candidate in progress
_LT = 1  # saw "<"
_SLASH = 2  # saw "</"
_NAME_PHASE = 3  # matching the name; self._idx characters of _NAME matched so far
_SPACE = 4  # opener: between attributes (self._sp: whitespace seen since the last one)
_EQ = 5  # opener: just after an attribute's "=" (a '"' must follow)
_QUOTED = 6  # opener: inside an attribute's double-quoted value
_ATTR = 7  # opener: reading an attribute name (in self._attr)
_CLOSE_SPACE = 8  # closer: after the name, only whitespace and ">" may follow

#: The attributes crib's templates put on an opening tag; ``context_time`` is always there.
CRIB_ATTRIBUTES = frozenset({"context_time", "channels", "skipped"})
_REQUIRED_ATTRIBUTE = "context_time"
_MAX_ATTR_NAME = 32

# Results of feeding one character to the recogniser.
_MORE, _DONE, _FAIL = 0, 1, 2


class Scrubber:
    """Streaming filter that removes memory blocks (and stray memory tags) from chunked text.

    Feed chunks split anywhere (even inside a tag) with :meth:`feed`; each call returns the text that
    is now known to be safe to show.  Call :meth:`flush` at the end of the stream.  The only text ever
    held back is a candidate memory tag outside a block -- a ``<`` and what follows it while it could
    still be the start of an opening or (stray) closing memory tag -- so ``feed("hello <")`` returns
    ``"hello "`` and ``feed("a < b")`` returns ``"a < b"``.  See the module docstring for exactly what
    counts as a tag.

    Complexity is linear in the total input: outside a candidate, chunks are scanned with
    ``str.find``; a candidate is advanced one character at a time and is never rescanned (candidates
    cannot overlap because ``<`` always ends one).

    The state is small and JSON-serialisable (:meth:`to_state` / :meth:`from_state`), so a filter
    that runs as a new process per batch (Claude Code's ``MessageDisplay`` hook) can carry a
    partial tag or an open block over to the next batch of the same message.
    """

    __slots__ = ("_phase", "_idx", "_closer", "_attr", "_crib", "_sp", "_buf", "_len", "_stack", "_open", "_seams")

    def __init__(self) -> None:
        self._seams = False  # strip_memory_blocks() sets this to learn where text was removed
        self._reset()

    def _reset(self) -> None:
        """Return to the initial state: outside any block, no candidate."""
        self._stack: list[int] = []  # name indices (_SHORT / _LONG) of the open blocks, innermost last
        self._open = {_SHORT: 0, _LONG: 0}  # how many blocks of each name are open
        self._clear_candidate()

    def _clear_candidate(self) -> None:
        self._phase = _IDLE
        self._idx = 0
        self._closer = False
        self._attr = ""  # the attribute name being read (opener)
        self._crib = False  # the opener has crib's required attribute (context_time="…")
        self._sp = False  # whitespace seen since the name or the last quoted value (opener)
        self._buf: list[str] = []  # held-back candidate text (only kept outside a block)
        self._len = 0  # candidate length in characters

    # ------------------------------------------------------------------ public API

    @property
    def in_block(self) -> bool:
        """True while inside a memory block (everything fed is being dropped)."""
        return bool(self._stack)

    @property
    def pending(self) -> str:
        """The text currently held back (a possible memory tag outside a block), for inspection."""
        return "" if self._stack else "".join(self._buf)

    def feed(self, chunk: str) -> str:
        """Consume ``chunk`` and return the text that is now safe to emit (possibly ``""``)."""
        if self._phase == _IDLE and "<" not in chunk:  # fast path: most chunks of ordinary text
            return "" if self._stack else chunk
        out: list[Any] = []
        self._feed_into(chunk, out)
        return "".join(out)

    def flush(self) -> str:
        """End the stream: return what is left to emit and reset the scrubber for reuse.

        An open block is dropped.  A held-back candidate is emitted if it never got past a prefix of
        the name (``"<"``, ``"</mem"``) and dropped if its name was complete (cut-off memory markup).
        """
        out: list[Any] = []
        self._flush_into(out)
        return "".join(out)

    def to_state(self) -> dict[str, Any]:
        """Return the scrubber's state as a JSON-serialisable dict (see :meth:`from_state`)."""
        return {
            "v": 2,
            "phase": self._phase,
            "idx": self._idx,
            "closer": self._closer,
            "attr": self._attr,
            "crib": self._crib,
            "sp": self._sp,
            "buf": "".join(self._buf),
            "len": self._len,
            "stack": [_NAMES[i] for i in self._stack],
        }

    @classmethod
    def from_state(cls, state: dict[str, Any]) -> Scrubber:
        """Rebuild a scrubber from :meth:`to_state` output, to continue the same stream."""
        if state.get("v") != 2:
            raise ValueError(f"unsupported scrubber state version: {state.get('v')!r}")
        by_name = {name: idx for idx, name in _NAMES.items()}
        s = cls()
        s._stack = [by_name[name] for name in state["stack"]]
        s._open = {_SHORT: s._stack.count(_SHORT), _LONG: s._stack.count(_LONG)}
        s._phase = int(state["phase"])
        s._idx = int(state["idx"])
        s._closer = bool(state["closer"])
        s._attr = str(state["attr"])
        s._crib = bool(state["crib"])
        s._sp = bool(state["sp"])
        s._buf = [state["buf"]] if state["buf"] else []
        s._len = int(state["len"])
        return s

    # ------------------------------------------------------------------ machinery

    def _feed_into(self, chunk: str, out: list[Any]) -> None:
        """Process ``chunk``, appending emitted text (and seam marks, if enabled) to ``out``."""
        i, n = 0, len(chunk)
        while i < n:
            if self._phase == _IDLE:
                j = chunk.find("<", i)
                if j < 0:
                    if not self._stack:
                        out.append(chunk[i:])
                    return
                if j > i and not self._stack:
                    out.append(chunk[i:j])
                self._phase = _LT
                self._len = 1
                if not self._stack:
                    self._buf.append("<")
                i = j + 1
                continue
            c = chunk[i]
            result = self._step(c) if self._len < MAX_TAG_LENGTH else _FAIL
            if result == _MORE:
                self._len += 1
                if not self._stack:
                    self._buf.append(c)
                i += 1
            elif result == _DONE:
                self._complete_tag(out)
                i += 1
            else:  # not a tag: release the candidate as text and look at ``c`` afresh
                if not self._stack:
                    out.append("".join(self._buf))
                self._clear_candidate()

    def _step(self, c: str) -> int:
        """Advance the tag recogniser by one character; return _MORE, _DONE or _FAIL."""
        phase = self._phase
        if phase == _QUOTED or phase == _SPACE or phase == _ATTR or phase == _EQ:
            return self._step_attribute(c, phase)
        return self._step_name(c, phase)

    def _step_attribute(self, c: str, phase: int) -> int:
        """One character inside the tag after its name: spaces, ``name="value"`` attributes, ``>``."""
        if phase == _QUOTED:
            if c == '"':
                self._phase = _SPACE
                self._sp = False
                return _MORE
            return _FAIL if c == "<" else _MORE
        if phase == _SPACE:
            if c in _WS:
                self._sp = True
                return _MORE
            if c == ">":
                return _DONE if self._crib else _FAIL
            if self._sp and (c == "_" or "a" <= c <= "z"):
                self._phase = _ATTR
                self._attr = c
                return _MORE
            return _FAIL
        if phase == _ATTR:
            if c == "=":
                if self._attr not in CRIB_ATTRIBUTES:
                    return _FAIL
                self._crib = self._crib or self._attr == _REQUIRED_ATTRIBUTE
                self._phase = _EQ
                return _MORE
            if (c == "_" or "a" <= c <= "z") and len(self._attr) < _MAX_ATTR_NAME:
                self._attr += c
                return _MORE
            return _FAIL
        # phase == _EQ
        if c == '"':
            self._phase = _QUOTED
            return _MORE
        return _FAIL

    def _step_name(self, c: str, phase: int) -> int:
        """One character of ``<``, ``/`` and the tag's name (``memory`` / ``memory-context``)."""
        if phase == _CLOSE_SPACE:
            if c == ">":
                return _DONE
            return _MORE if c in _WS else _FAIL
        if phase == _NAME_PHASE:
            idx = self._idx
            if idx == _SHORT or idx == _LONG:
                if c in _WS:
                    self._phase = _CLOSE_SPACE if self._closer else _SPACE
                    self._sp = True
                    return _MORE
                if c == ">":
                    return _DONE if self._closer else _FAIL
                if idx == _LONG or c != "-":
                    return _FAIL
            elif c != _NAME[idx] and c != _NAME_UPPER[idx]:
                return _FAIL
            self._idx = idx + 1
            return _MORE
        if phase == _LT:
            if c == "/":
                self._closer = True
                self._phase = _SLASH
                return _MORE
            if c == "m" or c == "M":
                self._phase = _NAME_PHASE
                self._idx = 1
                return _MORE
            return _FAIL
        # phase == _SLASH
        if c == "m" or c == "M":
            self._phase = _NAME_PHASE
            self._idx = 1
            return _MORE
        return _FAIL

    def _complete_tag(self, out: list[Any]) -> None:
        """A whole crib tag has been read: update the block stack; the tag itself is dropped.

        A closer with no open block of its name is not crib's: outside a block it stays as text."""
        name = self._idx
        if self._closer:
            if not self._open[name]:
                if not self._stack:
                    out.append("".join(self._buf) + ">")
                self._clear_candidate()
                return
            while True:  # close the innermost block of this name and everything inside it
                top = self._stack.pop()
                self._open[top] -= 1
                if top == name:
                    break
        else:
            self._stack.append(name)
            self._open[name] += 1
        if self._seams:
            out.append(None)
        self._clear_candidate()

    def _flush_into(self, out: list[Any]) -> None:
        if self._phase != _IDLE and not self._stack:
            if not self._crib:  # an unfinished tag is text unless it already is crib's opener
                out.append("".join(self._buf))
            elif self._seams:
                out.append(None)
        elif self._stack and self._seams:
            out.append(None)
        self._reset()


def scrub_text(text: str) -> str:
    """Remove memory blocks and stray memory tags from a complete text (one-shot :class:`Scrubber`)."""
    s = Scrubber()
    return s.feed(text) + s.flush()


def scrub_stream(chunks: Iterable[str]) -> Iterator[str]:
    """Scrub a stream of chunks lazily, yielding each non-empty piece of safe output as it is known."""
    s = Scrubber()
    for chunk in chunks:
        piece = s.feed(chunk)
        if piece:
            yield piece
    tail = s.flush()
    if tail:
        yield tail


def strip_memory_blocks(text: str) -> str:
    """Remove injected memory blocks from text an agent wants to store (write hygiene).

    Same removal semantics as :func:`scrub_text` (crib's blocks, an unclosed crib block to the end),
    so recalled memory is never stored again as new memory.  Text without crib's blocks is returned
    unchanged (``#include <memory>`` and ``Vec<Memory>`` included).  Where something was removed,
    the whitespace on both sides of the gap is collapsed:

    * between two words on one line -> one space (``"a <memory context_time="t">x</memory> b"`` ->
      ``"a b"``);
    * across lines -> as many newlines as the larger side had, at most two (a paragraph break
      survives, a block on its own line leaves no blank line), keeping the indentation of the line
      that follows;
    * directly between characters -> nothing (``"a<memory>x</memory>b"`` -> ``"ab"``);
    * at the start or end of the text -> nothing.
    """
    s = Scrubber()
    s._seams = True
    pieces: list[Any] = []
    s._feed_into(text, pieces)
    s._flush_into(pieces)
    if None not in pieces:
        return "".join(pieces)

    out: list[str] = []
    gap_left = ""  # whitespace taken off the end of ``out`` at the pending gap
    gap_right = ""  # whitespace seen after the pending gap
    gap = False
    for piece in pieces:
        if piece is None:
            if not gap:
                gap = True
                # Take the trailing whitespace off what has been kept so far.
                while out:
                    last = out[-1]
                    kept = last.rstrip(_WS)
                    if kept:
                        gap_left = last[len(kept):] + gap_left
                        out[-1] = kept
                        break
                    gap_left = last + gap_left
                    out.pop()
            else:  # another removal before any real text: fold the whitespace in between
                gap_left += gap_right
                gap_right = ""
            continue
        if not gap:
            out.append(piece)
            continue
        body = piece.lstrip(_WS)
        gap_right += piece[: len(piece) - len(body)]
        if not body:
            continue
        if out:  # (at the start of the text the gap's whitespace simply goes)
            out.append(_join_gap(gap_left, gap_right))
        out.append(body)
        gap, gap_left, gap_right = False, "", ""
    # A gap still open here is at the end of the text: its whitespace goes too.
    return "".join(out)


def _join_gap(left: str, right: str) -> str:
    """The whitespace that replaces ``left`` + removed text + ``right`` between two kept texts."""
    newlines = max(left.count("\n"), right.count("\n"))
    if newlines:
        if "\n" in right:
            indent = right[right.rindex("\n") + 1 :]
        else:
            indent = left[left.rindex("\n") + 1 :]
        eol = "\r\n" if "\r\n" in left + right else "\n"  # keep the text's line-ending style
        return eol * min(newlines, 2) + indent
    return " " if left or right else ""


def _prefix_alternatives(word: str) -> str:
    """Regex matching any non-empty prefix of ``word`` (literal characters), longest first."""
    return "|".join(re.escape(word[:k]) for k in range(len(word), 0, -1))


# Characters that render as nothing (zero-width spaces and joiners, soft hyphen, BOM, bidi marks):
# a reader does not see them, so "<mem\u200bory>" reads as a memory tag.
_INVISIBLE = "\u00ad\u034f\u061c\u115f\u1160\u17b4\u17b5\u180e\u200b-\u200f\u202a-\u202e\u2060-\u206f\ufeff"
_Z = f"[{_INVISIBLE}]*"
_SP = f"[ \t\n\r\f\v{_INVISIBLE}]*"
# Every way of writing "<" that a reader (or a model) still takes for one: ASCII, fullwidth, small
# form, HTML entities.  (The single angle quotation mark that neutralising produces is not one.)
_LT_FORMS = r"(?:<|\uff1c|\ufe64|&lt;?|&#0*60;?|&#x0*3c;?)"
_SLASH_FORMS = r"(?:/|\uff0f|&#0*47;?|&#x0*2f;?|&sol;)"


def _letter(ch: str) -> str:
    """A letter of the tag name, ASCII or fullwidth, any case."""
    forms = {ch.lower(), ch.upper(), chr(ord(ch.lower()) + 0xFEE0), chr(ord(ch.upper()) + 0xFEE0)}
    return "[" + "".join(sorted(re.escape(f) for f in forms)) + "]"


def _name_pattern(word: str) -> str:
    """``word`` letter by letter, with invisible characters allowed between the letters."""
    parts = [_letter(c) if c.isalpha() else f"(?:{re.escape(c)}|\uff0d)" for c in word]
    return _Z.join(parts)


_NAME_RE = _name_pattern("memory") + f"(?:{_Z}" + _name_pattern("-context") + ")?"
_BOUNDARY = f"(?:[ \t\n\r\f\v/>\uff1e\uff0f]|&gt;?|&#0*62;?|&#x0*3e;?|{_Z}\\Z)"

# A "<" that starts a memory tag in any form a reader might take for one: whitespace allowed after
# "<" and around "/" (more liberal than the scrubber, on purpose), the name followed by a boundary
# or the end of the text -- or, at the very end of the text, a "<" that the text after it could
# still extend into a memory tag ("<", "</", "<mem", "</memory-cont"), since the template text that
# follows the stored text could complete it.  This is the plain form (ASCII): small, compiled at import.
_NEUTRALISE_RE = re.compile(
    r"<(?=[ \t\n\r\f\v]*/?[ \t\n\r\f\v]*memory(?:-context)?(?:[ \t\n\r\f\v/>]|\Z)"
    r"|/?(?:" + _prefix_alternatives(_NAME) + r")?\Z)",
    re.IGNORECASE | re.ASCII,
)
# Any sign of a look-alike: a fullwidth or small "<", a fullwidth letter, an invisible character, an
# entity for "<".  Only then is the large pattern below compiled and used (it takes tens of ms).
_LOOKALIKE_HINT = re.compile(f"[\uff1c\ufe64\uff21-\uff5a{_INVISIBLE}]|&(?:lt|#0*60|#x0*3c)", re.IGNORECASE)


@functools.lru_cache(maxsize=1)
def _lookalike_re() -> re.Pattern[str]:
    """:data:`_NEUTRALISE_RE` widened to look-alikes: "<" in any of its forms (fullwidth, small,
    entities), invisible characters allowed after it, around "/" and between the name's letters,
    the name in ASCII or fullwidth letters."""
    return re.compile(
        f"{_LT_FORMS}(?={_SP}(?:{_SLASH_FORMS})?{_SP}{_NAME_RE}{_Z}{_BOUNDARY}"
        r"|/?(?:" + _prefix_alternatives(_NAME) + r")?\Z)",
        re.IGNORECASE,
    )


def neutralise_tags(text: str) -> str:
    """Make every memory tag in ``text`` inert, so stored text can't open or close a memory fence.

    Only the ``<`` of each memory tag is replaced, by :data:`NEUTRAL_LT` ("‹"); all other text,
    including code and HTML with ``<`` and ``>``, is left exactly as it is.  Covered: everything the
    scrubber treats as a memory tag (any case, attributes, whitespace before ``>``), plus the looser
    forms a human or model might still read as one (``< memory>``, ``< /memory >``, ``</ memory>``),
    plus a memory tag cut off at the end of the text (``<memory``, ``</memory-context a="x``) and a
    trailing ``<`` that the following template text could complete (``<``, ``</``, ``<mem``).
    Look-alikes are neutralised too, so no reader takes stored text for crib's fence: fullwidth
    brackets and letters (``＜memory＞``), HTML entities (``&lt;/memory&gt;``, ``&#60;memory>``)
    and invisible characters inside the tag (``<mem\u200bory>``, ``<\u200b/memory>``); the whole
    ``<`` form (``&lt;`` included) becomes one ``‹``.
    Idempotent: the result contains no such ``<``, so a second pass changes nothing.
    """
    if _LOOKALIKE_HINT.search(text):
        return _lookalike_re().sub(NEUTRAL_LT, text)
    if "<" not in text:
        return text
    return _NEUTRALISE_RE.sub(NEUTRAL_LT, text)
