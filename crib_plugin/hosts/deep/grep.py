"""The grep gate of deep recall: which of the question's terms an entry's own text confirms.

Seed 001's point, kept here: a candidate found by metadata or by a loose neighbour often holds
none of what was asked, and every such candidate a reader model opens is a wasted call. So before
any model reads an entry, its text is searched for the terms (the question's and the expansion's);
an entry that confirms none of them is *gated out* and never reaches a model.

Terms are compared by SQLite's porter stem (:func:`crib_plugin.text.words.stems`, the full-text index's
own notion of "the same word"), so "deploying" confirms "deployment"'s stem "deploi"; a term of
several words (``"release checklist"``) is confirmed when its words appear as a run. The recall cue
an agent wrote with a memory (``when``) counts as the entry's text here: it is the agent's own
statement of what the memory is about (:mod:`crib_plugin.core.cues`).
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Sequence

from ...text.words import STOP_WORDS, stems

CONTEXT_CHARS = 60
"""Characters shown each side of a confirmed term by :func:`grep` (never the whole entry)."""
MAX_MATCHES = 3
"""Excerpts :func:`grep` returns per entry at most."""


@dataclass(frozen=True)
class Term:
    """A search term as typed (``text``) and as the index compares it (its stems, in order)."""

    text: str
    stems: tuple[str, ...]
    weight: float = 1.0  # how much confirming it counts (an expansion term counts less than the question's)
    source: str = "question"  # "question", "cooccur", "neighbour", "model", "gap"

    @classmethod
    def of(cls, text: str, *, weight: float = 1.0, source: str = "question") -> "Term | None":
        """The term of ``text``; ``None`` when nothing but stop words remains."""
        words = [(w, s) for w, s in stems(text) if w not in STOP_WORDS]
        if not words:
            return None
        return cls(" ".join(w for w, _ in words), tuple(s for _, s in words), weight, source)


@dataclass(frozen=True)
class Match:
    """One confirmed term in an entry, with a short excerpt around it."""

    term: str
    excerpt: str


def _positions(text: str) -> tuple[list[str], list[int]]:
    """The stems of ``text`` in order, and where each word starts (character offsets, approximate)."""
    pairs = stems(text)
    lowered = text.casefold()
    offsets: list[int] = []
    at = 0
    for word, _stem in pairs:
        found = lowered.find(word, at)
        offsets.append(found if found >= 0 else at)
        at = found + len(word) if found >= 0 else at
    return [s for _, s in pairs], offsets


def same_word(a: str, b: str) -> bool:
    """Two stems of one word: equal, or agreeing but for the stemmer's last letter or two
    (porter gives "deploi" for "deploying" and "deploy" for "deployment"); five letters at least."""
    if a == b:
        return True
    shared = 0
    for x, y in zip(a, b):
        if x != y:
            break
        shared += 1
    return shared >= 5 and shared >= min(len(a), len(b)) - 1


def _find(sequence: Sequence[str], wanted: Sequence[str]) -> int:
    """Index where ``wanted`` occurs as a run in ``sequence``; -1 when it does not."""
    n = len(wanted)
    for i in range(len(sequence) - n + 1):
        if all(same_word(sequence[i + k], wanted[k]) for k in range(n)):
            return i
    return -1


def confirmed(text: str, terms: Sequence[Term]) -> list[Term]:
    """The terms ``text`` confirms (each once, in the order given)."""
    seq, _ = _positions(text)
    return [term for term in terms if _find(seq, term.stems) >= 0]


def grep(text: str, terms: Sequence[Term], *, context: int = CONTEXT_CHARS, limit: int = MAX_MATCHES) -> list[Match]:
    """Short excerpts of ``text`` around each confirmed term (at most ``limit``), never the whole text."""
    seq, offsets = _positions(text)
    out: list[Match] = []
    for term in terms:
        index = _find(seq, term.stems)
        if index < 0:
            continue
        start = offsets[index]
        low, high = max(0, start - context), min(len(text), start + len(term.text) + context)
        excerpt = " ".join(text[low:high].split())
        out.append(Match(term.text, ("…" if low else "") + excerpt + ("…" if high < len(text) else "")))
        if len(out) >= limit:
            break
    return out


def gate_score(found: Sequence[Term]) -> float:
    """How strongly an entry's confirmed terms bear on the question: the sum of their weights."""
    return sum(t.weight for t in found)


__all__ = ["Term", "Match", "confirmed", "grep", "gate_score", "CONTEXT_CHARS", "MAX_MATCHES"]
