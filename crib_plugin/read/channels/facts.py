"""The facts channel: current fact triples about the entities a prompt names (``CRIB_CHANNEL=triples``).

Where the seed matched entity names with ``LIKE '%kw%'``, this channel looks the prompt's stemmed
words up in an index of entity-name words (exact, and by prefix for longer words), scores entities
by how much of their name matched and how rare the matched words are, follows every current
relation one hop from them, and adds a bonus for prompt words naming the predicate
(:func:`crib_plugin.store.facts.match_facts`).

It returns two things: the scored current facts (``ChannelResult.facts``, rendered under
``## Known facts`` with their ``valid_from`` date and source entries), and the entries that stated
those facts as ranked hits, so the channel takes part in reciprocal rank fusion like the others.
Its floor: a prompt that names no known entity or predicate gets an empty result, and the entries
behind *weak* facts (one name matched while the prompt asks more) are reported as hits below the
floor — the facts stay as context, the entries stay out of fusion.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from ...core.records import ChannelHit, ChannelResult, Query
from ...plugins.hookspecs import hookimpl
from .base import ranked

if TYPE_CHECKING:  # pragma: no cover
    from ...plugins.contracts import MemoryLike  # the protocol: channels never import the facade


class FactsChannel:
    """Entity-name lookup → one hop over current relations → facts plus their source entries."""

    name = "facts"
    gate = "match"  # any floor-passing hit opens the relevance gate (a fact matched on two counts)

    def search(self, memory: "MemoryLike", query: Query, limit: int) -> ChannelResult:
        # deferred: store.facts and read.query load apsw and the text rules (12 % of `import numpy` beside the
        # SessionStart hook's modules); the channel registers before `crib retrieve` forks, and this runs after
        from ...store.facts import match_facts  # here, not at import: registration must stay cheap
        from ..query import terms

        keywords = list(query.keywords) or [t.text for t in terms(query.text)]
        if not keywords:
            return ChannelResult(channel=self.name, note="no content words in the prompt")
        found = match_facts(memory.store, keywords, limit)
        hits = ranked(self.name, found.entries)[:limit]
        best = max((h.score for h in hits), default=0.0)
        for hit in hits:
            # relevance relative to this prompt's best fact, for strength-gated fusion
            hit.strength = hit.score / best if best > 0 else 0.0
        for entry_id, score in found.weak_entries[: max(0, limit - len(hits))]:
            # sources of facts that matched only one name: context, not evidence — below the floor
            hits.append(ChannelHit(entry_id, len(hits) + 1, score, self.name, passed_floor=False))
        result = ChannelResult(
            channel=self.name,
            facts=found.facts,
            hits=hits,
            dropped_by_floor=sum(1 for h in hits if not h.passed_floor),
        )
        if not found.facts:
            result.note = "no known entity or predicate named"
        return result


@hookimpl(trylast=True)
def register_channels(register):  # type: ignore[no-untyped-def]
    register(FactsChannel())
