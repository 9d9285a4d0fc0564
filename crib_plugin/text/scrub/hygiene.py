"""Write hygiene: remove injected memory blocks from text an agent asks to store.

Runs the streaming :class:`~crib_plugin.text.scrub.stream.Scrubber` in "seams" mode, then collapses the
whitespace left on both sides of each removed block.
"""

from __future__ import annotations

from typing import Any

from .stream import WS, Scrubber


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
                    kept = last.rstrip(WS)
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
        body = piece.lstrip(WS)
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
