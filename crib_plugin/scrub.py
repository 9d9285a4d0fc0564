"""Memory-block scrubbing and tag neutralisation.

crib injects recalled memory into an agent's context as blocks::

    <memory-context>…</memory-context>                      (fenced, with a system note)
    <memory context_time="2026-11-22T10:00:00Z">…</memory>  (the classic crib block)

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

What counts as a memory tag
---------------------------
A memory tag is, with ``NAME`` = ``memory`` or ``memory-context`` (ASCII letters, any case)::

    "<"  ["/"]  NAME  ( ">" | BOUNDARY BODY ">" )

* Nothing may come between ``<``, the optional ``/`` and ``NAME`` -- as in HTML, ``< memory>`` and
  ``< /memory >`` are text, not tags.  (Rationale: a tag the scrubber wrongly takes for an opening tag
  swallows the rest of the stream, so code such as ``if a < memory and b > c`` must stay text.  A
  model that echoes a block reproduces its tags exactly.  :func:`neutralise_tags` is deliberately
  more liberal, see there.)
* ``BOUNDARY`` is whitespace (space, tab, CR, LF, FF, VT), ``/`` or the closing ``>``.  So
  ``<memoryx>``, ``<memo>``, ``<memory-contextual>``, ``<memory-foo>``, ``<memory.x>`` are *not*
  memory tags and pass through untouched.
* ``BODY`` (attributes) is any run of characters except ``<`` and ``>``; a quote (``"`` or ``'``) that
  follows ``=`` (whitespace allowed between) opens a quoted value that runs to the matching quote and
  may contain ``>``.  A quote anywhere else is an ordinary character (so ``<memory don't>`` is a tag).
  ``</memory-context >`` and ``</memory\\n>`` are closing tags.
* ``<`` is never part of a tag, not even inside a quoted value: a ``<`` ends any tag in progress as
  "not a tag" and starts a new candidate.  This keeps candidates from overlapping, which is what makes
  a single-pass, linear-time scrubber possible.
* A tag is at most :data:`MAX_TAG_LENGTH` characters long, from ``<`` to ``>`` inclusive.  A longer
  candidate is text.  This bounds how much output can ever be held back (crib's own tags are well
  under 100 characters).
* An opening tag whose last non-blank body character (outside quotes) is ``/`` is self-closing
  (``<memory/>``): an empty block, removed on its own.

Block semantics
---------------
* An opening tag starts a block; blocks nest (a stack of names).  A closing tag closes the innermost
  open block *of the same name* and every block opened inside it, so ``<memory-context> a </memory>
  b </memory-context>`` is removed entirely (a mismatched closer inside a block is ignored, never an
  early exit that would leak the rest of the block).
* A closing tag with no open block of its name outside any block is memory markup too and is removed.
* A block still open at the end of the stream is dropped, never emitted.
* A tag still incomplete at the end of the stream is dropped if its name is complete (``<memory``,
  ``</memory-context``, ``<memory a="x``: cut-off memory markup) and emitted as text otherwise
  (``<``, ``</``, ``<mem``).
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Iterator
from typing import Any

__all__ = [
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
_BODY = 4  # name complete, inside the attribute section
_EQ = 5  # just after "=" (a quote here opens a quoted value)
_QUOTED = 6  # inside a quoted attribute value

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

    __slots__ = ("_phase", "_idx", "_closer", "_quote", "_last", "_buf", "_len", "_stack", "_open", "_seams")

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
        self._quote = ""
        self._last = ""  # last non-blank body character outside quotes (self-closing detection)
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
            "v": 1,
            "phase": self._phase,
            "idx": self._idx,
            "closer": self._closer,
            "quote": self._quote,
            "last": self._last,
            "buf": "".join(self._buf),
            "len": self._len,
            "stack": [_NAMES[i] for i in self._stack],
        }

    @classmethod
    def from_state(cls, state: dict[str, Any]) -> Scrubber:
        """Rebuild a scrubber from :meth:`to_state` output, to continue the same stream."""
        if state.get("v") != 1:
            raise ValueError(f"unsupported scrubber state version: {state.get('v')!r}")
        by_name = {name: idx for idx, name in _NAMES.items()}
        s = cls()
        s._stack = [by_name[name] for name in state["stack"]]
        s._open = {_SHORT: s._stack.count(_SHORT), _LONG: s._stack.count(_LONG)}
        s._phase = int(state["phase"])
        s._idx = int(state["idx"])
        s._closer = bool(state["closer"])
        s._quote = str(state["quote"])
        s._last = str(state["last"])
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
        if phase == _QUOTED:
            if c == self._quote:
                self._phase = _BODY
                self._last = c
                return _MORE
            return _FAIL if c == "<" else _MORE
        if phase == _BODY:
            if c == ">":
                return _DONE
            if c == "<":
                return _FAIL
            if c == "=":
                self._phase = _EQ
                self._last = c
            elif c not in _WS:
                self._last = c
            return _MORE
        if phase == _NAME_PHASE:
            idx = self._idx
            if idx == _SHORT or idx == _LONG:
                if c == ">":
                    return _DONE
                if c == "/" or c in _WS:
                    self._phase = _BODY
                    self._last = c if c == "/" else ""
                    return _MORE
                if idx == _LONG or c != "-":
                    return _FAIL
            elif c != _NAME[idx] and c != _NAME_UPPER[idx]:
                return _FAIL
            self._idx = idx + 1
            return _MORE
        if phase == _EQ:
            if c in _WS:
                return _MORE
            if c == '"' or c == "'":
                self._phase = _QUOTED
                self._quote = c
                return _MORE
            if c == ">":
                return _DONE
            if c == "<":
                return _FAIL
            if c != "=":
                self._phase = _BODY
            self._last = c
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
        """A whole memory tag has been read: update the block stack; the tag itself is dropped."""
        name = self._idx
        if self._closer:
            if self._open[name]:
                while True:  # close the innermost block of this name and everything inside it
                    top = self._stack.pop()
                    self._open[top] -= 1
                    if top == name:
                        break
            # else: a stray closer (outside) or a mismatched one (inside): removed, no effect
        elif self._last != "/":
            self._stack.append(name)
            self._open[name] += 1
        # else: self-closing opener, an empty block
        if self._seams:
            out.append(None)
        self._clear_candidate()

    def _flush_into(self, out: list[Any]) -> None:
        if self._phase != _IDLE and not self._stack:
            name_complete = self._phase in (_BODY, _EQ, _QUOTED) or (
                self._phase == _NAME_PHASE and self._idx in (_SHORT, _LONG)
            )
            if not name_complete:
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

    Same removal semantics as :func:`scrub_text` (blocks, stray tags, an unclosed block to the end),
    so recalled memory is never stored again as new memory.  Text without memory markup is returned
    unchanged.  Where something was removed, the whitespace on both sides of the gap is collapsed:

    * between two words on one line -> one space (``"a <memory>x</memory> b"`` -> ``"a b"``);
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


# A "<" that starts a memory tag in any form a reader might take for one: whitespace allowed after "<"
# and around "/" (more liberal than the scrubber, on purpose), the name followed by a boundary or the
# end of the text -- or, at the very end of the text, a "<" that the text after it could still extend
# into a memory tag ("<", "</", "<mem", "</memory-cont"), since the template text that follows the
# stored text could complete it.
_NEUTRALISE_RE = re.compile(
    r"<(?=[ \t\n\r\f\v]*/?[ \t\n\r\f\v]*memory(?:-context)?(?:[ \t\n\r\f\v/>]|\Z)"
    r"|/?(?:" + _prefix_alternatives(_NAME) + r")?\Z)",
    re.IGNORECASE | re.ASCII,
)


def neutralise_tags(text: str) -> str:
    """Make every memory tag in ``text`` inert, so stored text can't open or close a memory fence.

    Only the ``<`` of each memory tag is replaced, by :data:`NEUTRAL_LT` ("‹"); all other text,
    including code and HTML with ``<`` and ``>``, is left exactly as it is.  Covered: everything the
    scrubber treats as a memory tag (any case, attributes, whitespace before ``>``), plus the looser
    forms a human or model might still read as one (``< memory>``, ``< /memory >``, ``</ memory>``),
    plus a memory tag cut off at the end of the text (``<memory``, ``</memory-context a="x``) and a
    trailing ``<`` that the following template text could complete (``<``, ``</``, ``<mem``).
    Idempotent: the result contains no such ``<``, so a second pass changes nothing.
    """
    if "<" not in text:
        return text
    return _NEUTRALISE_RE.sub(NEUTRAL_LT, text)
