"""A pointer's one line of text: a memory cut to its first words, and what a pointer costs.

Shared by a prompt's pointer tier (:mod:`crib_plugin.read.pointers`), the renderer, SessionStart's
index of standing memories and deep recall's manifest. Kept here, apart from the tier's choice of
candidates, so that rendering or listing pointers does not import the read path (the SessionStart
hook would pay about 20 ms for it).
"""

from __future__ import annotations

from collections.abc import Callable

__all__ = ["SNIPPET_CHARS", "POINTER_OVERHEAD", "HEADING_CHARS", "ENTRY_CHARS", "snippet", "pointer_cost", "entry_shown", "entry_chars"]

SNIPPET_CHARS = 40
"""The first characters of a memory a pointer shows (cut back to a word boundary): enough to judge
whether to read it, cheap enough that eight fit beside the entries (48 gave coding dev blocks of
259 tokens with eight slots, 40 gives 246; docs/benchmarks.md, seventh pass)."""
POINTER_OVERHEAD = 36
"""Characters a pointer takes besides its snippet (``- #123 [2026-11-20 decision global] ``)."""
HEADING_CHARS = 60
"""Characters of the pointer tier's heading, counted once against the budget."""


def snippet(text: str, limit: int | None = None, finish: Callable[[str], str] = str) -> str:
    """``text`` on one line, cut to at most ``limit`` characters at a word boundary (``…`` when cut).

    A single word longer than ``limit`` is cut inside it rather than dropped. ``finish`` is applied
    to the cut text before the ``…`` (the renderer neutralises memory tags there, so a tag cut in
    half at the very end is caught as such)."""
    limit = SNIPPET_CHARS if limit is None else limit  # read per call: bench/pointer_bar.py sweeps it
    flat = " ".join(text.split())
    if len(flat) <= limit:
        return finish(flat)
    cut = flat[: limit + 1]
    space = cut.rfind(" ")
    head = cut[:space] if space > 0 else flat[:limit]
    return finish(head.rstrip(" ,;:.-")) + "…"


def pointer_cost(text: str, limit: int | None = None) -> int:
    """Characters one pointer takes in the rendered block (its snippet cut to ``limit``)."""
    return len(snippet(text, limit)) + POINTER_OVERHEAD


ENTRY_CHARS = 600
"""An entry longer than this is shown in a block as its first characters (cut back to a word
boundary) and a note that says how much is left and how to read it (``crib show ID``): a long
memory — a whole assistant message of a chat history — reaches the agent as a start and a pointer
to the rest, not as a fifth of the budget. Above every memory of the coding set (longest 329
characters), LoCoMo (444) and MADial-Bench (272); RealMem's assistant turns run to 18,000
(median 428): docs/benchmarks.md, RealMem."""
TRIM_NOTE = " … [{more} more characters: `crib show {id}`]"
"""What follows a cut entry."""
TRIM_NOTE_CHARS = 50
"""The most a :data:`TRIM_NOTE` takes (what the budget counts for it)."""


def entry_shown(text: str, entry_id: int, limit: int | None = None) -> str:
    """``text`` as a block shows it: whole up to ``limit`` (:data:`ENTRY_CHARS`), else cut at the
    last whitespace before it (inside a word only when there is none) with :data:`TRIM_NOTE`."""
    limit = ENTRY_CHARS if limit is None else limit
    if len(text) <= limit:
        return text
    cut = text[: limit + 1]
    space = max(cut.rfind(" "), cut.rfind("\n"))
    head = (cut[:space] if space > limit // 2 else text[:limit]).rstrip()
    return head + TRIM_NOTE.format(more=f"{len(text) - len(head):,}", id=entry_id)


def entry_chars(text: str, limit: int | None = None) -> int:
    """Characters ``text`` takes once shown (:func:`entry_shown`), at most: what the budget counts."""
    limit = ENTRY_CHARS if limit is None else limit
    return len(text) if len(text) <= limit else limit + TRIM_NOTE_CHARS
