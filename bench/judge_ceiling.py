"""How far a judge could take the coding set: the ceiling of the judge design, per pool depth.

A judge (``CRIB_JUDGE``, :mod:`crib_plugin.judging`) can only pick what it is shown: the offline
block and the best ``depth`` candidates from before the gate. This script registers, as a plugin judge, an *oracle*
that picks exactly the labelled relevant memories of each prompt from that pool, and runs the
coding-agent evaluation with it at several depths. The figures are upper bounds — what a perfect
model would reach — not what any real model does; a real model is measured with
``crib eval --set coding --judge-model <model>`` where Ollama answers.

``--errors`` adds rows for an imperfect oracle that misses a relevant candidate with probability
``miss`` and picks an irrelevant one with probability ``false`` (decided by a hash of prompt and
candidate, so a run is reproducible): how good a model must be for the block's targets.

    python bench/judge_ceiling.py [--set coding|locomo] [--depth 8 …] [--errors 0.1,0.02 …] [--cache DIR]
"""

from __future__ import annotations

import argparse
import hashlib
import os
import sys
from pathlib import Path
from typing import Any, Sequence

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from crib_eval import coding  # noqa: E402
from crib_plugin import hookimpl  # noqa: E402
from crib_plugin.models.base import Candidate  # noqa: E402
from crib_plugin.plugins.manager import get_plugin_manager  # noqa: E402


class OracleJudge:
    """Picks the candidates whose text is that of a memory labelled relevant to the prompt
    (``good``: prompt → the texts of its relevant memories), with the given error rates."""

    def __init__(self, good: dict[str, set[str]], depth: int, miss: float = 0.0, false: float = 0.0) -> None:
        self.depth, self.miss, self.false = depth, miss, false
        self._good = good

    def pick(self, prompt: str, candidates: Sequence[Candidate]) -> list[int]:
        good = self._good.get(prompt, set())
        picks = []
        for i, c in enumerate(candidates):
            relevant = c.content in good
            draw = _uniform(prompt, c.content)
            if (relevant and draw >= self.miss) or (not relevant and draw < self.false):
                picks.append(i)
        return picks


def coding_labels(data: Any) -> dict[str, set[str]]:
    """The coding set's prompts → the texts of their relevant memories."""
    text = {m.key: m.content for m in data.memories}
    return {p.prompt: {text[k] for k in p.relevant} for p in data.prompts}


def locomo_labels(conversations: Sequence[Any]) -> dict[str, set[str]]:
    """LoCoMo's questions → the texts of their evidence turns (a question asked of two
    conversations takes the evidence of both)."""
    good: dict[str, set[str]] = {}
    for conv in conversations:
        text = {t.dia_id: t.content for t in conv.turns}
        for q in conv.questions:
            good.setdefault(q.question, set()).update(text[d] for d in q.evidence if d in text)
    return good


def _uniform(*parts: str) -> float:
    """A number in [0, 1) fixed by ``parts`` (reproducible "randomness")."""
    digest = hashlib.sha256("\x00".join(parts).encode()).digest()
    return int.from_bytes(digest[:8], "big") / 2**64


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--set", dest="eval_set", choices=["coding", "locomo"], default="coding", help="which evaluation")
    parser.add_argument("--depth", type=int, action="append", help="candidates from before the gate (default 4, 8, 12)")
    parser.add_argument("--errors", action="append", default=[], help="MISS,FALSE: also an imperfect oracle at each depth")
    parser.add_argument("--cache", type=Path, default=Path(".state/eval"), help="where the stores are built and reused")
    parser.add_argument("--data", type=Path, default=None, help="the coding set's folder or locomo10.json (default: the usual)")
    args = parser.parse_args(argv)
    current: dict[str, OracleJudge] = {}

    class Plugin:
        @hookimpl
        def register_judges(self, register: Any) -> None:
            register("oracle", lambda: current["judge"])

    get_plugin_manager().register(Plugin(), name="bench-oracle-judge")
    os.environ["CRIB_JUDGE"] = "oracle"
    depths = args.depth or [4, 8, 12]
    errors = [(0.0, 0.0), *(tuple(map(float, e.split(","))) for e in args.errors)]
    runs = [(d, miss, false) for d in depths for miss, false in errors]
    if args.eval_set == "locomo":
        _locomo(args, runs, current)
    else:
        _coding(args, runs, current)
    return 0


def _coding(args: argparse.Namespace, runs: list[tuple[int, float, float]], current: dict[str, OracleJudge]) -> None:
    data = coding.load(args.data or coding.DATA_DIR)
    good = coding_labels(data)
    print("| candidates from before the gate | misses | false picks | hit % (dev / test / all) | precision % | silence % (on-domain) | mean entries |")
    print("|---|---|---|---|---|---|---|")
    for depth, miss, false in runs:
        current["judge"] = OracleJudge(good, depth, miss, false)
        report = coding.run(split="all", cache_dir=args.cache, data_dir=args.data)
        dev, test, every = (report.summary(split=s) for s in ("dev", "test", None))
        print(f"| {depth} | {miss:.0%} | {false:.0%} | {dev.hit:.1f} / {test.hit:.1f} / {every.hit:.1f} | "
              f"{_pct(every.precision)} | {_pct(every.silence)} ({_pct(every.silence_on)}) | {every.mean_injected:.1f} |")


def _locomo(args: argparse.Namespace, runs: list[tuple[int, float, float]], current: dict[str, OracleJudge]) -> None:
    from crib_eval import locomo

    path = args.data or locomo.default_data_path()
    conversations = locomo.load(path)
    good = locomo_labels(conversations)
    stores = locomo.prepare_stores(conversations, path, args.cache)
    print("| candidates from before the gate | misses | false picks | block evidence recall % | mean entries | injected % |")
    print("|---|---|---|---|---|---|")
    for depth, miss, false in runs:
        current["judge"] = OracleJudge(good, depth, miss, false)
        report = locomo.evaluate(conversations, stores)
        rows = report.blocks["per-entry cut"]  # the judged block (the gate-only row is never judged)
        sizes = [n for _, n in rows]
        print(f"| {depth} | {miss:.0%} | {false:.0%} | {100 * sum(r for r, _ in rows) / len(rows):.1f} | "
              f"{sum(sizes) / len(sizes):.2f} | {100 * sum(1 for n in sizes if n) / len(sizes):.1f} |")


def _pct(value: float | None) -> str:
    return "–" if value is None else f"{value:.1f}"


if __name__ == "__main__":
    raise SystemExit(main())
