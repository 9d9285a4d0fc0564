"""Per-prompt outcomes of the coding set and their summary: hit, recall, precision, staleness, percentiles.

Split from :mod:`crib_eval.coding`, which re-exports these names.
"""

from __future__ import annotations

import math
import statistics
from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Any

from .coding_data import (
    CodingPrompt,
)


@dataclass
class Outcome:
    """What crib did for one prompt: injected keys (in block order), facts, the raw rankings, timing."""

    prompt: CodingPrompt
    injected: list[str] = field(default_factory=list)
    contents: list[str] = field(default_factory=list)
    facts: list[str] = field(default_factory=list)
    facts_relevant: int = 0
    marked: list[str] = field(default_factory=list)  # injected entries the block marks as superseded
    ranked: dict[str, list[str]] = field(default_factory=dict)  # "fused" and each channel → keys, best first
    seconds: float = 0.0
    in_session: bool = False  # a relevant memory is among the standing ones SessionStart re-injects
    pointers: list[str] = field(default_factory=list)  # keys given as one-line pointers below the entries
    block_chars: int = 0  # the rendered block's length ("" → 0)

    @property
    def silent(self) -> bool:
        """Nothing at all in the block: no entry, no pointer, no fact."""
        return not self.injected and not self.pointers and self.block_chars == 0

    @property
    def tokens(self) -> float:
        """The block's size in tokens, counted as characters / :data:`CHARS_PER_TOKEN`."""
        return self.block_chars / CHARS_PER_TOKEN


CHARS_PER_TOKEN = 4
"""How block tokens are counted in the evaluations: characters / 4 (the usual estimate for English
text with BPE tokenizers), the same for every prompt and run, with no tokenizer to load."""


def hit(relevant: Sequence[str], injected: Sequence[str]) -> bool:
    """At least one relevant memory injected."""
    return bool(set(relevant) & set(injected))


def recall(relevant: Sequence[str], injected: Sequence[str]) -> float:
    """Share of the relevant memories injected (0 when there are none)."""
    return len(set(relevant) & set(injected)) / len(set(relevant)) if relevant else 0.0


def precision(relevant: Sequence[str], acceptable: Sequence[str], injected: Sequence[str]) -> float | None:
    """Share of injected memories that are relevant or acceptable; ``None`` when nothing was injected."""
    if not injected:
        return None
    good = set(relevant) | set(acceptable)
    return sum(key in good for key in injected) / len(injected)


def stale_alone(injected: Sequence[str], current_of: dict[str, str], marked: Sequence[str] = ()) -> list[str]:
    """Superseded memories injected without the current memory of their chain (a stale belief shown alone).

    An entry the block itself marks as superseded (``marked``: crib set ``superseded_by`` on it) is
    not alone: the reader is told it is no longer true.
    """
    shown, flagged = set(injected), set(marked)
    return [key for key in injected if key in current_of and current_of[key] not in shown and key not in flagged]


def hit_at(ranked: Sequence[str], relevant: Sequence[str], k: int) -> bool:
    return bool(set(ranked[:k]) & set(relevant))


def percentile(values: Sequence[float], q: float) -> float:
    """The ``q`` quantile (0..1) by nearest rank; 0 for no values."""
    if not values:
        return 0.0
    ordered = sorted(values)
    return ordered[min(len(ordered), max(1, math.ceil(q * len(ordered)))) - 1]


def _pct(values: Sequence[float | bool]) -> float | None:
    return 100.0 * sum(values) / len(values) if values else None


@dataclass
class Summary:
    """The metrics over one group of outcomes (a kind, a split, everything)."""

    n: int
    answerable: int
    hit: float | None
    recall: float | None
    precision: float | None
    silence: float | None
    silence_on: float | None
    silence_off: float | None
    stale_alone: int
    hit_pointers: float | None  # a relevant memory among the entries or the pointers
    silence_all: float | None  # no-answer prompts given nothing at all (no entry, no pointer, no fact)
    mean_pointers: float
    tokens_mean: float  # the block's size, characters / CHARS_PER_TOKEN
    mean_injected: float
    mean_injected_when_any: float | None
    search_hit1: float | None
    search_hit5: float | None
    channel_hits: dict[str, tuple[float | None, float | None]]
    latency_mean_ms: float
    latency_p90_ms: float
    facts_mean: float
    facts_relevant_mean: float

    def to_json(self) -> dict[str, Any]:
        data = dict(self.__dict__)
        data["channel_hits"] = {k: list(v) for k, v in self.channel_hits.items()}
        return data


def summarise(outcomes: Sequence[Outcome], current_of: dict[str, str]) -> Summary:
    """Hit rate, recall, precision, silence, stale-shown-alone, size, ranking and latency of a group."""
    answerable = [o for o in outcomes if o.prompt.answerable]
    silent = [o for o in outcomes if not o.prompt.answerable]
    shown = [o for o in outcomes if o.injected]
    precisions = [precision(o.prompt.relevant, o.prompt.acceptable, o.injected) for o in shown]
    ms = [o.seconds * 1000 for o in outcomes]
    channels = sorted({name for o in outcomes for name in o.ranked if name != "fused"})
    return Summary(
        n=len(outcomes),
        answerable=len(answerable),
        hit=_pct([hit(o.prompt.relevant, o.injected) for o in answerable]),
        recall=_pct([recall(o.prompt.relevant, o.injected) for o in answerable]),
        precision=_pct([p for p in precisions if p is not None]),
        silence=_pct([not o.injected for o in silent]),
        silence_on=_pct([not o.injected for o in silent if o.prompt.domain == "on"]),
        silence_off=_pct([not o.injected for o in silent if o.prompt.domain == "off"]),
        stale_alone=sum(bool(stale_alone(o.injected, current_of, o.marked)) for o in outcomes),
        hit_pointers=_pct([hit(o.prompt.relevant, [*o.injected, *o.pointers]) for o in answerable]),
        silence_all=_pct([o.silent for o in silent]),
        mean_pointers=statistics.fmean([len(o.pointers) for o in outcomes]) if outcomes else 0.0,
        tokens_mean=statistics.fmean([o.tokens for o in outcomes]) if outcomes else 0.0,
        mean_injected=statistics.fmean([len(o.injected) for o in outcomes]) if outcomes else 0.0,
        mean_injected_when_any=statistics.fmean([len(o.injected) for o in shown]) if shown else None,
        search_hit1=_pct([hit_at(o.ranked.get("fused", []), o.prompt.relevant, 1) for o in answerable]),
        search_hit5=_pct([hit_at(o.ranked.get("fused", []), o.prompt.relevant, 5) for o in answerable]),
        channel_hits={
            name: (
                _pct([hit_at(o.ranked.get(name, []), o.prompt.relevant, 1) for o in answerable]),
                _pct([hit_at(o.ranked.get(name, []), o.prompt.relevant, 5) for o in answerable]),
            )
            for name in channels
        },
        latency_mean_ms=statistics.fmean(ms) if ms else 0.0,
        latency_p90_ms=percentile(ms, 0.9),
        facts_mean=statistics.fmean([len(o.facts) for o in outcomes]) if outcomes else 0.0,
        facts_relevant_mean=statistics.fmean([o.facts_relevant for o in outcomes]) if outcomes else 0.0,
    )
