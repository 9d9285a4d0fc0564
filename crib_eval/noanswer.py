"""The labelled no-answer set and the coding-memory queries: does ``retrieve`` know when to say nothing?

Users' most common complaint about agent memory is irrelevant memories injected on every prompt.
This module scores exactly that, on what ``Memory.retrieve`` would inject (floors and budget
applied), never on a raw ranking:

* **No-answer set** (``data/noanswer.jsonl``): prompts a user might plausibly type that have no
  relevant memory in their target store(s). ``target`` is ``locomo`` (each of the ten LoCoMo
  conversation stores), ``coding`` (a small coding-agent memory, ``data/coding_memory.jsonl``) or
  ``both``. Every (prompt, store) pair is one *trial*; a trial passes when ``retrieve`` returns
  ``""``. Offending trials are listed with what was injected and by which channel.
* **Coding queries** (``data/coding_queries.jsonl``): prompts that *should* inject a given entry of
  the coding memory (paraphrases with no shared words, exact identifiers, Chinese/Japanese/Korean).
  Their hit rate is the counterweight: a system that never injects anything would score 100% on
  the no-answer set and 0% here.

The coding store is rebuilt from the JSONL file in a temporary directory on every run (40
entries, a couple of seconds), so it always reflects the current write path and schema.
"""

from __future__ import annotations

import json
import tempfile
import time
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Callable, Sequence

from .noanswer_inject import (  # noqa: F401  (re-exported: moved to .noanswer_inject)
    Injection,
    inject,
    open_memory,
)
from .noanswer_records import (  # noqa: F401  (re-exported: moved to .noanswer_records)
    TARGETS,
    CodingQuery,
    NoAnswerPrompt,
)
from .noanswer_report import (  # noqa: F401  (re-exported: moved to .noanswer_report)
    CodingReport,
    NoAnswerReport,
    QueryOutcome,
    _clip,
)

DATA_DIR = Path(__file__).resolve().parent / "data"
NOANSWER_FILE = DATA_DIR / "noanswer.jsonl"
CODING_MEMORY_FILE = DATA_DIR / "coding_memory.jsonl"
CODING_QUERIES_FILE = DATA_DIR / "coding_queries.jsonl"

CODING_STORE = "coding"

Progress = Callable[[str], None]


# -- data --------------------------------------------------------------------------------------


def _read_jsonl(path: Path) -> list[dict[str, Any]]:
    from .jsonl import read_objects

    return read_objects(path)


def load_noanswer(path: Path | None = None) -> list[NoAnswerPrompt]:
    """The labelled no-answer prompts; raises ``ValueError`` on an unknown target or empty prompt."""
    prompts: list[NoAnswerPrompt] = []
    for row in _read_jsonl(path or NOANSWER_FILE):
        prompt = str(row.get("prompt") or "").strip()
        target = str(row.get("target") or "")
        if not prompt:
            raise ValueError(f"no-answer row without a prompt: {row}")
        if target not in TARGETS:
            raise ValueError(f"no-answer prompt {prompt!r}: target {target!r} not in {TARGETS}")
        prompts.append(NoAnswerPrompt(prompt, target, str(row.get("why") or "")))
    return prompts


def load_coding_memory(path: Path | None = None) -> list[dict[str, Any]]:
    """The coding-agent memory as import records (``content``, ``type``, ``created_at``, ``metadata``)."""
    return _read_jsonl(path or CODING_MEMORY_FILE)


def load_coding_queries(path: Path | None = None, *, entries: int | None = None) -> list[CodingQuery]:
    """The coding queries; ``entries`` (the memory's size) validates the expected indices."""
    queries: list[CodingQuery] = []
    for row in _read_jsonl(path or CODING_QUERIES_FILE):
        expected = tuple(int(i) for i in row.get("expected") or ())
        if not expected:
            raise ValueError(f"coding query {row.get('prompt')!r} names no expected entry")
        if entries is not None and any(not 0 <= i < entries for i in expected):
            raise ValueError(f"coding query {row.get('prompt')!r}: expected index out of range")
        queries.append(CodingQuery(str(row["prompt"]), expected, str(row.get("kind") or "")))
    return queries


# -- stores ------------------------------------------------------------------------------------


def build_coding_store(db: Path, records: Sequence[dict[str, Any]] | None = None) -> list[int]:
    """Write the coding memory into a new store at ``db``; returns entry ids in file order.

    Goes through ``Memory.write_many`` (cleaning, embedding, fact extraction) like ``crib import``,
    but without de-duplication so line ``i`` always maps to the ``i``-th returned id.
    """
    from crib_plugin.memory import NewEntry

    records = list(records if records is not None else load_coding_memory())
    for suffix in ("", "-wal", "-shm"):
        Path(str(db) + suffix).unlink(missing_ok=True)
    db.parent.mkdir(parents=True, exist_ok=True)
    items = [
        NewEntry(str(r["content"]), str(r.get("type") or "note"), r.get("created_at"), dict(r.get("metadata") or {}))
        for r in records
    ]
    with open_memory(db, create=True) as memory:
        reports = memory.write_many(items, dedupe=False)
    return [r.entry_id for r in reports]


# -- the no-answer benchmark -------------------------------------------------------------------


def run_noanswer(
    prompts: Sequence[NoAnswerPrompt] | None = None,
    *,
    locomo_stores: dict[str, Path] | None = None,
    coding_db: Path | None = None,
    channels: Sequence[str] | None = None,
    progress: Progress | None = None,
) -> NoAnswerReport:
    """Run every no-answer prompt through ``Memory.retrieve`` on each store of its target.

    ``locomo_stores`` maps a conversation id to its database (``locomo.prepare_stores``);
    ``coding_db`` is a store built by :func:`build_coding_store`. A store kind that is not given
    is skipped, and prompts that target only that kind are left out of the report.
    """
    prompts = list(prompts if prompts is not None else load_noanswer())
    groups: list[tuple[str, dict[str, Path]]] = []
    if locomo_stores:
        groups.append(("locomo", dict(locomo_stores)))
    if coding_db is not None:
        groups.append((CODING_STORE, {CODING_STORE: coding_db}))
    report = NoAnswerReport(channels=list(channels) if channels else None)
    report.stores = {kind: len(stores) for kind, stores in groups}
    report.prompts = [p for p in prompts if any(p.runs_on(kind) for kind, _ in groups)]
    started = time.perf_counter()
    for kind, stores in groups:
        chosen = [p for p in report.prompts if p.runs_on(kind)]
        for name, db in stores.items():
            with open_memory(db) as memory:
                for prompt in chosen:
                    report.add(prompt, kind, inject(memory, prompt.prompt, name, channels=channels))
            if progress:
                progress(f"no-answer: {name}: {len(chosen)} prompts")
    report.seconds = time.perf_counter() - started
    return report


# -- coding queries: the counterweight ---------------------------------------------------------


def run_coding_queries(
    db: Path,
    entry_ids: Sequence[int],
    queries: Sequence[CodingQuery] | None = None,
    *,
    channels: Sequence[str] | None = None,
) -> CodingReport:
    """For each query, is an expected entry (line ``i`` of the memory → ``entry_ids[i]``) injected?"""
    queries = list(queries if queries is not None else load_coding_queries(entries=len(entry_ids)))
    index_of = {entry_id: index for index, entry_id in enumerate(entry_ids)}
    report = CodingReport(channels=list(channels) if channels else None)
    started = time.perf_counter()
    with open_memory(db) as memory:
        for query in queries:
            result = inject(memory, query.prompt, CODING_STORE, channels=channels)
            positions = [index_of.get(i) for i in result.entry_ids]
            found = [i for i in query.expected if i in positions]
            first = next((n for n, i in enumerate(positions, start=1) if i in query.expected), None)
            report.outcomes.append(QueryOutcome(query, found, first, len(result.entry_ids)))
    report.seconds = time.perf_counter() - started
    return report


# -- the whole benchmark, as `crib eval-noanswer` runs it --------------------------------------


@dataclass
class Results:
    """Both reports of one run."""

    noanswer: NoAnswerReport
    coding: CodingReport

    def table(self, *, offenders: int = 30) -> str:
        return self.noanswer.table(offenders=offenders) + "\n\n" + self.coding.table()


def run_all(
    *,
    data_path: Path | None = None,
    cache_dir: Path = Path(".state/eval"),
    rebuild: bool = False,
    conversations: int | None = None,
    locomo: bool = True,
    channels: Sequence[str] | None = None,
    progress: Progress | None = None,
) -> Results:
    """Build (or reuse) the LoCoMo stores, build the coding store in a temporary directory, run both."""
    locomo_stores: dict[str, Path] | None = None
    if locomo:
        from . import locomo as locomo_mod

        path = data_path or locomo_mod.default_data_path()
        convs = locomo_mod.load(path)[:conversations]
        locomo_stores = locomo_mod.prepare_stores(convs, path, cache_dir, rebuild=rebuild, progress=progress)
    with tempfile.TemporaryDirectory(prefix="crib-coding-") as tmp:
        db = Path(tmp) / "coding.db"
        ids = build_coding_store(db)
        if progress:
            progress(f"coding store: {len(ids)} entries")
        noanswer = run_noanswer(locomo_stores=locomo_stores, coding_db=db, channels=channels, progress=progress)
        coding = run_coding_queries(db, ids, channels=channels)
    return Results(noanswer, coding)


def write_json(results: Results, path: Path) -> None:
    """Every offending trial (all of them, not only the table's worst) plus the query outcomes."""
    data = results.noanswer.to_json()
    data["coding_queries"] = [
        {"prompt": o.query.prompt, "kind": o.query.kind, "expected": list(o.query.expected), "found": o.found,
         "first_position": o.first_position, "items": o.injected_items}
        for o in results.coding.outcomes
    ]
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(json.dumps(data, ensure_ascii=False, indent=1), encoding="utf-8")


__all__ = [
    "CodingQuery",
    "CodingReport",
    "Injection",
    "NoAnswerPrompt",
    "NoAnswerReport",
    "Results",
    "build_coding_store",
    "inject",
    "load_coding_memory",
    "load_coding_queries",
    "load_noanswer",
    "run_all",
    "run_coding_queries",
    "run_noanswer",
    "write_json",
]
