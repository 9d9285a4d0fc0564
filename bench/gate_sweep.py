"""The gate's constants, changed one at a time, on the coding set and the commit subjects (one split).

    python bench/gate_sweep.py dev '[{}, {"ev.RELATIVE_CUT": 0.0}, {"spec.CROWD_MARGIN": 0.10}]'

Each prompt is recalled once; then, for every setting of the JSON list (``module.NAME``: ``rel`` is
``crib_plugin.read.gate.relevance``, ``spec`` ``.specific``, ``ev`` ``.evidence``, ``lev`` ``.levels``,
``ptr`` ``crib_plugin.read.pointers``, ``vec`` ``crib_plugin.read.channels.vectors`` — its crowd as the
gate and the maybe gate read it, the fusion's strengths having been set at recall; ``{}`` is crib as
shipped), the block is selected again from a copy: precision and mean tokens of the answerable
prompts' blocks, hit and hit ∪ pointers, silence (nothing at all) on the coding set's no-answer
prompts, and on the commit subjects silence with no entry and with nothing at all. One JSON line per
setting. The store is cached under ``.state/eval`` unless ``CRIB_EVAL_CACHE`` says otherwise.
"""

from __future__ import annotations

import copy
import json
import os
import sys
from pathlib import Path
from typing import Any

import crib_plugin.read.channels.vectors as vec
import crib_plugin.read.gate.evidence as ev
import crib_plugin.read.gate.levels as lev
import crib_plugin.read.gate.relevance as rel
import crib_plugin.read.gate.specific as spec
import crib_plugin.read.pointers as ptr
from crib_eval import coding, commits
from crib_eval.noanswer_inject import open_memory

MODULES: dict[str, Any] = {"rel": rel, "spec": spec, "ptr": ptr, "ev": ev, "lev": lev, "vec": vec}


def figures(memory: Any, key_of: dict[int, str], answerable: list[Any], unanswerable: list[Any], subjects: list[Any]) -> dict[str, float]:
    """The blocks of every prompt, selected again from a copy of its recall."""
    hits = hits_pointers = 0
    precision: list[float] = []
    tokens: list[float] = []
    for prompt, recalled in answerable:
        block = memory.select(copy.deepcopy(recalled))
        shown = {key_of.get(h.entry.id) for h in block.hits}
        pointed = shown | {key_of.get(h.entry.id) for h in block.pointers}
        hits += bool(shown & set(prompt.relevant))
        hits_pointers += bool(pointed & set(prompt.relevant))
        good = set(prompt.relevant) | set(prompt.acceptable)
        if block.hits:
            precision.append(sum(key_of.get(h.entry.id) in good for h in block.hits) / len(block.hits))
        tokens.append(len(memory.render(block)) / 4)
    quiet = 0
    for _, recalled in unanswerable:
        block = memory.select(copy.deepcopy(recalled))
        quiet += not block.hits and not block.pointers
    no_entry = nothing = 0
    for _, recalled in subjects:
        block = memory.select(copy.deepcopy(recalled))
        no_entry += not block.hits
        nothing += not block.hits and not block.pointers and not block.facts
    return {"prec": 100 * sum(precision) / max(1, len(precision)), "tok": sum(tokens) / max(1, len(tokens)),
            "hit": 100 * hits / len(answerable), "hit_ptr": 100 * hits_pointers / len(answerable),
            "noans_nothing": 100 * quiet / max(1, len(unanswerable)),
            "commits_noentry": 100 * no_entry / len(subjects), "commits_nothing": 100 * nothing / len(subjects)}


def main() -> None:
    split = sys.argv[1] if len(sys.argv) > 1 else "dev"
    grid = json.loads(sys.argv[2]) if len(sys.argv) > 2 else [{}]
    data = coding.load(coding.DATA_DIR)
    db, ids = coding.prepare_store(data, Path(os.environ.get("CRIB_EVAL_CACHE", ".state/eval")))
    key_of = {v: k for k, v in ids.items()}
    with coding.fixed_now(data.now), open_memory(db) as memory:
        answerable = [(p, memory.recall(p.prompt)) for p in data.prompts if p.split == split and p.relevant]
        unanswerable = [(p, memory.recall(p.prompt)) for p in data.prompts if p.split == split and not p.relevant]
        subjects = [(r, memory.recall(r["prompt"])) for r in commits.load(split)]
        for setting in grid:
            saved = []
            for key, value in setting.items():
                module, name = key.split(".")
                saved.append((MODULES[module], name, getattr(MODULES[module], name)))
                setattr(MODULES[module], name, value)
            try:
                result = figures(memory, key_of, answerable, unanswerable, subjects)
            finally:
                for module, name, old in saved:
                    setattr(module, name, old)
            print(json.dumps({**setting, **{k: round(v, 1) for k, v in result.items()}}), flush=True)


if __name__ == "__main__":
    main()
