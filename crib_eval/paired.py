"""Paired bootstrap intervals: is the fused ranking's lead over a channel more than the questions' noise?

Every set of the suite is scored on one sample of questions, and a sample of a hundred questions
moves by a point for each one that changes. On RealMem, one user a split (122 questions) ranked
the vector channel above the fusion at R@10 (23.2 against 20.4); all five users (659 questions)
did not (18.6 against 18.8). So beside each raw ranking's recall the reports print the fusion's
difference from every other ranking with its interval.

The interval is the percentile bootstrap of the mean *per-question* difference (the two systems
scored on the same questions, resampled together: Efron & Tibshirani 1993, ch. 13; Sakai 2006
for its use in retrieval). Questions of one conversation are not independent, so the interval is
a floor on the uncertainty, not a ceiling: a difference whose interval holds 0 is not a finding.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

import numpy as np

RESAMPLES = 2000
LEVEL = 0.95
SEED = 0  # a fixed seed: the same scores print the same interval on every run
CHUNK = 200  # resamples drawn at a time (bounds memory on a set of thousands of questions)


@dataclass(frozen=True)
class Difference:
    """The mean difference of two systems' per-question scores, in points, and its interval."""

    mean: float
    low: float
    high: float

    @property
    def clear(self) -> bool:
        """Whether the interval leaves out 0: one system leads beyond the questions' noise."""
        return self.low > 0 or self.high < 0

    def text(self) -> str:
        """``+1.2 [-0.4, +2.9]``, the interval in brackets."""
        return f"{_points(self.mean)} [{_points(self.low)}, {_points(self.high)}]"


def _points(value: float) -> str:
    """``value`` signed to one decimal, a rounded zero as ``+0.0`` (not ``-0.0``)."""
    return f"{round(value, 1) + 0.0:+.1f}"


def paired_difference(
    first: Sequence[float], second: Sequence[float], *, resamples: int = RESAMPLES, level: float = LEVEL, seed: int = SEED,
) -> Difference:
    """``first − second`` over the same questions (each score in [0, 1]; the result in points).

    Raises ``ValueError`` when the two are not scored on the same number of questions: a paired
    interval of unpaired samples would be wrong without saying so.
    """
    if len(first) != len(second):
        raise ValueError(f"paired scores differ in length: {len(first)} against {len(second)}")
    diffs = 100.0 * (np.asarray(first, dtype=float) - np.asarray(second, dtype=float))
    if diffs.size == 0:
        return Difference(0.0, 0.0, 0.0)
    rng = np.random.default_rng(seed)
    means = np.concatenate([
        diffs[rng.integers(0, diffs.size, size=(min(CHUNK, resamples - start), diffs.size))].mean(axis=1)
        for start in range(0, resamples, CHUNK)
    ])
    tail = 100.0 * (1.0 - level) / 2.0
    low, high = np.percentile(means, [tail, 100.0 - tail])
    return Difference(float(diffs.mean()), float(low), float(high))


def lead_lines(title: str, fused: dict[str, Sequence[float]], others: dict[str, dict[str, Sequence[float]]]) -> list[str]:
    """A table of the fusion's lead over each other ranking, one column per metric.

    ``fused``: metric → per-question scores of the fused ranking; ``others``: ranking name → the
    same for it. A lead whose interval leaves out 0 is marked in bold.
    """
    metrics = list(fused)
    lines = [f"| {title} | " + " | ".join(metrics) + " |", "|---" * (len(metrics) + 1) + "|"]
    for name, scores in others.items():
        cells = []
        for metric in metrics:
            lead = paired_difference(fused[metric], scores[metric])
            cells.append(f"**{lead.text()}**" if lead.clear else lead.text())
        lines.append(f"| {name} | " + " | ".join(cells) + " |")
    return lines


LEAD_TITLE = f"fused minus each ranking, points ({int(100 * LEVEL)} % paired bootstrap over questions; bold: beyond noise)"
