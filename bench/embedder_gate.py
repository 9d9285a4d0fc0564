"""Where does an embedder's relevance gate belong? Cosine distributions of relevant vs unrelated.

For one embedder (``--embedder minilm|e5``) this embeds, outside any store:

* the coding-agent memory (``crib eval --set coding``'s data) as documents and its prompts as
  queries: per answerable prompt, the cosine of its best *relevant* memory and of its top
  neighbour; per no-answer prompt, its top neighbour (the gate must stay under the first and
  above the second);
* optionally (``--locomo N``) the turns of the first N LoCoMo conversations, the questions about
  them (best evidence turn) and the no-answer set's LoCoMo prompts (top neighbour).

It prints percentiles of each distribution and, for ``--gate G``, the share of answerable
prompts whose relevant memory reaches G and of no-answer prompts that stay below it. MiniLM's
shipped gate (0.42) was derived from the same two distributions; running both embedders side by
side shows which e5 value sits at the same place in its own, narrower band.

    PYTHONPATH=$PWD python bench/embedder_gate.py --embedder e5 --locomo 1 --gate 0.86
"""

from __future__ import annotations

import argparse
import json
import sys
import time
from pathlib import Path
from typing import Any

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from crib_eval import coding, locomo
from crib_eval.noanswer import NOANSWER_FILE
from crib_plugin.plugins.manager import registry

QUANTILES = (5, 10, 25, 50, 75, 90, 95)


def _pcts(values: list[float]) -> str:
    if not values:
        return "-"
    return " ".join(f"p{q}={np.percentile(values, q):.3f}" for q in QUANTILES)


def _embed(embedder: Any, texts: list[str]) -> np.ndarray:
    parts = [embedder.embed_documents(texts[i:i + 32]) for i in range(0, len(texts), 32)]
    return np.concatenate(parts)


def _queries(embedder: Any, texts: list[str]) -> np.ndarray:
    return np.stack([embedder.embed_query(t) for t in texts])


def coding_distributions(embedder: Any) -> dict[str, list[float]]:
    """Relevant-memory and top cosines of the coding set's prompts (dev and test)."""
    data = coding.load()
    keys = [m.key for m in data.memories]
    docs = _embed(embedder, [m.content for m in data.memories])
    prompts = data.prompts
    sims = _queries(embedder, [p.prompt for p in prompts]) @ docs.T
    out: dict[str, list[float]] = {"relevant": [], "answerable_top": [], "noanswer_top": []}
    for p, row in zip(prompts, sims):
        if p.relevant:
            out["relevant"].append(float(max(row[keys.index(k)] for k in p.relevant)))
            out["answerable_top"].append(float(row.max()))
        else:
            out["noanswer_top"].append(float(row.max()))
    return out


def locomo_distributions(embedder: Any, conversations: int) -> dict[str, list[float]]:
    """Best-evidence cosine of LoCoMo questions, top cosine of the no-answer set's prompts."""
    convs = locomo.load()[:conversations]
    noanswer = [json.loads(line) for line in NOANSWER_FILE.read_text(encoding="utf-8").splitlines() if line.strip()]
    unrelated = [r["prompt"] for r in noanswer if r.get("target") in ("locomo", "both")]
    out: dict[str, list[float]] = {"relevant": [], "answerable_top": [], "noanswer_top": []}
    for conv in convs:
        ids = [t.dia_id for t in conv.turns]
        docs = _embed(embedder, [t.content for t in conv.turns])
        questions = [q for q in conv.questions if q.evidence]
        sims = _queries(embedder, [q.question for q in questions]) @ docs.T
        for q, row in zip(questions, sims):
            got = [row[ids.index(e)] for e in q.evidence if e in ids]
            if got:
                out["relevant"].append(float(max(got)))
                out["answerable_top"].append(float(row.max()))
        off = _queries(embedder, unrelated) @ docs.T
        out["noanswer_top"].extend(float(v) for v in off.max(axis=1))
    return out


def report(name: str, dist: dict[str, list[float]], gates: list[float]) -> None:
    print(f"## {name}")
    for label, values in dist.items():
        print(f"  {label:15s} n={len(values):4d}  {_pcts(values)}")
    for g in gates:
        keep = np.mean([v >= g for v in dist["relevant"]]) * 100
        shut = np.mean([v < g for v in dist["noanswer_top"]]) * 100
        print(f"  gate {g:.3f}: relevant memory reaches it {keep:5.1f}%, no-answer top stays below {shut:5.1f}%")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--embedder", default="minilm")
    parser.add_argument("--locomo", type=int, default=0, help="also the first N LoCoMo conversations")
    parser.add_argument("--gate", type=float, action="append", default=[], help="report this gate's split")
    args = parser.parse_args()
    embedder = registry().make("embedders", args.embedder)
    started = time.perf_counter()
    report(f"coding set, {args.embedder}", coding_distributions(embedder), args.gate)
    if args.locomo:
        report(f"LoCoMo ({args.locomo} conversation(s)), {args.embedder}", locomo_distributions(embedder, args.locomo), args.gate)
    print(f"({time.perf_counter() - started:.0f}s)")


if __name__ == "__main__":
    main()
