"""The coding-agent evaluation: right memories, and only those, on a realistic coding agent's memory.

The data (``data/coding/``, CC0) is a coding agent's memory written over about six months across
several projects of different stacks, plus labelled prompts:

* ``memories-*.jsonl``: one memory per line — ``key`` (stable, e.g. ``rust-017``), ``project``,
  ``type`` (note / decision / correction / error / preference), ``created_at``, ``content`` and,
  for a memory that replaces an older one, ``supersedes`` (the older one's key).
* ``prompts.jsonl``: ``prompt``, ``kind`` (see :data:`KINDS`), ``relevant`` (keys that must be
  injected), ``acceptable`` (keys fine to show), ``split`` (dev / test), and for no-answer prompts
  ``domain`` (``on``: a task on one of the projects that no memory covers; ``off``: unrelated).
* ``meta.json``: the evaluation's fixed "now" (time prompts are relative to it), licence, notes.

The store is built through the public API (``Memory.import_records``, as ``crib import`` does) and
cached under ``.state/eval/coding`` by a fingerprint of the data, the embedder, the schema and
crib's own source (so a change to the write path rebuilds it; 240 entries take seconds). Every
prompt then goes through ``Memory.retrieve`` — the hook's code path: gate, floors, budget — and
the entries it injected are read back by id (:func:`noanswer.inject`). ``Memory.search`` gives
the raw ranking, fused and per channel.

"Now" is fixed through ``CRIB_NOW`` (set for the duration of the run): relative-time prompts
("last month") are only reproducible with it; a crib without ``CRIB_NOW`` support resolves them
against the wall clock and the time figures are then meaningless.
"""

from __future__ import annotations

import json
import time
from collections.abc import Sequence
from pathlib import Path
from typing import Any

from .coding_data import (  # noqa: F401  (re-exported: moved to .coding_data)
    BUILD_VERSION,
    CHANNELS,
    DATA_DIR,
    KINDS,
    MEMORY_TYPES,
    SPLITS,
    CodingDataError,
    CodingMemory,
    CodingPrompt,
    CodingSet,
    Progress,
    _read_jsonl,
    data_files,
    fingerprint,
    load,
    validate,
)
from .coding_metrics import (  # noqa: F401  (re-exported: moved to .coding_metrics)
    Outcome,
    Summary,
    _pct,
    hit,
    hit_at,
    percentile,
    precision,
    recall,
    stale_alone,
    summarise,
)
from .coding_report import (  # noqa: F401  (re-exported: moved to .coding_report)
    CodingReport,
)
from .coding_store import (  # noqa: F401  (re-exported: moved to .coding_store)
    build_store,
    fixed_now,
    prepare_store,
)

# -- running -----------------------------------------------------------------------------------


def _fact_bears(fact: Any, good_ids: set[int], good_text: str) -> bool:
    """A fact bears on the prompt when a relevant/acceptable memory stated it or names its subject or object."""
    if good_ids & set(getattr(fact, "source_entry_ids", []) or []):
        return True
    return any(len(part) >= 3 and part.lower() in good_text for part in (fact.subject, fact.object))


def run_prompt(memory: Any, prompt: CodingPrompt, ids: dict[str, int], data: CodingSet, *, channels: Sequence[str]) -> Outcome:
    """Retrieve (as the hook does) and search (fused, then each channel alone) for one prompt."""
    from .noanswer_inject import inject

    key_of = {v: k for k, v in ids.items()}
    started = time.perf_counter()
    injection = inject(memory, prompt.prompt, "coding")
    outcome = Outcome(prompt, seconds=time.perf_counter() - started)
    outcome.injected = [key_of.get(i, f"#{i}") for i in injection.entry_ids]
    outcome.pointers = [key_of.get(i, f"#{i}") for i in injection.pointer_ids]
    outcome.block_chars = injection.block_chars
    outcome.contents = list(injection.contents)
    outcome.facts = list(injection.facts)
    retrieval = getattr(memory, "last_retrieval", None)
    if injection.injected and retrieval is not None:
        outcome.marked = [
            key_of.get(h.entry.id, "") for h in retrieval.hits if getattr(h.entry, "superseded_by", None) is not None
        ]
    if injection.injected and retrieval is not None and retrieval.facts:
        good = set(prompt.relevant) | set(prompt.acceptable)
        by_key = data.by_key()
        good_ids = {ids[k] for k in good if k in ids}
        good_text = " ".join(by_key[k].content for k in good).lower()
        outcome.facts_relevant = sum(_fact_bears(f, good_ids, good_text) for f in retrieval.facts)
    outcome.ranked["fused"] = [key_of.get(h.entry.id, "") for h in memory.search(prompt.prompt, limit=10)]
    for name in channels:
        outcome.ranked[name] = [key_of.get(h.entry.id, "") for h in memory.search(prompt.prompt, limit=10, channels=[name])]
    return outcome


def standing_keys(memory: Any, ids: dict[str, int]) -> set[str]:
    """The keys of the standing memories (newest preferences, decisions, corrections, in full or
    as the index's pointers) that SessionStart re-injects on this store when no earlier prompt is
    known — what a Claude Code session has in context before any prompt's block. The global
    store's are left out."""
    from crib_plugin.hosts.claude.start import standing_entries

    key_of = {v: k for k, v in ids.items()}
    standing = standing_entries(memory, "", memory.settings.budget)
    return {key_of[e.id] for e in standing.entries + standing.pointers if e.id in key_of and e.scope != "global"}


def evaluate(
    data: CodingSet,
    db: Path,
    ids: dict[str, int],
    *,
    split: str = "all",
    progress: Progress | None = None,
) -> CodingReport:
    """Run every prompt of ``split`` (dev / test / all) against the store, with ``CRIB_NOW`` fixed."""
    from .noanswer_inject import open_memory

    if split not in (*SPLITS, "all"):
        raise CodingDataError(f"split {split!r} not in dev, test, all")
    prompts = [p for p in data.prompts if split == "all" or p.split == split]
    outcomes: list[Outcome] = []
    started = time.perf_counter()
    from .baseline import PlainBM25

    baseline = PlainBM25((m.key, m.content) for m in data.memories)
    with fixed_now(data.now), open_memory(db) as memory:
        available = [c for c in CHANNELS if c in memory.registry.channels]
        standing = standing_keys(memory, ids)
        for prompt in prompts:
            outcome = run_prompt(memory, prompt, ids, data, channels=available)
            outcome.ranked["bm25"] = baseline.search(prompt.prompt, 10)
            outcome.in_session = bool(standing & set(prompt.relevant))
            outcomes.append(outcome)
    if progress:
        progress(f"coding: {len(outcomes)} prompts in {time.perf_counter() - started:.1f}s")
    return CodingReport(data, outcomes, split, time.perf_counter() - started)


def run(
    *,
    split: str = "all",
    cache_dir: Path = Path(".state/eval"),
    rebuild: bool = False,
    data_dir: Path | None = None,
    progress: Progress | None = None,
    cues: bool = True,
    cue_model: str | None = None,
) -> CodingReport:
    """Load the set (``data_dir``, default :data:`DATA_DIR`), build (or reuse) its store, evaluate ``split``.
    ``cues=False`` stores the memories without their recall cues (:mod:`crib_plugin.core.cues`);
    ``cue_model`` stores them without the set's cues and lets that Ollama model write each one
    (``CRIB_CUE_MODEL``, :mod:`crib_plugin.models.ollama.cue_writer`)."""
    from crib_plugin.core.config import overriding

    data_dir = data_dir or DATA_DIR
    data = load(data_dir) if cues and not cue_model else load(data_dir).without_cues()
    with overriding("CRIB_CUE_MODEL", cue_model):
        db, ids = prepare_store(data, cache_dir, data_dir=data_dir, rebuild=rebuild, progress=progress,
                                tag=f"cues-{cue_model}" if cue_model else "")
    return evaluate(data, db, ids, split=split, progress=progress)


def write_json(report: CodingReport, path: Path) -> None:
    """Every prompt's outcome plus the summaries, for diffing two runs."""
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(json.dumps(report.to_json(), ensure_ascii=False, indent=1), encoding="utf-8")


__all__ = [
    "CodingDataError", "CodingMemory", "CodingPrompt", "CodingReport", "CodingSet", "Outcome", "Summary",
    "build_store", "evaluate", "fixed_now", "hit", "load", "precision", "prepare_store", "recall", "run",
    "stale_alone", "summarise", "write_json",
]
