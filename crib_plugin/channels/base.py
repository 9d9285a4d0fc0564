"""What a channel is: a name and a ``search`` that ranks entries for a prepared query.

Channels fail in different places (seed 000): facts miss vocabulary absent from entity names,
full text misses synonyms, vectors cannot say "nothing matches" without a floor. Each channel
therefore applies its own floor and says, in its :class:`ChannelResult`, whether it ran at all.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Protocol, runtime_checkable

from ..records import ChannelHit, ChannelResult, Query

if TYPE_CHECKING:  # pragma: no cover
    from ..memory import Memory


@runtime_checkable
class Channel(Protocol):
    """A retrieval channel. ``name`` is what ``CRIB_CHANNEL`` selects and what hits report."""

    name: str

    def search(self, memory: "Memory", query: Query, limit: int) -> ChannelResult:
        """Rank up to ``limit`` entries for ``query``; must not raise for ordinary misses."""
        ...


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
