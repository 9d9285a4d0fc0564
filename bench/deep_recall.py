"""Deep recall's evidence recall@25 against standard retrieval (issue 19, part 3).

For questions that need many memories, how much of the evidence does the top 25 hold?

* **standard** — ``crib search`` (``Memory.recall``: every channel fused, floors applied), top 25;
* **deep** — the grep-gated manifest of :mod:`crib_plugin.hosts.deep.manifest`, top 25 (what a reader
  model, or the ``deep-recall`` subagent, would work through);
* **deep, no expansion** / **deep, no gate** — the same with the co-occurrence expansion off, and
  with the grep gate off (every pooled candidate ranked): what each step earns.

Two sets: LoCoMo's multi-hop questions (category 1 of ``locomo10.json``; evidence = the dialogue
turns each question cites) and the coding set's survey prompts ("every …", "how did … change",
``crib_eval/data/coding/survey.jsonl``, read only here, so the coding evaluation's
figures do not move; evidence = the ``relevant`` memories).

    CRIB_LOCOMO=…/locomo10.json python bench/deep_recall.py [--cache .state/eval] [--conversations N] [--questions N]

Prints one table per set: mean evidence recall@25, share of questions with all their evidence in
the top 25, mean size of the list, and seconds per question (a loaded machine: ratios, not times).
"""

from __future__ import annotations

import argparse
import json
import os
import sys
import time
from contextlib import contextmanager
from dataclasses import dataclass, field
from pathlib import Path
from typing import Callable, Iterator, Sequence

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

K = 25


@dataclass
class Score:
    recalls: list[float] = field(default_factory=list)
    first_waves: list[float] = field(default_factory=list)  # recall@10: what the first two waves of five read
    complete: list[bool] = field(default_factory=list)
    sizes: list[int] = field(default_factory=list)
    seconds: float = 0.0

    def add(self, found: Sequence[str], evidence: set[str], seconds: float) -> None:
        hit = evidence & set(found[:K])
        self.recalls.append(len(hit) / len(evidence))
        self.first_waves.append(len(evidence & set(found[:10])) / len(evidence))
        self.complete.append(hit == evidence)
        self.sizes.append(min(K, len(found)))
        self.seconds += seconds

    def row(self, name: str) -> str:
        n = max(1, len(self.recalls))
        return (f"| {name} | {100 * sum(self.recalls) / n:.1f} | {100 * sum(self.first_waves) / n:.1f} | {100 * sum(self.complete) / n:.1f} | "
                f"{sum(self.sizes) / n:.1f} | {self.seconds / n:.3f} |")


@contextmanager
def store(db: Path) -> Iterator[None]:
    """CRIB_DB at ``db``, no global store, for the duration."""
    saved = {k: os.environ.get(k) for k in ("CRIB_DB", "CRIB_GLOBAL_DB")}
    os.environ["CRIB_DB"] = str(db)
    os.environ["CRIB_GLOBAL_DB"] = str(db.parent / "no-global-store.db")
    try:
        yield
    finally:
        for k, v in saved.items():
            if v is None:
                os.environ.pop(k, None)
            else:
                os.environ[k] = v


def standard(question: str) -> list[int]:
    from crib_plugin.hosts.scoped import search

    return [int(h["id"]) for h in search(question, limit=K, scope="project")]


def deep(question: str, *, expand: bool = True, gated: bool = True) -> list[int]:
    from crib_plugin.hosts.deep import expand as expansion
    from crib_plugin.hosts.deep import manifest

    saved = (expansion.MAX_EXPANSION, manifest.GATE_PASS)
    expansion.MAX_EXPANSION = expansion.MAX_EXPANSION if expand else 0
    manifest.GATE_PASS = manifest.GATE_PASS if gated else float("-inf")
    try:
        return [c.id for c in manifest.build_manifest(question, scope="project").candidates]
    finally:
        expansion.MAX_EXPANSION, manifest.GATE_PASS = saved


SYSTEMS: dict[str, Callable[[str], list[int]]] = {
    "standard (crib search top 25)": standard,
    "deep: gated manifest top 25": deep,
    "deep, no expansion": lambda q: deep(q, expand=False),
    "deep, no gate": lambda q: deep(q, gated=False),
}


def measure(scores: dict[str, Score], question: str, evidence: set[str], key_of: Callable[[int], str]) -> None:
    for name, system in SYSTEMS.items():
        started = time.perf_counter()
        ids = system(question)
        scores[name].add([key_of(i) for i in ids], evidence, time.perf_counter() - started)


def coding(cache: Path) -> tuple[dict[str, Score], int]:
    from crib_eval.coding_data import DATA_DIR, load
    from crib_eval.coding_store import fixed_now, prepare_store

    data = load()
    db, ids = prepare_store(data, cache, progress=lambda m: print(m, file=sys.stderr))
    key_of = {v: k for k, v in ids.items()}.get
    prompts = [json.loads(line) for line in (DATA_DIR / "survey.jsonl").read_text(encoding="utf-8").splitlines() if line.strip()]
    scores = {name: Score() for name in SYSTEMS}
    with store(db), fixed_now(data.now):
        for prompt in prompts:
            measure(scores, prompt["prompt"], set(prompt["relevant"]), lambda i: key_of(i) or "")
    return scores, len(prompts)


def locomo(cache: Path, conversations: int | None, questions: int | None) -> tuple[dict[str, Score], int]:
    from crib_eval.locomo import default_data_path, load, prepare_stores
    from crib_plugin.store import open_store

    path = default_data_path()
    convs = load(path)[:conversations] if conversations else load(path)
    stores = prepare_stores(convs, path, cache, progress=lambda m: print(m, file=sys.stderr))
    scores = {name: Score() for name in SYSTEMS}
    asked = 0
    for conv in convs:
        db = stores[conv.sample_id]
        with open_store(db, readonly=True) as st:
            dia = {e.id: str(e.metadata.get("dia_id", "")) for e in st.iter_entries()}
        multi = [q for q in conv.questions if q.category == 1 and q.evidence][:questions]
        with store(db):
            for q in multi:
                measure(scores, q.question, set(q.evidence), lambda i, dia=dia: dia.get(i, ""))
        asked += len(multi)
    return scores, asked


def table(title: str, scores: dict[str, Score], n: int) -> str:
    lines = [f"### {title} ({n} questions)", "",
             "| system | evidence recall@25 % | recall@10 % | all evidence in top 25 % | mean listed | s / question |", "|---|---|---|---|---|---|"]
    lines += [score.row(name) for name, score in scores.items()]
    return "\n".join(lines)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--cache", type=Path, default=ROOT / ".state" / "eval")
    parser.add_argument("--conversations", type=int, default=None, help="LoCoMo: only the first N conversations")
    parser.add_argument("--questions", type=int, default=None, help="LoCoMo: only the first N multi-hop questions of each")
    parser.add_argument("--skip-locomo", action="store_true")
    args = parser.parse_args(argv)
    scores, n = coding(args.cache)
    print(table("coding set, survey prompts", scores, n))
    if not args.skip_locomo:
        scores, n = locomo(args.cache, args.conversations, args.questions)
        print()
        print(table("LoCoMo, multi-hop (category 1)", scores, n))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
