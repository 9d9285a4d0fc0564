"""The streaming scrubber: a linear-time state machine that cuts crib's memory blocks from model output.

See the package docstring (:mod:`crib_plugin.text.scrub`) for what counts as a crib tag and the block semantics.
"""

from __future__ import annotations

from collections.abc import Iterable, Iterator
from typing import Any

#: Longest string (``<`` … ``>`` inclusive) that is still accepted as one memory tag.
MAX_TAG_LENGTH = 1024

#: What :func:`neutralise_tags` puts in place of the ``<`` of a memory tag (U+2039, "‹").
NEUTRAL_LT = "\u2039"

WS = " \t\n\r\f\v"
NAME = "memory-context"  # "memory" is its first six characters
_NAME_UPPER = NAME.upper()
_SHORT, _LONG = 6, len(NAME)  # name-index values at which a complete name has been matched
_NAMES = {_SHORT: "memory", _LONG: "memory-context"}

# Phases of the tag recogniser.
_IDLE = 0  # no candidate in progress
_LT = 1  # saw "<"
_SLASH = 2  # saw "</"
_NAME_PHASE = 3  # matching the name; self._idx characters of NAME matched so far
_SPACE = 4  # opener: between attributes (self._sp: whitespace seen since the last one)
_EQ = 5  # opener: just after an attribute's "=" (a '"' must follow)
_QUOTED = 6  # opener: inside an attribute's double-quoted value
_ATTR = 7  # opener: reading an attribute name (in self._attr)
_CLOSE_SPACE = 8  # closer: after the name, only whitespace and ">" may follow

#: The attributes crib's templates put on an opening tag; ``context_time`` is always there.
CRIB_ATTRIBUTES = frozenset({"context_time", "channels", "skipped"})
_REQUIRED_ATTRIBUTE = "context_time"
_MAX_ATTR_NAME = 32
# Attribute names a ``memory-context`` opener may have besides crib's (it is crib's name alone, so any
# attributes a model leaves on it or adds do not make it text): letters, digits, "_", "-", ":".
_LONG_ATTR_CHARS = frozenset("abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789_-:")

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
            if c in WS:
                self._sp = True
                return _MORE
            if c == ">":
                return _DONE if self._crib else _FAIL
            if self._sp and (c == "_" or "a" <= c <= "z" or (self._idx == _LONG and c in _LONG_ATTR_CHARS)):
                self._phase = _ATTR
                self._attr = c
                return _MORE
            return _FAIL
        if phase == _ATTR:
            if c == "=":
                if self._attr not in CRIB_ATTRIBUTES and self._idx != _LONG:  # memory-context: any attribute
                    return _FAIL
                self._crib = self._crib or self._attr == _REQUIRED_ATTRIBUTE
                self._phase = _EQ
                return _MORE
            if (c == "_" or "a" <= c <= "z" or (self._idx == _LONG and c in _LONG_ATTR_CHARS)) and len(self._attr) < _MAX_ATTR_NAME:
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
            return _MORE if c in WS else _FAIL
        if phase == _NAME_PHASE:
            idx = self._idx
            if idx == _SHORT or idx == _LONG:
                if c in WS:
                    self._phase = _CLOSE_SPACE if self._closer else _SPACE
                    self._sp = True
                    return _MORE
                if c == ">":  # "<memory-context>" is crib's with or without attributes; "<memory>" is not
                    return _DONE if self._closer or idx == _LONG else _FAIL
                if idx == _LONG or c != "-":
                    return _FAIL
            elif c != NAME[idx] and c != _NAME_UPPER[idx]:
                return _FAIL
            self._idx = idx + 1
            if self._idx == _LONG and not self._closer:
                self._crib = True  # crib's name alone: an opener whatever its attributes
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
