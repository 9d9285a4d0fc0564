"""The full-text channel: FTS5 BM25 over porter-stemmed words, trigram and LIKE for CJK.

English (and any space-separated script) goes to the porter/unicode61 index ranked by BM25.
CJK runs of three or more characters go to the trigram index as substrings; one- and
two-character CJK terms, which trigrams cannot match, go to an indexed LIKE fallback.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from ..hookspecs import hookimpl
from ..query import trigram_expression
from ..records import ChannelResult, Query
from .base import ranked

if TYPE_CHECKING:  # pragma: no cover
    from ..memory import Memory


class FullTextChannel:
    """BM25 over the word index, plus substring search for CJK prompts."""

    name = "fts"

    def search(self, memory: "Memory", query: Query, limit: int) -> ChannelResult:
        store = memory.store
        scored: list[tuple[int, float]] = []
        if query.cjk:
            long_runs = trigram_expression(query.cjk_terms)
            if long_runs:
                scored.extend(store.trigram_search(long_runs, limit))
            short = [r for r in query.cjk_terms if len(r) < 3]
            if short:
                scored.extend(store.like_search(short, limit))
        if query.fts_expression:
            scored.extend(store.fts_search(query.fts_expression, limit))
        hits = ranked(self.name, scored)[:limit]
        best = max((h.score for h in hits), default=0.0)
        for hit in hits:
            hit.strength = hit.score / best if best > 0 else 0.0
        return ChannelResult(channel=self.name, hits=hits)


@hookimpl(trylast=True)
def register_channels(register):  # type: ignore[no-untyped-def]
    register(FullTextChannel())
