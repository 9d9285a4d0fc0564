"""Full-text queries whose cost does not grow with the store: the words too common to matter left out.

BM25 ranks every entry that matches any OR-ed word, so on a 10⁶ store a query holding "release" or
"time" ranks hundreds of thousands of entries (≈ 1.5 s on a loaded 2-core machine,
``bench/scale.py``). A word held by that many entries says little about which one is meant. Two
users: the write path's supersession search (a new entry's whole text, above 2,000 entries a word)
and the full-text channel on big stores (above :data:`BIG_STORE` entries, a word held by more than
:data:`RETRIEVAL_SHARE` of them). Below those sizes nothing is left out, so a small store ranks as
it always did.
"""

from __future__ import annotations

from typing import Any

RAREST_KEPT = 3
"""Should every word be too common, the rarest few are kept: a query never becomes empty."""
BIG_STORE = 50_000
"""Entries above which the full-text channel leaves common words out."""
RETRIEVAL_SHARE = 0.01
"""...a word held by more than this share of the entries (10,000 at 10⁶)."""


def uncommon_expression(store: Any, text: str, max_docs: int) -> str:
    """The FTS expression of ``text`` without the words more than ``max_docs`` entries hold
    (all of them kept below that size, so a small store ranks as before).

    Why: a new entry's whole text is OR-ed into one query, and BM25 ranks every entry matching any
    word — on a 10⁶ store, hundreds of thousands for "should" or "config". Words that common say
    nothing about which entry is the predecessor; without them the cost is bounded by
    ``terms × max_docs`` postings whatever the store's size. Should every word be that common,
    the :data:`RAREST_KEPT` rarest are kept."""
    from .terms import terms
    from .words import stems

    found = terms(text)
    if not found or store.count_entries() <= max_docs:
        return " OR ".join(t.fts() for t in found)
    rated: list[tuple[int, int]] = []
    for position, term in enumerate(found):
        forms = [stem for _word, stem in stems(term.text)]
        docs = max((store.term_document_frequency(s) for s in forms), default=0) if not term.phrase else 0
        rated.append((docs, position))
    kept = [p for docs, p in rated if docs <= max_docs] or [p for _d, p in sorted(rated)[:RAREST_KEPT]]
    return " OR ".join(found[p].fts() for p in sorted(kept))



def retrieval_expression(store: Any, text: str, expression: str) -> str:
    """The full-text channel's expression: ``expression`` as it is on a store of up to
    :data:`BIG_STORE` entries, else without the words more than :data:`RETRIEVAL_SHARE` of them hold."""
    entries = store.count_entries()
    if entries <= BIG_STORE or not expression:
        return expression
    return uncommon_expression(store, text, int(entries * RETRIEVAL_SHARE)) or expression
