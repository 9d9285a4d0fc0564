"""A long memory, shown as the passages that bear on the prompt.

A block has a budget, and one long memory (an assistant's whole reply, a pasted log, an imported
document) would spend most of it: on long task conversations a block averaged over 1,200 tokens,
three or four such turns in full. So a memory longer than :data:`LONG_CHARS` is shown as an
*excerpt*: its passages (lines, then sentences) that share words with the prompt, the most first,
shown in their own order within :data:`EXCERPT_CHARS`, with ``…`` where text was left out and a last line
saying how to read it all (the ``show`` tool or ``crib show ID``). A memory that shares no word
with the prompt (a vector match on meaning alone) is shown from its beginning.

Kept in the text layer, with no model and no store: the selected stage
(:func:`crib_plugin.read.selection.selected_stage`) calls it before it fits the block to its
budget, so what an excerpt costs is what it shows.
"""

from __future__ import annotations

import re
from collections.abc import Iterable
from dataclasses import dataclass

from .snippet import snippet
from .words import content_words

__all__ = ["EXCERPT_CHARS", "LONG_CHARS", "excerpt"]

LONG_CHARS = 500
"""A memory longer than this is shown as an excerpt. Every memory of the coding set (at most 329
characters), of LoCoMo (444) and of MADial-Bench (272) is shown whole; 558 of RealMem's 1,270 turns
in one store are longer. Chosen on RealMem's dev user with :data:`EXCERPT_CHARS`: mean block 1,270
tokens → 659, evidence shown 11.5 → 13.3 % (docs/benchmarks.md, "Long memories")."""
EXCERPT_CHARS = 250
"""The most characters of a long memory's own text an excerpt shows (its marks and last line aside)."""

_PASSAGE_END = re.compile(r"\n+|(?<=[.!?])\s+(?=[^\s])")


@dataclass(frozen=True)
class _Passage:
    index: int
    text: str
    shared: int  # how many of the prompt's distinct word stems it contains


def _passages(content: str, stems: set[str]) -> list[_Passage]:
    parts = [" ".join(p.split()) for p in _PASSAGE_END.split(content)]
    return [_Passage(i, p, len(stems & content_words(p).keys())) for i, p in enumerate(parts) if p]


def _chosen(passages: list[_Passage], limit: int) -> list[_Passage]:
    """The passages to show: those with prompt words, the most first (then the earliest), while they
    fit — or, when none has one, from the beginning; the first cut to fit when it alone does not.
    Returned in the memory's own order."""
    ranked = sorted((p for p in passages if p.shared), key=lambda p: (-p.shared, p.index))
    if not ranked:
        ranked = passages  # nothing in common: from the beginning
    chosen: list[_Passage] = []
    used = 0
    for passage in ranked:
        cost = len(passage.text) + 3
        if used + cost <= limit:
            chosen.append(passage)
            used += cost
        elif not chosen:
            chosen.append(_Passage(passage.index, snippet(passage.text, limit), passage.shared))
            break
    return sorted(chosen, key=lambda p: p.index)


def excerpt(content: str, prompt_words: Iterable[str], entry_id: int, *, limit: int = EXCERPT_CHARS) -> str | None:
    """``content`` cut to the passages that bear on the prompt, or ``None`` when it is short enough to show whole.

    ``prompt_words``: the prompt's words (the query's keywords); they are compared by stem. The
    excerpt ends with a line naming the memory, so the agent can read the rest."""
    if len(content) <= LONG_CHARS:
        return None
    stems = set(content_words(" ".join(prompt_words)))
    passages = _passages(content, stems)
    if not passages:
        return None
    chosen = _chosen(passages, limit)
    pieces: list[str] = []
    previous = -1
    for passage in chosen:
        if passage.index != previous + 1:
            pieces.append("…")
        pieces.append(passage.text)
        previous = passage.index
    if previous != passages[-1].index:
        pieces.append("…")
    return " ".join(pieces) + f"\n(excerpt of {len(content):,} characters; `show` tool / `crib show {entry_id}`)"
