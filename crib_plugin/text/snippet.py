"""A pointer's one line of text: a memory cut to its first words, and what a pointer costs.

Shared by a prompt's pointer tier (:mod:`crib_plugin.read.pointers`), the renderer, SessionStart's
index of standing memories and deep recall's manifest. Kept here, apart from the tier's choice of
candidates, so that rendering or listing pointers does not import the read path (the SessionStart
hook would pay about 20 ms for it).
"""

from __future__ import annotations

from collections.abc import Callable

__all__ = ["SNIPPET_CHARS", "POINTER_OVERHEAD", "HEADING_CHARS", "snippet", "pointer_cost"]

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
