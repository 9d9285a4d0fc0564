"""What each rule of the relevance gate buys: switch one off, measure every dev set.

    python bench/gate_ablation.py [--cache DIR] [VARIANT ...]

Each variant patches one rule of :mod:`crib_plugin.read.gate` in this process (``base`` patches
nothing), then measures, on the dev splits: the coding set (``crib eval --set coding``: hit, hit ∪
pointers, silence on its no-answer prompts, mean block tokens), the commit-subject no-answer set
(``--set commits``: silence with no entry, and with nothing at all), and the first two LoCoMo dev
conversations (``--set locomo``: evidence among the entries, and among entries ∪ pointers, mean
block tokens). One JSON line per variant. The figures are quoted in docs/relevance.md.
"""

from __future__ import annotations

import argparse
import contextlib
import json
import time
from pathlib import Path
from typing import Any

import crib_plugin.read.gate.relevance as rel
import crib_plugin.read.gate.specific as spec
from crib_eval import coding, commits, locomo, splits

VARIANTS: dict[str, list[tuple[Any, str, Any]]] = {
    "base": [],
    "no_standout": [(rel, "STANDOUT_STORE", 0)],
    "no_type_named": [(rel, "TYPE_WORDS", {})],
    "no_facts": [(rel, "facts_bear", lambda *a, **k: False)],
    "no_crowd": [(spec, "CROWD_MARGIN", 9.0)],
    "no_window": [(rel, "_in_window", lambda *a, **k: [])],
    "no_fts_cov": [(rel, "FTS_COVERAGE", 9.0)],
    "no_distinct": [(rel, "distinctive", lambda *a, **k: {})],
}


def measure(cache: Path) -> dict[str, float]:
    data = coding.load(coding.DATA_DIR)
    db, ids = coding.prepare_store(data, cache)
    summary = coding.evaluate(data, db, ids, split="dev").summary()
    out = {"coding hit": summary.hit or 0.0, "coding hit∪ptr": summary.hit_pointers or 0.0,
           "coding silence": summary.silence or 0.0, "coding tokens": summary.tokens_mean}
    rows = commits.run(split="dev", cache_dir=cache).rows
    out["commits silence"] = 100 * sum(not r["entries"] for r in rows) / len(rows)
    out["commits nothing"] = 100 * sum(not r["chars"] for r in rows) / len(rows)
    path = locomo.default_data_path()
    convs = splits.split_conversations("locomo", locomo.load(path), "dev")[:2]
    report = locomo.evaluate(convs, locomo.prepare_stores(convs, path, cache))
    union, entries = report.blocks["per-entry cut ∪ pointers"], report.blocks["per-entry cut"]
    out["locomo2 ent"] = 100 * sum(r for r, _, _ in entries) / len(entries)
    out["locomo2 ent∪ptr"] = 100 * sum(r for r, _, _ in union) / len(union)
    out["locomo2 tokens"] = sum(t for _, _, t in union) / len(union)
    return out


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("variants", nargs="*", help="some of: " + ", ".join(VARIANTS) + " (default: every one)")
    parser.add_argument("--cache", type=Path, default=Path(".state/eval"))
    args = parser.parse_args()
    unknown = [v for v in args.variants if v not in VARIANTS]
    if unknown:  # checked here: argparse rejects an empty list against `choices` with nargs="*"
        parser.error(f"unknown variant(s): {', '.join(unknown)}")
    for name in args.variants or list(VARIANTS):
        started = time.perf_counter()
        with contextlib.ExitStack() as stack:
            for module, attribute, value in VARIANTS[name]:
                old = getattr(module, attribute)
                setattr(module, attribute, value)
                stack.callback(setattr, module, attribute, old)
            figures = measure(args.cache)
        print(json.dumps({"variant": name, **{k: round(v, 1) for k, v in figures.items()},
                          "seconds": round(time.perf_counter() - started)}, ensure_ascii=False), flush=True)


if __name__ == "__main__":
    main()
