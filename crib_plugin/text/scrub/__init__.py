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
Only the tags crib's own templates render (``output/templates/memory.md.j2``, ``memory_context.md.j2``)
are cut; every other ``<…>`` -- generics (``Vec<Memory>``), includes (``#include <memory>``), HTML,
a ``<memory>`` mentioned in prose -- is text.  With ``NAME`` = ``memory`` or ``memory-context``
(ASCII letters, any case) and ``WS`` = space, tab, CR, LF, FF, VT:

* **opener** ``memory``: ``"<memory" (WS+ ATTR '="' VALUE '"')+ WS* ">"`` where every ``ATTR`` is
  one of crib's (:data:`CRIB_ATTRIBUTES`: ``context_time``, ``channels``, ``skipped``),
  ``context_time`` is among them (crib always writes it) and ``VALUE`` holds no ``"`` or ``<`` (it
  may hold ``>``).  So ``<memory context_time="2026-11-22T10:00:00Z" channels="fts">`` opens a block
  and ``<memory>``, ``<Memory>``, ``<memory id="1">``, ``<memory context_time=x>`` do not: "memory"
  is a common word in code (``#include <memory>``, ``Vec<Memory>``).
* **opener** ``memory-context``: ``"<memory-context" (WS+ ATTR '="' VALUE '"')* WS* ">"`` with any
  attribute names (letters, digits, ``_``, ``-``, ``:``) or none: the name is crib's alone, and a
  model that echoes a block often drops its attributes (``<memory-context>secret</memory-context>``
  is cut).
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
  cut off after ``context_time=`` (``<memory context_time="2026-11``) or after the name
  ``memory-context`` (``<memory-context``): cut-off crib markup, dropped.
"""

from __future__ import annotations

from .hygiene import strip_memory_blocks
from .neutralise import neutralise_tags
from .stream import CRIB_ATTRIBUTES, MAX_TAG_LENGTH, NEUTRAL_LT, Scrubber, scrub_stream, scrub_text

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
