"""Fuse channel rankings into one list (strength-gated reciprocal rank fusion), then fit the budget.

Plain RRF (Cormack et al., 2009) scores ``Σ_c w_c / (k + rank_c(d))`` with ``k = 60``. On LoCoMo it
makes things *worse* than BM25 alone (R@10 54.0 vs 62.7, ``bench/locomo.py``): the vector channel's
tenth neighbour counts as much as BM25's tenth hit even when its cosine is barely above noise.

crib therefore gates each contribution by the hit's *strength* — the channel's own relevance
normalised to [0, 1] (BM25 relative to the query's best hit; cosine above the floor, scaled to
the headroom left) — keeping RRF's rank form and ``k = 60``. Two sums come out of one pass:

* the **order**::

      score(d) = Σ_c  r_c · w_c · strength_c(d) / (k + rank_c(d))

  A strong hit from one channel still counts fully; a weak neighbour barely counts. ``r_c`` is 1
  but for the channels :data:`RANKING_WEIGHTS` leaves out of the order (the facts channel);
* the **evidence**: the same sum with every channel at its weight (``r_c = 1``) — the scale on
  which the per-entry cut (:mod:`crib_plugin.read.gate.evidence`) judges a hit's share of the
  best one. The order can change without moving that cut: what reaches the agent is judged on
  the evidence it was tuned on (docs/benchmarks.md, "Every set beside plain BM25").

Hits a channel's floor rejected take no part.
"""

from __future__ import annotations

from dataclasses import dataclass, field

from ..core.records import ChannelHit, ChannelResult

RRF_K = 60
RANKING_WEIGHTS: dict[str, float] = {"facts": 0.0}
"""Channels whose hits take no part in the order (they still count as evidence). The facts channel's
strength is relative to the prompt's best fact, so its top entry weighed as much as full text's best
hit on every prompt, on one or two shared names. Left out of the order (``crib eval``, raw R@5 / R@10,
dev and test): RealMem 10.2 / 18.0 → 12.8 / 20.4 and 17.3 / 22.7 → 20.7 / 23.0 (one user a split),
LoCoMo 70.6 / 78.4 → 71.1 / 78.5 and 66.2 / 74.7 → 66.9 / 75.1, the coding set and MADial-Bench
unchanged; nothing that reaches the agent lost. Its facts still reach the block and open the gate,
and the entries it found still count as evidence."""

DEFAULT_MAX_ITEMS = 10
"""At most this many memories in one block."""
DEFAULT_MAX_FACTS = 10
"""At most this many facts in one block."""
DEFAULT_WEIGHTS: dict[str, float] = {}  # a channel's weight is its own ``weight`` attribute (default 1.0)


@dataclass
class Fused:
    """An entry id with its fused score (the order), its evidence (the plain strength-gated sum the
    per-entry cut judges on) and the channel hits that produced it."""

    entry_id: int
    score: float
    channels: dict[str, ChannelHit] = field(default_factory=dict)
    evidence: float = 0.0


def fuse(
    results: list[ChannelResult],
    *,
    k: int = RRF_K,
    weights: dict[str, float] | None = None,
) -> list[Fused]:
    """Strength-gated reciprocal rank fusion of every channel's floor-passing hits, best first
    (by :attr:`Fused.score`; :attr:`Fused.evidence` beside it, see the module docstring).

    Ties break on the best single-channel rank, then on the newer entry (larger id).
    """
    weights = {**DEFAULT_WEIGHTS, **(weights or {})}
    fused: dict[int, Fused] = {}
    for result in results:
        if not result.ran:
            continue
        weight = weights.get(result.channel, 1.0)
        rank = 0
        for hit in result.hits:
            if not hit.passed_floor:
                continue
            rank += 1
            item = fused.setdefault(hit.entry_id, Fused(hit.entry_id, 0.0))
            strength = max(0.0, min(1.0, hit.strength))
            item.score += RANKING_WEIGHTS.get(result.channel, 1.0) * weight * strength / (k + rank)
            item.evidence += weight * strength / (k + rank)
            item.channels[result.channel] = hit
    return sorted(
        fused.values(),
        key=lambda f: (-f.score, min(h.rank for h in f.channels.values()), -f.entry_id),
    )


def item_cost(text: str) -> int:
    """Characters an entry takes in the rendered block (content plus its ``- [date type] `` prefix)."""
    return len(text) + 28


def fit_budget(
    contents: list[str],
    budget: int,
    *,
    overhead: int = 200,
    max_items: int | None = None,
) -> tuple[list[int], list[int]]:
    """Indices of ``contents`` (best first) that fit in ``budget`` characters, and those dropped.

    Greedy in rank order: an item that does not fit is skipped and smaller ones further down may
    still fit, so a single huge entry cannot starve the block.
    """
    kept: list[int] = []
    dropped: list[int] = []
    used = overhead
    for index, text in enumerate(contents):
        cost = item_cost(text)
        if (max_items is not None and len(kept) >= max_items) or used + cost > budget:
            dropped.append(index)
            continue
        kept.append(index)
        used += cost
    return kept, dropped
