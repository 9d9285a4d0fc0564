"""Ranking metrics for one query (recall@k, hit@k, nDCG@k, MRR), kept per query and averaged."""

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
    """Every metric of one system (a channel, fused, injected …), per query in order, and their means."""

    values: dict[str, list[float]] = field(default_factory=dict)

    @property
    def n(self) -> int:
        return len(next(iter(self.values.values()), []))

    def add(self, ranked: Sequence[str], relevant: set[str]) -> None:
        values = {f"R@{k}": recall_at(ranked, relevant, k) for k in KS}
        values.update({f"hit@{k}": hit_at(ranked, relevant, k) for k in KS})
        values["nDCG@10"] = ndcg_at(ranked, relevant, 10)
        values["MRR"] = reciprocal_rank(ranked, relevant)
        for key, value in values.items():
            self.values.setdefault(key, []).append(value)

    def mean(self, key: str) -> float:
        found = self.values.get(key, [])
        return 100.0 * sum(found) / len(found) if found else 0.0

    def row(self, keys: Iterable[str]) -> list[float]:
        return [self.mean(k) for k in keys]
