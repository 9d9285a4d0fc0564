"""Full-text queries whose cost does not grow with the store: the words too common to matter left out.

BM25 ranks every entry that matches any OR-ed word, so on a 10⁶ store a query holding "release" or
"time" ranks hundreds of thousands of entries (≈ 1.5 s on a loaded 2-core machine,
``bench/scale.py``). A word held by that many entries says little about which one is meant. Three
users: the write path's supersession search (a new entry's whole text, above 2,000 entries a word),
the full-text channel on big stores (above :data:`BIG_STORE` entries, a word held by more than
:data:`RETRIEVAL_SHARE` of them) and, on those stores, its search of the recall cues (the words
counted among the cues: :func:`cue_expression`). Below those sizes nothing is left out, so a small
store ranks as it always did.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from .terms import terms
from .words import stems

Counter = Callable[[str, int], int]
"""How many entries hold a word or phrase, counted up to a limit."""

RAREST_KEPT = 3
"""Should every word be too common, the rarest few are kept: a query never becomes empty."""
BIG_STORE = 50_000
"""Entries above which the full-text channel leaves common words out."""
RETRIEVAL_SHARE = 0.01
"""...a word held by more than this share of the entries (10,000 at 10⁶)."""


def uncommon_expression(store: Any, text: str, max_docs: int, *, count: Counter | None = None, keep_rarest: bool = True) -> str:
    """The FTS expression of ``text`` without the words (and phrases) more than ``max_docs`` entries hold
    (all of them kept below that size, so a small store ranks as before).

    Why: a new entry's whole text is OR-ed into one query, and BM25 ranks every entry matching any
    word — on a 10⁶ store, hundreds of thousands for "should" or "config". Words that common say
    nothing about which entry is the predecessor; without them the cost is bounded by
    ``terms × max_docs`` postings whatever the store's size. Should every word be that common,
    the :data:`RAREST_KEPT` rarest are kept (``keep_rarest``), else the expression is empty.

    ``count(text, limit)`` counts a word's or phrase's entries up to ``limit`` (the store's
    ``documents_up_to`` unless given: the recall cues' index passes its own)."""
    count = count or store.documents_up_to
    found = terms(text)
    if not found:
        return ""
    # Each word (or phrase: "test_index.py" of three common words costs as much to search as
    # they do) counted only up to max_docs + 1, however common it is; no count of the store
    # first: on a store of at most max_docs entries every term passes anyway.
    over = max_docs + 1

    def is_common(term: Any) -> bool:
        words = [count(word, over) >= over for word, _stem in stems(term.text)]
        if not term.phrase:
            return any(words)
        # a phrase is no commoner than its rarest word; only all-common words need the phrase counted
        return bool(words) and all(words) and count(term.text, over) >= over

    common = [is_common(term) for term in found]
    kept = [p for p, is_common in enumerate(common) if not is_common]
    if not kept and not keep_rarest:
        return ""
    if not kept:  # every word that common (rare): the exact counts pick the rarest few
        rated = [(0 if t.phrase else max((store.term_document_frequency(s) for _w, s in stems(t.text)), default=0), p)
                 for p, t in enumerate(found)]
        kept = [p for _d, p in sorted(rated)[:RAREST_KEPT]]
    return " OR ".join(found[p].fts() for p in sorted(kept))



def retrieval_expression(store: Any, text: str, expression: str) -> str:
    """The full-text channel's expression: ``expression`` as it is on a store of up to
    :data:`BIG_STORE` entries, else without the words more than :data:`RETRIEVAL_SHARE` of them hold."""
    entries = store.count_entries()
    if entries <= BIG_STORE or not expression:
        return expression
    return uncommon_expression(store, text, int(entries * RETRIEVAL_SHARE)) or expression


def cue_expression(store: Any, text: str, expression: str) -> str:
    """The recall-cue search's expression: ``expression`` on a store of up to :data:`BIG_STORE`
    entries, else without the words more than :data:`RETRIEVAL_SHARE` of the entries' *cues* hold
    — empty when every word is that common among them (the cue is a second source of words; its
    search is left out rather than made to rank every cue).

    Why its own count: the cues' words are not the memories' (``"when writing …"``, ``"code"``), so
    a word rare in what memories say can be in most cues; ranking them all made one cue search
    take 0.3–0.5 s at 10⁵ entries on PostgreSQL and 32 ms on SQLite, growing with the store.
    A store with no cue counter (a plugin's) gets ``expression``."""
    entries = store.count_entries()
    counter = getattr(store, "cue_documents_up_to", None)
    if entries <= BIG_STORE or not expression or counter is None:
        return expression
    return uncommon_expression(store, text, int(entries * RETRIEVAL_SHARE), count=counter, keep_rarest=False)
