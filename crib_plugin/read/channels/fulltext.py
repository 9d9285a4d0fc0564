"""The full-text channel: BM25 over words and over CJK grams, with boosts for exact terms.

Words (English and any space-separated script) go to the porter/unicode61 index, ranked by BM25.
CJK text goes to the gram index (:mod:`crib_plugin.store.cjk`): a one-character run as itself,
longer runs as their overlapping bigrams, OR-ed and ranked by BM25 — so two-character words
(缓存) are indexed lookups, not ``LIKE`` scans, and a paraphrased Chinese or Japanese question
still meets its memory on the bigrams they share. The prompt's plain words are looked up there
too, because a Latin word glued to CJK text ("使用SQLite作为") is not a token of the word index.
A prompt with both words and CJK searches both indexes; an entry's score is the sum of its two
BM25 scores, so one matching both parts outranks one matching either.

Exact terms are boosts: quoted phrases (a phrase MATCH in the word index), identifiers as written
(``valid_until``, ``System.out.println``, ``ERR_VAL_9021`` — a substring MATCH in the trigram
index, since the word index cannot tell ``valid_until`` from "valid until") and whole CJK runs of
three or more characters (trigram too). Each is one more indexed MATCH of those terms alone, run
only when the prompt has some, and lifts every entry holding them above every entry that only
shares loose words (:func:`boosted`).

An entry's recall cue (the writer's "when this matters", :mod:`crib_plugin.core.cues`) is a word
index of its own: a match there adds :data:`CUE_WEIGHT` of its BM25 score to the entry's, as the
thread context does inside the word index — a task phrased like the cue finds the memory by its
words too, not only by the cue's vector.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from ...core.records import ChannelResult, Query
from ...plugins.hookspecs import hookimpl
from .base import ranked

if TYPE_CHECKING:  # pragma: no cover
    from ...plugins.contracts import MemoryLike  # the protocol: channels never import the facade

Scored = list[tuple[int, float]]

CUE_WEIGHT = 0.5
"""How much a recall cue's BM25 score counts beside the entry's own (the thread context's weight
in the word index, ``CONTEXT_WEIGHT``): a cue names situations in general words. Measured on the
coding set's dev split (``crib eval --set coding --split dev``), raw R@5 / R@10 at 0 / 0.25 / 0.5 /
0.75 / 1.0: 73.8 / 85.3, 79.2 / 85.9, 80.8 / 88.2, 80.2 / 86.9, 81.4 / 87.6; hit ∪ pointers 90.4 at 0,
92.8 from 0.25 on; the commit subjects' silence the same at every weight. The other sets' stores
hold no cues."""


def with_cues(words: Scored, cues: Scored) -> Scored:
    """``words`` with :data:`CUE_WEIGHT` of each entry's cue score added, best first (an entry
    found by its cue alone enters with that share): :func:`combine` of the two."""
    return combine([words, [(entry_id, CUE_WEIGHT * score) for entry_id, score in cues]])


def boosted(loose: Scored, *exact: Scored) -> Scored:
    """Merge a loose ranking with the entries that hold an exact term, the latter on top.

    ``score(d) = loose(d) + [d holds an exact term] · top · (1 + Σ_i e_i(d) / best_i)``, where
    ``top`` is the best loose score and ``e_i`` the score of exact match ``i`` (a phrase in the word
    index, a literal in the trigram index — two scales, hence each relative to its best): any entry
    with an exact term beats any entry without one, and more or stronger exact matches rank higher.
    An exact hit beyond the loose top-``limit`` enters with a loose score of 0.
    """
    exact = tuple(e for e in exact if e)
    if not exact:
        return loose
    base = dict(loose)
    top = max(base.values(), default=0.0) or 1.0
    bonus: dict[int, float] = {}
    for matches in exact:
        best = max(score for _, score in matches) or 1.0
        for entry_id, score in matches:
            bonus[entry_id] = bonus.get(entry_id, top) + top * score / best
            base.setdefault(entry_id, 0.0)
    merged = [(entry_id, score + bonus.get(entry_id, 0.0)) for entry_id, score in base.items()]
    return sorted(merged, key=lambda pair: -pair[1])  # stable: ties keep the index's order


def combine(parts: list[Scored]) -> Scored:
    """Sum each entry's scores over the parts of a prompt (words, CJK), best first.

    One part is returned as it is, so an English prompt ranks exactly as the word index does.
    """
    parts = [p for p in parts if p]
    if len(parts) == 1:
        return parts[0]
    total: dict[int, float] = {}
    for part in parts:
        for entry_id, score in part:
            total[entry_id] = total.get(entry_id, 0.0) + score
    return sorted(total.items(), key=lambda pair: -pair[1])


class FullTextChannel:
    """BM25 over the word index and the CJK gram index, exact terms boosted."""

    name = "fts"
    gate = "coverage"  # the relevance gate measures how much of the prompt its top hits contain

    def search(self, memory: "MemoryLike", query: Query, limit: int) -> ChannelResult:
        # deferred: read.query (9 % of `import numpy` beside the SessionStart hook's modules) after the
        # prefetch fork: registering the channel, before it, must stay cheap
        from ..query import boost_expression, cjk_grams, gram_expression, literal_expression, terms, trigram_expression

        store = memory.store
        found = terms(query.text)
        parts: list[Scored] = []
        if query.fts_expression:
            # deferred: text.common_terms loads apsw (through text.words); this module is imported when the
            # channel registers, before `crib retrieve` forks its prefetch worker, and this runs after
            from ...text.common_terms import cue_expression, retrieval_expression  # a big store leaves its common words out

            expression = retrieval_expression(store, query.text, query.fts_expression)
            words = store.fts_search(expression, limit)
            if hasattr(store, "cue_search"):  # a plugin store may keep no cue index
                cues = cue_expression(store, query.text, query.fts_expression)
                words = with_cues(words, store.cue_search(cues, limit) if cues else [])[:limit]
            if words:
                phrases, literals = boost_expression(found), literal_expression(found)
                words = boosted(
                    words,
                    store.fts_search(phrases, limit) if phrases else [],
                    store.trigram_search(literals, limit) if literals else [],
                )
            parts.append(words)
        grams = cjk_grams(query.text) if query.cjk else []
        expression = gram_expression(grams, [t.text for t in found if not t.phrase])
        if expression:
            cjk = store.cjk_search(expression, limit)
            runs = trigram_expression(query.cjk_terms) if grams else ""
            if runs and cjk:
                cjk = boosted(cjk, store.trigram_search(runs, limit))
            parts.append(cjk)
        scored = combine(parts)
        hits = ranked(self.name, scored)[:limit]
        best = max((h.score for h in hits), default=0.0)
        for hit in hits:
            hit.strength = hit.score / best if best > 0 else 0.0
        return ChannelResult(channel=self.name, hits=hits)


@hookimpl(trylast=True)
def register_channels(register):  # type: ignore[no-untyped-def]
    register(FullTextChannel())
