"""Stored text inside a block keeps to its own item: no line of it reads as a line of the template.

A block is a template's lines (``## Known facts``, ``[Note from crib: …]``, ``- [2026-11-20
decision] …``, ``- #12 […]``) with each memory's text after its item marker. A memory holding a line
break followed by one of those would put a forged heading, note or item on a line of its own. Every
kind of line break a reader may honour (CR, CRLF, VT, FF, NEL, U+2028, U+2029, the information
separators) becomes ``\\n``, and a continuation line that starts like a template line is escaped
with a backslash (Markdown's escape: read as text, never as the heading or item it imitates).
"""

from __future__ import annotations

import re

_BREAKS = re.compile("\r\n|[\r\n\x0b\x0c\x1c\x1d\x1e\x85\u2028\u2029]")
# A continuation line the template could own: a heading, a bracketed note or tag, an item that
# opens like an entry or a pointer ("- [", "- #", "* [", "+ ["), a quote or fence marker.
_TEMPLATE_LIKE = re.compile(r"^([ \t]*)(?=#|\[|[-*+][ \t]+[\[#]|>|</?memory)", re.IGNORECASE | re.MULTILINE)


def contain_lines(text: str) -> str:
    """``text`` with every line break as ``\\n`` and each continuation line that starts like a line
    of the template escaped (``\\## Known facts``); a text of one line is returned unchanged."""
    if not _BREAKS.search(text):
        return text
    first, _, rest = _BREAKS.sub("\n", text).partition("\n")
    return first + "\n" + _TEMPLATE_LIKE.sub(r"\1\\", rest)


def one_line(text: str) -> str:
    """``text`` with every kind of line break as a space: for values that are one line in a block
    (a fact's subject, predicate and object)."""
    return _BREAKS.sub(" ", text) if _BREAKS.search(text) else text
