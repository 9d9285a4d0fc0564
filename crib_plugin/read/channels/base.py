"""What a channel is: a name and a ``search`` that ranks entries for a prepared query.

Channels fail in different places (seed 000): facts miss vocabulary absent from entity names,
full text misses synonyms, vectors cannot say "nothing matches" without a floor. Each channel
therefore applies its own floor and says, in its :class:`ChannelResult`, whether it ran at all.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any, Protocol, runtime_checkable

from ...core.records import ChannelHit, ChannelResult, Entry, Query

if TYPE_CHECKING:  # pragma: no cover
    from ...plugins.contracts import MemoryLike  # the protocol: channels never import the facade


@runtime_checkable
class Channel(Protocol):
    """A retrieval channel. ``name`` is what ``CRIB_CHANNEL`` selects and what hits report."""

    name: str

    def search(self, memory: "MemoryLike", query: Query, limit: int) -> ChannelResult:
        """Rank up to ``limit`` entries for ``query``; must not raise for ordinary misses."""
        ...


#: How the relevance gate reads a channel's result (a channel's optional ``gate`` attribute):
#: ``similarity`` — its top score against the store's calibrated gate (crib's vector channel);
#: ``coverage`` — the share of the prompt's terms its top hits contain (crib's full text);
#: ``match`` — any hit that passed the channel's own floor opens the gate (facts, and the
#: default for a channel without the attribute). Other optional attributes the pipeline asks
#: for: ``weight`` (its fusion weight, default 1.0), ``needs_embedding`` (run last, and the
#: prefetch worker is kept only when a selected channel has it).
GATE_ROLES = ("similarity", "coverage", "match")


def channel_attr(memory: "MemoryLike", name: str, attr: str, default: Any) -> Any:
    """What a registered channel declares about itself (``default`` if not, or if unknown)."""
    channel = memory.registry.channels.get(name)
    return getattr(channel, attr, default) if channel is not None else default


class IndexingChannel(Channel, Protocol):
    """A channel that also indexes on write: ``index`` is called for every entry crib stores.

    It runs inside the transaction that inserts the entry (as a savepoint of its own), so the
    channel's rows and the entry are committed together. ``memory.store`` is open; a plugin
    channel may create and fill its own tables there. A failing ``index`` is rolled back alone and
    noted in the write's report; the entry is still stored.
    """

    def index(self, memory: "MemoryLike", entry: Entry) -> None: ...


def ranked(channel: str, scored: list[tuple[int, float]]) -> list[ChannelHit]:
    """Turn ``(entry_id, score)`` pairs, best first, into ranked hits without duplicate ids."""
    hits: list[ChannelHit] = []
    seen: set[int] = set()
    for entry_id, score in scored:
        if entry_id in seen:
            continue
        seen.add(entry_id)
        hits.append(ChannelHit(entry_id=entry_id, rank=len(hits) + 1, score=score, channel=channel))
    return hits
