"""Query expansion for deep recall, offline: words that co-occur with the question's in the store.

A question that needs many memories ("how did our deployment set-up change?") shares few words with
most of them: one says "moved the runners to Fargate", another "helm chart for staging". What ties
them together is what sits *beside* the question's words in the memories that match it. So the
expansion reads the best matches of the ordinary retrieval — those that confirm a question term,
and the question's nearest vector neighbours — and keeps the words found in two or more of them
that are rare in the store as a whole (document frequency in the top set × inverse document
frequency in the store). With a model, :mod:`crib_plugin.hosts.deep.ollama` asks it for terms instead
and they are added to these.

Expansion terms weigh less than the question's own (:data:`EXPANSION_WEIGHT`) at the grep gate.
"""

from __future__ import annotations

import math
from collections import Counter
from typing import TYPE_CHECKING, Iterable, Sequence

from ...read.query import terms as query_terms
from ...text.words import STOP_WORDS, split_words, stems
from .grep import Term, confirmed, same_word

if TYPE_CHECKING:  # pragma: no cover
    from ...core.records import Entry
    from ...store.base import Store

EXPANSION_WEIGHT = 0.5
"""What one expansion term counts at the grep gate, against 1.0 for a term of the question."""
MAX_EXPANSION = 8
"""Expansion terms kept per store at most."""
TOP_ENTRIES = 12
"""How many of the best matches the co-occurrence counts read."""
FRAMING_WORDS = frozenset({"every", "everything", "made", "tried", "change", "changed", "changes"})
"""Words that frame a survey question ("every decision we made…", "how did X change?", "everything
about…", "what have we tried for…") rather than name its subject; the stop words (how, did, all,
ever, we, our…) are the rest of that frame. They are rare in a store (coding set: "made" in 1 memory
of 243, "every" in 22), so rarity weighting made them strong terms, and a memory saying "never
SELECT *, every migration…" ranked for a deployment question. Measured need: dropping them moves
the survey prompts' evidence up (bench/deep_recall.py; docs/deep-recall.md)."""


def named_types(question: str, types: Iterable[str]) -> tuple[str, ...]:
    """The memory types ``question`` names by a word — the type's name or its plural ("decisions",
    "errors"): a preference for memories of that type, not a word to find in their text."""
    words = {w.casefold() for w in split_words(question)}
    return tuple(t for t in types if t in words or f"{t}s" in words)


def question_terms(question: str, types: Iterable[str] = ()) -> list[Term]:
    """The question's content words and quoted phrases as gate terms (stop words, :data:`FRAMING_WORDS`
    and words naming one of ``types`` dropped; no repeats)."""
    skip = FRAMING_WORDS | {w for t in types for w in (t, f"{t}s")}
    out: list[Term] = []
    seen: set[tuple[str, ...]] = set()
    for found in query_terms(question):
        term = Term.of(found.text)
        if term is not None and term.stems not in seen and len(term.text) > 1 and term.text.casefold() not in skip:
            seen.add(term.stems)
            out.append(term)
    return out


def _vocabulary(entry: "Entry") -> dict[str, str]:
    """stem → first surface word, for the entry's text (content words of 3+ letters).

    Not its recall cue: the store's document frequency that scores a word is the full-text index's,
    of the text alone, and cues share their own boilerplate ("adding", "changing", "configuring") that
    the text rarely holds — counted here, it would look rare and topical."""
    words: dict[str, str] = {}
    for word, stem in stems(entry.content):
        if word not in STOP_WORDS and len(word) >= 3 and word.isalpha():
            words.setdefault(stem, word)
    return words


def cooccurring(store: "Store", question: Sequence[Term], top: Sequence["Entry"], neighbours: Sequence["Entry"]) -> list[Term]:
    """Terms that co-occur with the question's in its best matches (see the module docstring).

    ``top`` are the ordinary retrieval's best hits (only those confirming a question term count);
    ``neighbours`` the question's nearest vectors (they count whatever their words).
    """
    readers = [e for e in top[:TOP_ENTRIES] if confirmed(f"{e.content} {e.metadata.get('when', '')}", question)]
    seen_ids = {e.id for e in readers}
    readers += [e for e in neighbours[:TOP_ENTRIES // 2] if e.id not in seen_ids]
    if len(readers) < 2:
        return []
    counts: Counter[str] = Counter()
    surface: dict[str, str] = {}
    for entry in readers:
        for stem, word in _vocabulary(entry).items():
            counts[stem] += 1
            surface.setdefault(stem, word)
    asked = [s for t in question for s in t.stems]
    total = max(1, store.count_entries())
    scored: list[tuple[float, str]] = []
    for stem, df_top in counts.items():
        if df_top < 2 or any(same_word(stem, a) for a in asked):
            continue
        df_store = store.term_document_frequency(stem)
        if df_store <= 0 or df_store > total / 2:  # unknown to the index, or in half the store: no signal
            continue
        scored.append((df_top * math.log(total / df_store), stem))
    scored.sort(key=lambda item: (-item[0], item[1]))
    return [Term(surface[stem], (stem,), EXPANSION_WEIGHT, "cooccur") for _score, stem in scored[:MAX_EXPANSION]]


def expansion_terms(texts: Sequence[str], source: str = "model") -> list[Term]:
    """Terms from words someone (a model, a gap the synthesis named) proposed, at the expansion weight."""
    out: list[Term] = []
    for text in texts:
        term = Term.of(str(text)[:80])
        if term is not None:
            out.append(Term(term.text, term.stems, EXPANSION_WEIGHT, source))
    return out


def merge_terms(*groups: Sequence[Term]) -> list[Term]:
    """All terms, the first of each stem sequence kept (so a question term wins over its expansion)."""
    out: list[Term] = []
    seen: set[tuple[str, ...]] = set()
    for group in groups:
        for term in group:
            if term.stems not in seen:
                seen.add(term.stems)
                out.append(term)
    return out


__all__ = ["EXPANSION_WEIGHT", "question_terms", "cooccurring", "expansion_terms", "merge_terms"]
