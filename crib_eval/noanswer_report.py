"""Reports of the no-answer and coding-query runs: rates, per-kind tables for the terminal, JSON.

Split from :mod:`crib_eval.noanswer` (which runs the sets and re-exports these names).
"""

from __future__ import annotations

from collections import Counter
from dataclasses import dataclass, field
from typing import Any

from .noanswer_inject import (
    Injection,
)
from .noanswer_records import TARGETS, CodingQuery, NoAnswerPrompt


def _clip(text: str, width: int) -> str:
    text = " ".join(text.split()).replace("|", "\\|")
    return text if len(text) <= width else text[: width - 1] + "…"


@dataclass
class NoAnswerReport:
    """Every trial of the no-answer set, with fractions overall, per store kind and per label."""

    prompts: list[NoAnswerPrompt] = field(default_factory=list)
    trials: list[tuple[NoAnswerPrompt, str, Injection]] = field(default_factory=list)  # (prompt, store kind, result)
    stores: dict[str, int] = field(default_factory=dict)  # store kind → number of stores
    channels: list[str] | None = None
    seconds: float = 0.0

    def add(self, prompt: NoAnswerPrompt, kind: str, result: Injection) -> None:
        self.trials.append((prompt, kind, result))

    def fraction(self, *, kind: str | None = None) -> float:
        """Share of trials (optionally on one store kind) that injected nothing, in percent."""
        chosen = [r for _, k, r in self.trials if kind is None or k == kind]
        return 100.0 * sum(not r.injected for r in chosen) / len(chosen) if chosen else 0.0

    def clean_prompts(self, target: str | None = None) -> tuple[int, int]:
        """(prompts that injected nothing in every store they ran on, prompts) — per label or overall."""
        dirty: set[str] = set()
        ran: set[str] = set()
        for prompt, _, result in self.trials:
            if target is not None and prompt.target != target:
                continue
            ran.add(prompt.prompt)
            if result.injected:
                dirty.add(prompt.prompt)
        return len(ran) - len(dirty), len(ran)

    @property
    def offenders(self) -> list[tuple[NoAnswerPrompt, str, Injection]]:
        return [t for t in self.trials if t[2].injected]

    def offender_channels(self) -> Counter[str]:
        """In how many offending trials each channel put at least one item in the block."""
        counts: Counter[str] = Counter()
        for _, _, result in self.offenders:
            counts.update(set(result.channel_counts()))
        return counts

    def vocabulary_share(self, kind: str | None = None) -> str:
        """Percent of trials whose prompt shares an indexed word with the store (the FTS index matched
        something before floors), or ``n/a`` when the fts channel did not run."""
        chosen = [r.fts_matched for _, k, r in self.trials if (kind is None or k == kind) and r.fts_matched is not None]
        return f"{100.0 * sum(chosen) / len(chosen):.0f}%" if chosen else "n/a"

    def table(self, *, offenders: int = 30) -> str:
        """Markdown: fractions by store kind and by label, then the worst offenders."""
        title = "No-answer set: share of trials where `retrieve` injects nothing"
        if self.channels:
            title += f" (channels: {', '.join(self.channels)})"
        lines = [f"{title} ({len(self.prompts)} prompts, {len(self.trials)} trials, {self.seconds:.0f}s)", ""]
        lines.append("| stores | prompts | trials | inject nothing | % | share vocabulary with store |")
        lines.append("|---|---|---|---|---|---|")
        for kind in self.stores:
            chosen = [(p, r) for p, k, r in self.trials if k == kind]
            label = f"{kind} ({self.stores[kind]} store{'s' if self.stores[kind] != 1 else ''})"
            clean = sum(not r.injected for _, r in chosen)
            lines.append(
                f"| {label} | {len({p.prompt for p, _ in chosen})} | {len(chosen)} | {clean} | "
                f"{self.fraction(kind=kind):.1f} | {self.vocabulary_share(kind)} |"
            )
        total_clean = sum(not r.injected for _, _, r in self.trials)
        lines.append(
            f"| **all trials** | {len(self.prompts)} | {len(self.trials)} | {total_clean} | "
            f"**{self.fraction():.1f}** | {self.vocabulary_share()} |"
        )
        lines.append("")
        lines.append("| label (`target`) | prompts | clean in every store | % |")
        lines.append("|---|---|---|---|")
        for target in TARGETS:
            clean, ran = self.clean_prompts(target)
            if ran:
                lines.append(f"| {target} | {ran} | {clean} | {100.0 * clean / ran:.1f} |")
        clean, ran = self.clean_prompts()
        if ran:
            lines.append(f"| **all** | {ran} | {clean} | **{100.0 * clean / ran:.1f}** |")
        bad = self.offenders
        if bad:
            by_channel = ", ".join(f"{name} {n}" for name, n in self.offender_channels().most_common())
            lines += ["", f"Offending trials: {len(bad)}; channels present in them: {by_channel}."]
            per_prompt = Counter(p.prompt for p, _, _ in bad)
            lines += ["", f"Offenders (worst {min(offenders, len(per_prompt))} prompts of {len(per_prompt)}):", ""]
            lines.append("| prompt | stores injected | channels (items) | first item injected |")
            lines.append("|---|---|---|---|")
            for prompt, count in per_prompt.most_common(offenders):
                results = [r for p, _, r in bad if p.prompt == prompt]
                channels: Counter[str] = Counter()
                for r in results:
                    channels.update(r.channel_counts())
                chan = ", ".join(f"{n} {c}" for n, c in sorted(channels.items()))
                first = results[0]
                sample = first.contents[0] if first.contents else (first.facts[0] if first.facts else "")
                lines.append(f"| {_clip(prompt, 60)} | {count} | {chan} | {first.store}: {_clip(sample, 90)} |")
        return "\n".join(lines)

    def to_json(self) -> dict[str, Any]:
        return {
            "fraction": round(self.fraction(), 2),
            "by_store": {kind: round(self.fraction(kind=kind), 2) for kind in self.stores},
            "offenders": [{"target": p.target, "why": p.why, **r.to_json()} for p, _, r in self.offenders],
        }


@dataclass
class QueryOutcome:
    """One coding query: which expected entries were injected, and at which position."""

    query: CodingQuery
    found: list[int]  # expected indices that were injected
    first_position: int | None  # 1-based position of the first expected entry in the block
    injected_items: int

    @property
    def hit(self) -> bool:
        return bool(self.found)

    @property
    def recall(self) -> float:
        return len(self.found) / len(self.query.expected)


@dataclass
class CodingReport:
    """Hit rate of the expected entries among what ``retrieve`` injects for the coding queries."""

    outcomes: list[QueryOutcome] = field(default_factory=list)
    channels: list[str] | None = None
    seconds: float = 0.0

    def hit_rate(self, kind: str | None = None) -> float:
        chosen = [o for o in self.outcomes if kind is None or o.query.kind == kind]
        return 100.0 * sum(o.hit for o in chosen) / len(chosen) if chosen else 0.0

    def recall(self) -> float:
        return 100.0 * sum(o.recall for o in self.outcomes) / len(self.outcomes) if self.outcomes else 0.0

    def table(self) -> str:
        title = "Coding-memory queries: expected entry among what `retrieve` injects"
        if self.channels:
            title += f" (channels: {', '.join(self.channels)})"
        lines = [f"{title} ({len(self.outcomes)} queries, {self.seconds:.1f}s)", ""]
        lines.append("| queries | n | hit (any expected injected) % | top-1 % | mean items injected |")
        lines.append("|---|---|---|---|---|")
        kinds = sorted({o.query.kind for o in self.outcomes})
        for kind in [*kinds, None]:
            chosen = [o for o in self.outcomes if kind is None or o.query.kind == kind]
            if not chosen:
                continue
            top1 = 100.0 * sum(o.first_position == 1 for o in chosen) / len(chosen)
            items = sum(o.injected_items for o in chosen) / len(chosen)
            name = kind or "**all**"
            lines.append(f"| {name} | {len(chosen)} | {self.hit_rate(kind):.1f} | {top1:.1f} | {items:.1f} |")
        lines.append("")
        lines.append(f"Recall of expected entries (multi-entry queries count partially): {self.recall():.1f}%.")
        misses = [o for o in self.outcomes if not o.hit]
        if misses:
            lines += ["", "Missed:", ""]
            for o in misses:
                lines.append(f"- `{o.query.prompt}` ({o.query.kind}; expected {list(o.query.expected)}; {o.injected_items} items injected)")
        return "\n".join(lines)
