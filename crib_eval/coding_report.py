"""The coding set's report: per-kind and per-channel tables for the terminal, and the JSON dump.

Split from :mod:`crib_eval.coding`, which re-exports it.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from .coding_data import (
    KINDS,
    SPLITS,
    CodingSet,
)
from .coding_metrics import (
    CHARS_PER_TOKEN,
    Outcome,
    Summary,
    hit,
    precision,
    recall,
    stale_alone,
    summarise,
)
from .paired import LEAD_TITLE, lead_lines


@dataclass
class CodingReport:
    """Every prompt's outcome, and the tables built from them."""

    data: CodingSet
    outcomes: list[Outcome]
    split: str = "all"
    seconds: float = 0.0

    def summary(self, *, kind: str | None = None, split: str | None = None) -> Summary:
        chosen = [
            o for o in self.outcomes
            if (kind is None or o.prompt.kind == kind) and (split is None or o.prompt.split == split)
        ]
        return summarise(chosen, self.data.current_of())

    def table(self, *, offenders: int = 0) -> str:
        """Markdown: per kind and overall (per split when both ran), per channel, then offenders."""
        f = lambda v, d=1: "–" if v is None else f"{v:.{d}f}"
        lines = [
            (f"Coding-agent evaluation: {len(self.data.memories)} memories, {len(self.outcomes)} prompts "
            f"(split: {self.split}), now = {self.data.now}, {self.seconds:.0f}s"),
            "",
            ("| kind | n | hit % | hit ∪ pointers % | recall % | precision % | silence % | silence (nothing) % | stale alone "
            "| injected (mean / when any) | pointers | tokens | search hit@1 | hit@5 | latency ms mean / p90 |"),
            "|---|---|---|---|---|---|---|---|---|---|---|---|---|---|---|",
        ]
        present = [k for k in KINDS if any(o.prompt.kind == k for o in self.outcomes)]
        rows: list[tuple[str, Summary]] = [(k, self.summary(kind=k)) for k in present]
        splits = sorted({o.prompt.split for o in self.outcomes})
        if len(splits) > 1:
            rows += [(f"**{s}**", self.summary(split=s)) for s in splits]
        rows.append(("**all**", self.summary()))
        for name, s in rows:
            lines.append(
                f"| {name} | {s.n} | {f(s.hit)} | {f(s.hit_pointers)} | {f(s.recall)} | {f(s.precision)} | {f(s.silence)} "
                f"| {f(s.silence_all)} | {s.stale_alone} | {s.mean_injected:.1f} / {f(s.mean_injected_when_any)} "
                f"| {s.mean_pointers:.1f} | {s.tokens_mean:.0f} | {f(s.search_hit1)} | {f(s.search_hit5)} "
                f"| {s.latency_mean_ms:.0f} / {s.latency_p90_ms:.0f} |"
            )
        total = self.summary()
        lines += [
            "",
            ("hit: a relevant memory among the full entries; hit ∪ pointers: among the entries or the one-line "
             "pointers; precision: of the full entries; silence: no entry; silence (nothing): no entry, pointer or "
             f"fact; tokens: the rendered block's characters / {CHARS_PER_TOKEN}, 0 when silent."),
            (f"Silence on no-answer prompts: {f(total.silence)}% (on-domain {f(total.silence_on)}%, "
            f"off-domain {f(total.silence_off)}%); nothing at all: {f(total.silence_all)}%."),
            (f"Facts in the block: {total.facts_mean:.2f} per prompt, {total.facts_relevant_mean:.2f} of them bearing on "
            "a relevant memory."),
            self.session_line(),
            "",
            "| search ranking (answerable prompts) | hit@1 % | hit@5 % |",
            "|---|---|---|",
            f"| fused | {f(total.search_hit1)} | {f(total.search_hit5)} |",
        ]
        for name, (h1, h5) in total.channel_hits.items():
            lines.append(f"| {name} alone | {f(h1)} | {f(h5)} |")
        lines += ["", *self.recall_lines()]
        if offenders:
            lines += ["", *self.offender_lines(offenders)]
        return "\n".join(lines)

    def recall_lines(self) -> list[str]:
        """Recall@5 and @10 of each raw ranking over the answerable prompts: the harness's plain BM25
        (``bm25``, no crib code), each channel alone, and the fusion."""
        answerable = [o for o in self.outcomes if o.prompt.relevant]
        names = ["bm25", *sorted(n for n in {n for o in answerable for n in o.ranked} if n not in ("bm25", "fused")), "fused"]
        lines = ["| raw ranking (answerable prompts) | R@5 % | R@10 % |", "|---|---|---|"]
        label = {"bm25": "plain BM25 (harness, no crib code)", "fused": "fused (raw ranking)"}
        scores: dict[str, dict[str, list[float]]] = {}
        for name in names:
            if not any(name in o.ranked for o in answerable):
                continue
            scores[name] = {f"R@{k}": [recall(o.prompt.relevant, o.ranked.get(name, [])[:k]) for o in answerable] for k in (5, 10)}
            r5, r10 = scores[name]["R@5"], scores[name]["R@10"]
            lines.append(f"| {label.get(name, name + ' alone')} | {100 * sum(r5) / max(1, len(r5)):.1f} | {100 * sum(r10) / max(1, len(r10)):.1f} |")
        fused = scores.pop("fused", None)
        if fused and scores and answerable:
            lines += ["", *lead_lines(LEAD_TITLE, fused, {label.get(n, n + " alone"): s for n, s in scores.items()})]
        return lines

    def session_line(self) -> str:
        """Not one of the issue's metrics: how often a relevant memory is in a Claude Code session's
        context at all — injected for the prompt, or among the standing memories SessionStart
        re-injects (the newest preferences, decisions and corrections)."""
        answerable = [o for o in self.outcomes if o.prompt.relevant]
        prefs = [o for o in answerable if o.prompt.kind == "preference"]

        def share(group: list[Outcome]) -> str:
            covered = sum(hit(o.prompt.relevant, o.injected) or o.in_session for o in group)
            return f"{100 * covered / len(group):.1f}%" if group else "–"

        return (f"In a Claude Code session's context (the prompt's block or SessionStart's standing memories): "
                f"{share(answerable)} of answerable prompts, {share(prefs)} of preference prompts.")

    def badness(self, o: Outcome) -> tuple[int, int]:
        """Sort key of the worst prompts: a miss (or a broken silence) first, then noise entries."""
        good = set(o.prompt.relevant) | set(o.prompt.acceptable)
        noise = sum(k not in good for k in o.injected)
        miss = int(o.prompt.answerable and not hit(o.prompt.relevant, o.injected))
        stale = int(bool(stale_alone(o.injected, self.data.current_of(), o.marked)))
        return (miss + stale + int(not o.prompt.answerable and bool(o.injected)), noise)

    def offender_lines(self, count: int) -> list[str]:
        """The ``count`` worst prompts, each with what it needed and what was injected."""
        worst = sorted(self.outcomes, key=self.badness, reverse=True)
        worst = [o for o in worst if self.badness(o) != (0, 0)][:count]
        by_key = self.data.by_key()
        lines = [f"Worst {len(worst)} prompts:"]
        for o in worst:
            good = set(o.prompt.relevant) | set(o.prompt.acceptable)
            lines.append(
                f"- [{o.prompt.id} {o.prompt.kind}/{o.prompt.split}] {o.prompt.prompt!r} — relevant "
                f"{list(o.prompt.relevant) or 'none'}; injected {len(o.injected)}"
            )
            for key in o.injected:
                mark = "+" if key in o.prompt.relevant else ("~" if key in good else "-")
                text = " ".join(by_key[key].content.split()) if key in by_key else ""
                lines.append(f"    {mark} {key}: {text[:110]}")
            for fact in o.facts:
                lines.append(f"    fact: {fact}")
        return lines

    def to_json(self) -> dict[str, Any]:
        return {
            "now": self.data.now,
            "split": self.split,
            "summary": self.summary().to_json(),
            "by_kind": {k: self.summary(kind=k).to_json() for k in KINDS if any(o.prompt.kind == k for o in self.outcomes)},
            "by_split": {s: self.summary(split=s).to_json() for s in SPLITS if any(o.prompt.split == s for o in self.outcomes)},
            "prompts": [
                {
                    "id": o.prompt.id, "prompt": o.prompt.prompt, "kind": o.prompt.kind, "split": o.prompt.split,
                    "relevant": list(o.prompt.relevant), "acceptable": list(o.prompt.acceptable),
                    "injected": o.injected, "pointers": o.pointers, "tokens": o.tokens, "facts": o.facts, "facts_relevant": o.facts_relevant,
                    "ranked": o.ranked, "ms": round(o.seconds * 1000, 1),
                    "hit": hit(o.prompt.relevant, o.injected),
                    "precision": precision(o.prompt.relevant, o.prompt.acceptable, o.injected),
                    "stale_alone": stale_alone(o.injected, self.data.current_of(), o.marked),
                    "marked_superseded": o.marked,
                    "in_session": o.in_session,
                }
                for o in self.outcomes
            ],
        }
