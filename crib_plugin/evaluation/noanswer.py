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
from collections import Counter
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import Any, Callable, Sequence

DATA_DIR = Path(__file__).resolve().parent / "data"
NOANSWER_FILE = DATA_DIR / "noanswer.jsonl"
CODING_MEMORY_FILE = DATA_DIR / "coding_memory.jsonl"
CODING_QUERIES_FILE = DATA_DIR / "coding_queries.jsonl"

TARGETS = ("locomo", "coding", "both")
CODING_STORE = "coding"

Progress = Callable[[str], None]


# -- data --------------------------------------------------------------------------------------


@dataclass(frozen=True)
class NoAnswerPrompt:
    """A prompt with no relevant memory in its target store(s), and why it is there."""

    prompt: str
    target: str  # locomo | coding | both
    why: str = ""

    def runs_on(self, store_kind: str) -> bool:
        """True when this prompt is asserted to have no answer in stores of ``store_kind``."""
        return self.target == "both" or self.target == store_kind


@dataclass(frozen=True)
class CodingQuery:
    """A prompt that should inject the coding-memory entries at ``expected`` (0-based line numbers)."""

    prompt: str
    expected: tuple[int, ...]
    kind: str = ""  # keyword | paraphrase | identifier | cjk


def _read_jsonl(path: Path) -> list[dict[str, Any]]:
    rows: list[dict[str, Any]] = []
    for number, line in enumerate(path.read_text(encoding="utf-8").splitlines(), start=1):
        if not line.strip():
            continue
        try:
            row = json.loads(line)
        except json.JSONDecodeError as exc:
            raise ValueError(f"{path.name}:{number}: not JSON ({exc})") from exc
        if not isinstance(row, dict):
            raise ValueError(f"{path.name}:{number}: expected a JSON object")
        rows.append(row)
    return rows


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


def open_memory(db: Path, *, create: bool = False) -> Any:
    """A ``Memory`` on ``db`` with the environment's settings (so ``CRIB_CHANNEL`` ablations work)."""
    from ..config import load_settings
    from ..memory import Memory

    return Memory(db, settings=replace(load_settings(), db=db), create=create)


def build_coding_store(db: Path, records: Sequence[dict[str, Any]] | None = None) -> list[int]:
    """Write the coding memory into a new store at ``db``; returns entry ids in file order.

    Goes through ``Memory.write_many`` (cleaning, embedding, fact extraction) like ``crib import``,
    but without de-duplication so line ``i`` always maps to the ``i``-th returned id.
    """
    from ..memory import NewEntry

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


# -- what an injection contained ---------------------------------------------------------------


@dataclass
class Injection:
    """One trial's outcome: what ``retrieve`` injected for a prompt on one store ("" → nothing)."""

    store: str
    prompt: str
    block_chars: int = 0
    entry_ids: list[int] = field(default_factory=list)
    hit_channels: list[list[str]] = field(default_factory=list)  # per kept hit, the channels that found it
    contents: list[str] = field(default_factory=list)
    facts: list[str] = field(default_factory=list)
    fts_matched: bool | None = None  # the word/trigram index returned something before floors; None: fts did not run

    @property
    def injected(self) -> bool:
        return self.block_chars > 0

    def channel_counts(self) -> Counter[str]:
        """Kept hits per channel (a hit two channels found counts for both), plus ``triples``: fact rows rendered."""
        counts: Counter[str] = Counter()
        for names in self.hit_channels:
            counts.update(names)
        if self.facts:
            counts["triples"] += len(self.facts)
        return counts

    def to_json(self) -> dict[str, Any]:
        return {
            "store": self.store,
            "prompt": self.prompt,
            "chars": self.block_chars,
            "hits": [
                {"id": i, "channels": c, "content": t}
                for i, c, t in zip(self.entry_ids, self.hit_channels, self.contents)
            ],
            "facts": self.facts,
        }


def inject(memory: Any, prompt: str, store: str, *, channels: Sequence[str] | None = None) -> Injection:
    """Run ``memory.retrieve(prompt)`` and describe what it injected, hit by hit, channel by channel.

    ``retrieve`` leaves the selected retrieval on ``memory.last_retrieval``; if a future version
    stops doing so, the same ``recall`` → ``select`` is re-run to attribute the hits.
    """
    block = memory.retrieve(prompt, channels=channels)
    retrieval = getattr(memory, "last_retrieval", None)
    if retrieval is None:
        retrieval = memory.select(memory.recall(prompt, channels=channels))
    result = Injection(store=store, prompt=prompt, block_chars=len(block))
    for channel in retrieval.channels:
        if channel.channel == "fts" and channel.ran:
            result.fts_matched = bool(channel.hits)
    if not block:
        return result
    for hit in retrieval.hits:
        result.entry_ids.append(hit.entry.id)
        result.hit_channels.append(sorted(hit.channels))
        result.contents.append(hit.entry.content)
    for fact in retrieval.facts:
        result.facts.append(f"{fact.subject} → {fact.predicate} → {fact.object}")
    return result


def _clip(text: str, width: int) -> str:
    text = " ".join(text.split()).replace("|", "\\|")
    return text if len(text) <= width else text[: width - 1] + "…"


# -- the no-answer benchmark -------------------------------------------------------------------


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
