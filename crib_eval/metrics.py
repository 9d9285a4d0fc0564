"""Ranking metrics for one query (recall@k, hit@k, nDCG@k, MRR) and their averages."""

from __future__ import annotations

import math
from dataclasses import dataclass, field
from typing import Iterable, Sequence


def recall_at(ranked: Sequence[str], relevant: set[str], k: int) -> float:
    """Fraction of the relevant items found in the top ``k`` (LoCoMo's "recall accuracy")."""
    if not relevant:
        return 0.0
    return len(relevant.intersection(ranked[:k])) / len(relevant)


def hit_at(ranked: Sequence[str], relevant: set[str], k: int) -> float:
    """1 when any relevant item is in the top ``k``."""
    return 1.0 if relevant.intersection(ranked[:k]) else 0.0


def ndcg_at(ranked: Sequence[str], relevant: set[str], k: int) -> float:
    """Binary-relevance nDCG@k."""
    dcg = sum(1.0 / math.log2(i + 2) for i, item in enumerate(ranked[:k]) if item in relevant)
    ideal = sum(1.0 / math.log2(i + 2) for i in range(min(len(relevant), k)))
    return dcg / ideal if ideal else 0.0


def reciprocal_rank(ranked: Sequence[str], relevant: set[str]) -> float:
    for i, item in enumerate(ranked):
        if item in relevant:
            return 1.0 / (i + 1)
    return 0.0


KS = (5, 10, 25)


@dataclass
class Scores:
    """Running averages of every metric for one system (a channel, fused, injected …)."""

    n: int = 0
    sums: dict[str, float] = field(default_factory=dict)

    def add(self, ranked: Sequence[str], relevant: set[str]) -> None:
        self.n += 1
        values = {f"R@{k}": recall_at(ranked, relevant, k) for k in KS}
        values.update({f"hit@{k}": hit_at(ranked, relevant, k) for k in KS})
        values["nDCG@10"] = ndcg_at(ranked, relevant, 10)
        values["MRR"] = reciprocal_rank(ranked, relevant)
        for key, value in values.items():
            self.sums[key] = self.sums.get(key, 0.0) + value

    def mean(self, key: str) -> float:
        return 100.0 * self.sums.get(key, 0.0) / self.n if self.n else 0.0

    def row(self, keys: Iterable[str]) -> list[float]:
        return [self.mean(k) for k in keys]
