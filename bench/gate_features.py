"""Record, per prompt, the features the relevance gate sees, and what opening it would reach.

Throwaway measurement for the "learned gate" pass (docs/pointers.md, "Ninth pass"). For each prompt
it wraps the real select path (``Memory.retrieve`` → ``select`` → ``close_if_irrelevant``), records
the features computed from the retrieval before the gate, the hand gate's decision, whether the
maybe gate opened, and the outcome; then reruns the prompt with the maybe gate forced open (pointers
whenever the gate shuts) to learn what opening would reach.

Sources: coding **dev** prompts only (the test split stays held out unless ``--test`` is given),
LoCoMo questions, the no-answer set on the LoCoMo stores and on the 40-entry coding store, and the
coding queries (answerable prompts on that store).

    PYTHONPATH=. python bench/gate_features.py --cache /work/main/.state/eval --out .state/gate_features.jsonl
"""

from __future__ import annotations

import argparse
import json
import math
import sys
import tempfile
from dataclasses import replace
from functools import partial
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from crib_plugin.read import pointers, selection  # noqa: E402
from crib_plugin.read.channels.vectors import crowd_level  # noqa: E402
from crib_plugin.read.gate import relevance  # noqa: E402
from crib_plugin.read.gate.levels import vector_floor, vector_gate  # noqa: E402
from crib_plugin.read.gate.prompt_kind import prompt_kind  # noqa: E402
from crib_plugin.read.gate.specific import contents_of, sharing_specific, specific_terms  # noqa: E402

LAST: dict[str, Any] = {}
_original_close = selection.close_if_irrelevant
_original_maybe = pointers._maybe_gate
FORCE = {"on": False}


def features(memory: Any, retrieval: Any) -> dict[str, float]:
    """What the gate can see of one prompt, before it decides."""
    text = retrieval.query.text
    vector = next((c for c in retrieval.channels if c.channel == "vector" and c.ran), None)
    scores = sorted((h.score for h in vector.hits), reverse=True) if vector else []
    gate = vector_gate(memory)
    floor = vector_floor(memory)
    cov = relevance.fts_coverage(memory, retrieval)
    top = scores[0] if scores else 0.0
    crowd = crowd_level(scores)
    ranked = sorted(vector.hits, key=lambda h: -h.score) if vector else []
    top_ids = [h.entry_id for h in ranked[:5]]
    above_floor = [h for h in ranked if h.score >= floor]
    agree = max((cov.get(h.entry_id, 0.0) for h in above_floor), default=0.0)
    spec_vec = sharing_specific(memory, text, contents_of(memory, retrieval, top_ids)) if top_ids else {}
    fts = next((c for c in retrieval.channels if c.channel == "fts" and c.ran), None)
    fts_ids = [h.entry_id for h in fts.hits[:5]] if fts else []
    spec_fts = sharing_specific(memory, text, contents_of(memory, retrieval, fts_ids)) if fts_ids else {}
    facts_ch = next((c for c in retrieval.channels if c.channel == "facts" and c.ran), None)
    facts_ids = [h.entry_id for h in facts_ch.hits if h.passed_floor] if facts_ch else []
    weights = relevance.term_weights(memory, text)
    n = memory.store.count_entries()
    both = set(top_ids) & set(fts_ids)
    return {
        "top": top, "gate": gate, "floor": floor, "top_gate": top - gate,
        "margin": (top - crowd) if crowd is not None else 0.0,
        "gap2": (scores[0] - scores[1]) if len(scores) > 1 else 0.0,
        "cov": max(cov.values(), default=0.0), "agree": agree,
        "spec_vec": float(bool(spec_vec)), "spec_vec_top": float(bool(top_ids) and top_ids[0] in spec_vec),
        "spec_fts": float(bool(spec_fts)), "n_specific": float(len(specific_terms(memory, text))),
        "facts": float(bool(facts_ids)),
        "facts_bear": float(bool(facts_ids) and relevance.facts_bear(memory, retrieval, facts_ids)),
        "task": float(prompt_kind(text) == "task"), "n_terms": float(len(weights)),
        "idf_mass": sum(w for _, w in weights), "log_n": math.log(max(1, n)), "n": float(n),
        "fts_hits": float(len(fts.hits) if fts else 0), "agree_top5": float(bool(both)),
        "time": float(retrieval.query.time_range is not None),
    }


def _close(memory: Any, retrieval: Any) -> Any:
    LAST["features"] = features(memory, retrieval)
    gated = _original_close(memory, retrieval)  # the retrieval with the gate applied; its decision on .gate
    LAST["open"] = gated.gate.open
    LAST["reason"] = gated.gate.reason
    return gated


def _maybe(memory: Any, retrieval: Any) -> int | None:
    found = _original_maybe(memory, retrieval)
    LAST["maybe"] = found is not None
    if found is None and FORCE["on"]:
        return 0
    return found


selection.close_if_irrelevant = _close
pointers._maybe_gate = _maybe


def _run(fn: Any) -> tuple[Any, dict[str, Any], Any]:
    """Run ``fn`` normally and with the maybe gate forced open; (normal, its record, forced)."""
    LAST.clear()
    normal = fn()
    record = dict(LAST)
    FORCE["on"] = True
    try:
        forced = fn()
    finally:
        FORCE["on"] = False
    return normal, record, forced


def coding_dev(cache: Path, out: list[dict[str, Any]], split: str) -> None:
    from crib_eval import coding
    from crib_eval.noanswer_inject import inject, open_memory

    data = coding.load(coding.DATA_DIR)
    db, ids = coding.prepare_store(data, cache)
    key_of = {v: k for k, v in ids.items()}
    with coding.fixed_now(data.now), open_memory(db) as memory:
        for p in (p for p in data.prompts if p.split == split):
            normal, rec, forced = _run(partial(inject, memory, p.prompt, "coding"))
            good = set(p.relevant)

            def reach(inj: Any, good: set[str] = good) -> bool:
                return bool(good & {key_of.get(i) for i in inj.entry_ids + inj.pointer_ids})
            out.append({"source": f"coding-{split}", "prompt": p.prompt, "kind": p.kind, "answerable": bool(p.relevant),
                        "shown": normal.injected, "hit": reach(normal), "hit_forced": reach(forced),
                        "tokens": normal.block_chars / 4, "tokens_forced": forced.block_chars / 4, **rec})


def locomo_questions(cache: Path, out: list[dict[str, Any]]) -> dict[str, Path]:
    from crib_eval import locomo
    from crib_plugin.core.config import Settings
    from crib_plugin.core.records import Retrieval
    from crib_plugin.memory import Memory
    from crib_plugin.read.query import prepare
    from crib_plugin.read.recall import CANDIDATES, fused_stage, run_channel

    path = locomo.default_data_path()
    conversations = locomo.load(path)
    stores = locomo.prepare_stores(conversations, path, cache)
    for conv in conversations:
        db = stores[conv.sample_id]
        with Memory(db, settings=Settings.for_eval(db), create=False) as memory:
            available = [c for c in ("facts", "fts", "vector") if c in memory.registry.channels]
            for q in conv.questions:
                query = prepare(q.question)
                base = Retrieval(query=query, channels=[run_channel(memory, name, query, CANDIDATES) for name in available])
                fused = fused_stage(memory, replace(base, channels=list(base.channels)))

                def one(fused: Any = fused) -> Any:
                    return memory.select(replace(fused, hits=list(fused.hits), dropped=[], notes=[]))
                normal, rec, forced = _run(one)

                def recall(b: Any, evidence: set[str] = q.evidence) -> float:
                    found = set(locomo.ranked_ids(b.hits) + locomo.ranked_ids(b.pointers))
                    return len(found & evidence) / len(evidence) if evidence else 0.0
                out.append({"source": "locomo", "prompt": q.question, "kind": f"cat{q.category}", "answerable": True,
                            "conv": conv.sample_id, "shown": bool(normal.hits or normal.pointers or normal.facts),
                            "recall": recall(normal), "recall_forced": recall(forced), **rec})
    return stores


def noanswer(stores: dict[str, Path], out: list[dict[str, Any]]) -> None:
    from crib_eval import noanswer as na

    prompts = na.load_noanswer()
    with tempfile.TemporaryDirectory(prefix="crib-coding-") as tmp:
        db = Path(tmp) / "coding.db"
        entry_ids = na.build_coding_store(db)
        groups = [("locomo", name, path) for name, path in stores.items()] + [("coding", "coding", db)]
        for kind, name, path in groups:
            with na.open_memory(path) as memory:
                for p in (p for p in prompts if p.runs_on(kind)):
                    normal, rec, forced = _run(partial(na.inject, memory, p.prompt, name))
                    out.append({"source": f"noanswer-{kind}", "prompt": p.prompt, "store": name, "answerable": False,
                                "shown": normal.injected, "shown_forced": forced.injected, **rec})
        queries = na.load_coding_queries(entries=len(entry_ids))
        index_of = {e: i for i, e in enumerate(entry_ids)}
        with na.open_memory(db) as memory:
            for q in queries:
                normal, rec, forced = _run(partial(na.inject, memory, q.prompt, "coding"))

                def hits(inj: Any, expected: Any = q.expected) -> bool:
                    return any(index_of.get(i) in expected for i in inj.entry_ids + inj.pointer_ids)
                out.append({"source": "coding-queries", "prompt": q.prompt, "answerable": True, "shown": normal.injected,
                            "hit": hits(normal), "hit_forced": hits(forced), **rec})


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--cache", type=Path, default=Path(".state/eval"))
    parser.add_argument("--out", type=Path, required=True)
    parser.add_argument("--test", action="store_true", help="the coding test split only (the one held-out evaluation)")
    parser.add_argument("--no-locomo", action="store_true")
    args = parser.parse_args()
    out: list[dict[str, Any]] = []
    if args.test:
        coding_dev(args.cache, out, "test")
    else:
        coding_dev(args.cache, out, "dev")
        if not args.no_locomo:
            stores = locomo_questions(args.cache, out)
            noanswer(stores, out)
    args.out.parent.mkdir(parents=True, exist_ok=True)
    with args.out.open("w", encoding="utf-8") as f:
        for row in out:
            f.write(json.dumps(row, ensure_ascii=False) + "\n")
    print(f"{len(out)} rows → {args.out}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
