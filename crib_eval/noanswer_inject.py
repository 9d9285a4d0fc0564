"""Open an evaluation store and record what one retrieval would inject (and through which channels).

Split from :mod:`crib_eval.noanswer` (which re-exports these names); the coding set
(:mod:`.coding`) uses the same helpers.
"""

from __future__ import annotations

from collections import Counter
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import Any, Sequence


def open_memory(db: Path, *, create: bool = False) -> Any:
    """A ``Memory`` on ``db`` with the environment's settings (so ``CRIB_CHANNEL`` ablations work)."""
    from crib_plugin.core.config import load_settings
    from crib_plugin.memory import Memory

    return Memory(db, settings=replace(load_settings(), db=db), create=create)


@dataclass
class Injection:
    """One trial's outcome: what ``retrieve`` injected for a prompt on one store ("" → nothing)."""

    store: str
    prompt: str
    block_chars: int = 0
    entry_ids: list[int] = field(default_factory=list)
    hit_channels: list[list[str]] = field(default_factory=list)  # per kept hit, the channels that found it
    contents: list[str] = field(default_factory=list)
    facts: list[str] = field(default_factory=list)
    fts_matched: bool | None = None  # the word/trigram index returned something before floors; None: fts did not run
    pointer_ids: list[int] = field(default_factory=list)  # entries given as one-line pointers (crib_plugin.read.pointers)

    @property
    def injected(self) -> bool:
        return self.block_chars > 0

    def channel_counts(self) -> Counter[str]:
        """Kept hits per channel (a hit two channels found counts for both), plus ``triples``: fact rows rendered,
        and ``pointers``: one-line pointers (:mod:`crib_plugin.read.pointers`)."""
        counts: Counter[str] = Counter()
        for names in self.hit_channels:
            counts.update(names)
        if self.facts:
            counts["triples"] += len(self.facts)
        if self.pointer_ids:
            counts["pointers"] += len(self.pointer_ids)
        return counts

    def to_json(self) -> dict[str, Any]:
        return {
            "store": self.store,
            "prompt": self.prompt,
            "chars": self.block_chars,
            "hits": [
                {"id": i, "channels": c, "content": t}
                for i, c, t in zip(self.entry_ids, self.hit_channels, self.contents)
            ],
            "facts": self.facts,
        }


def inject(memory: Any, prompt: str, store: str, *, channels: Sequence[str] | None = None) -> Injection:
    """Run ``memory.retrieve(prompt)`` and describe what it injected, hit by hit, channel by channel.

    ``retrieve`` leaves the selected retrieval on ``memory.last_retrieval``; if a future version
    stops doing so, the same ``recall`` → ``select`` is re-run to attribute the hits.
    """
    block = memory.retrieve(prompt, channels=channels)
    retrieval = getattr(memory, "last_retrieval", None)
    if retrieval is None:
        retrieval = memory.select(memory.recall(prompt, channels=channels))
    result = Injection(store=store, prompt=prompt, block_chars=len(block))
    for channel in retrieval.channels:
        if channel.channel == "fts" and channel.ran:
            result.fts_matched = bool(channel.hits)
    if not block:
        return result
    for hit in retrieval.hits:
        result.entry_ids.append(hit.entry.id)
        result.hit_channels.append(sorted(hit.channels))
        result.contents.append(hit.entry.content)
    for fact in retrieval.facts:
        result.facts.append(f"{fact.subject} → {fact.predicate} → {fact.object}")
    result.pointer_ids = [h.entry.id for h in retrieval.pointers]
    return result
