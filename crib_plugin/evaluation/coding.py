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

import hashlib
import json
import math
import statistics
import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, ContextManager

from ..errors import ConfigError

DATA_DIR = Path(__file__).resolve().parent / "data" / "coding"
KINDS = ("task", "question", "paraphrase", "identifier", "time", "stale", "preference", "noanswer")
MEMORY_TYPES = ("note", "decision", "correction", "error", "preference")
SPLITS = ("dev", "test")
BUILD_VERSION = "1"  # bump when the way memories become entries changes
CHANNELS = ("fts", "vector", "facts")

Progress = Callable[[str], None]


class CodingDataError(ConfigError):
    """The coding evaluation's data is malformed (unknown key, kind, split, broken supersede link)."""


# -- data --------------------------------------------------------------------------------------


@dataclass(frozen=True)
class CodingMemory:
    """One memory of the coding agent, with its stable key and what it supersedes (if anything)."""

    key: str
    project: str
    type: str
    created_at: str
    content: str
    supersedes: str | None = None

    def record(self, entry_types: Sequence[str]) -> dict[str, Any]:
        """The import record; a type crib does not know (``preference``) is stored as a ``note``."""
        kind = self.type if self.type in entry_types else "note"
        return {"content": self.content, "type": kind, "created_at": self.created_at, "metadata": {"project": self.project}}


@dataclass(frozen=True)
class CodingPrompt:
    """A prompt with its labels."""

    id: str
    prompt: str
    kind: str
    relevant: tuple[str, ...]
    acceptable: tuple[str, ...]
    split: str
    domain: str = ""  # noanswer only: "on" (a project task no memory covers) or "off"

    @property
    def answerable(self) -> bool:
        return bool(self.relevant)


@dataclass
class CodingSet:
    """Memories, prompts and the set's metadata (its fixed "now")."""

    memories: list[CodingMemory]
    prompts: list[CodingPrompt]
    meta: dict[str, Any]

    @property
    def now(self) -> str:
        return str(self.meta["now"])

    def by_key(self) -> dict[str, CodingMemory]:
        return {m.key: m for m in self.memories}

    def current_of(self) -> dict[str, str]:
        """For every superseded key, the key of the newest memory of its chain (what is true now)."""
        successor = {m.supersedes: m.key for m in self.memories if m.supersedes}
        heads: dict[str, str] = {}
        for key in successor:
            head, seen = key, set()
            while head in successor and head not in seen:
                seen.add(head)
                head = successor[head]
            heads[key] = head
        return heads


def _read_jsonl(path: Path) -> list[dict[str, Any]]:
    rows = []
    for number, line in enumerate(path.read_text(encoding="utf-8").splitlines(), start=1):
        if not line.strip():
            continue
        try:
            row = json.loads(line)
        except json.JSONDecodeError as exc:
            raise CodingDataError(f"{path.name}:{number}: not JSON ({exc})") from exc
        if not isinstance(row, dict):
            raise CodingDataError(f"{path.name}:{number}: expected a JSON object")
        rows.append(row)
    return rows


def data_files(data_dir: Path = DATA_DIR) -> list[Path]:
    """The files that make up the set (memories, prompts, meta), in a stable order."""
    return [*sorted(data_dir.glob("memories-*.jsonl")), data_dir / "prompts.jsonl", data_dir / "meta.json"]


def load(data_dir: Path = DATA_DIR) -> CodingSet:
    """Read and validate the set; raises :class:`CodingDataError` on any inconsistency."""
    meta_path = data_dir / "meta.json"
    if not meta_path.exists():
        raise CodingDataError(f"coding evaluation data not found in {data_dir}")
    meta = json.loads(meta_path.read_text(encoding="utf-8"))
    memories = [
        CodingMemory(
            str(r["key"]), str(r["project"]), str(r["type"]), str(r["created_at"]), str(r["content"]),
            r.get("supersedes") or None,
        )
        for path in sorted(data_dir.glob("memories-*.jsonl"))
        for r in _read_jsonl(path)
    ]
    prompts = [
        CodingPrompt(
            str(r.get("id") or f"p{n:03d}"), str(r["prompt"]), str(r["kind"]), tuple(r.get("relevant") or ()),
            tuple(r.get("acceptable") or ()), str(r.get("split") or ""), str(r.get("domain") or ""),
        )
        for n, r in enumerate(_read_jsonl(data_dir / "prompts.jsonl"), start=1)
    ]
    data = CodingSet(memories, prompts, meta)
    validate(data)
    return data


def validate(data: CodingSet) -> None:
    """Keys unique, types/kinds/splits known, labels and supersede links point at existing memories."""
    keys: set[str] = set()
    for m in data.memories:
        if m.key in keys:
            raise CodingDataError(f"duplicate memory key {m.key}")
        keys.add(m.key)
        if m.type not in MEMORY_TYPES:
            raise CodingDataError(f"{m.key}: type {m.type!r} not in {MEMORY_TYPES}")
        if not m.content.strip():
            raise CodingDataError(f"{m.key}: empty content")
    by_key = data.by_key()
    for m in data.memories:
        if m.supersedes is not None:
            old = by_key.get(m.supersedes)
            if old is None:
                raise CodingDataError(f"{m.key} supersedes unknown key {m.supersedes}")
            if old.created_at >= m.created_at:
                raise CodingDataError(f"{m.key} supersedes {old.key}, which is not older")
    superseded = [m.supersedes for m in data.memories if m.supersedes]
    if len(superseded) != len(set(superseded)):
        raise CodingDataError("a memory is superseded twice (chains must be linear)")
    ids: set[str] = set()
    for p in data.prompts:
        if p.id in ids:
            raise CodingDataError(f"duplicate prompt id {p.id}")
        ids.add(p.id)
        if p.kind not in KINDS:
            raise CodingDataError(f"{p.id}: kind {p.kind!r} not in {KINDS}")
        if p.split not in SPLITS:
            raise CodingDataError(f"{p.id}: split {p.split!r} not in {SPLITS}")
        for key in (*p.relevant, *p.acceptable):
            if key not in keys:
                raise CodingDataError(f"{p.id}: unknown memory key {key}")
        if set(p.relevant) & set(p.acceptable):
            raise CodingDataError(f"{p.id}: a key is both relevant and acceptable")
        if (p.kind == "noanswer") == bool(p.relevant):
            raise CodingDataError(f"{p.id}: noanswer prompts, and only they, have no relevant memory")
        if p.kind == "noanswer" and p.domain not in ("on", "off"):
            raise CodingDataError(f"{p.id}: a noanswer prompt needs domain 'on' or 'off'")
    if "now" not in data.meta:
        raise CodingDataError("meta.json has no 'now'")


def fingerprint(data_dir: Path = DATA_DIR) -> str:
    """Hash of the data files and of crib's own source (outside ``evaluation/``): what the store depends on."""
    digest = hashlib.sha256()
    for path in data_files(data_dir):
        digest.update(path.name.encode())
        digest.update(path.read_bytes())
    package = Path(__file__).resolve().parent.parent
    for path in sorted(package.rglob("*.py")):
        if "evaluation" in path.relative_to(package).parts:
            continue
        digest.update(str(path.relative_to(package)).encode())
        digest.update(path.read_bytes())
    return digest.hexdigest()[:12]


# -- the store ---------------------------------------------------------------------------------


def fixed_now(now: str | None) -> ContextManager[None]:
    """``CRIB_NOW`` set to ``now`` for the duration (restored after), so relative time is reproducible."""
    from ..config import overriding

    return overriding("CRIB_NOW", now)


def build_store(db: Path, memories: Sequence[CodingMemory]) -> dict[str, int]:
    """Import the memories into a new store at ``db`` (``Memory.import_records``); key → entry id."""
    from ..records import ENTRY_TYPES
    from .noanswer import open_memory

    for suffix in ("", "-wal", "-shm"):
        Path(str(db) + suffix).unlink(missing_ok=True)
    db.parent.mkdir(parents=True, exist_ok=True)
    with open_memory(db, create=True) as memory:
        reports = memory.import_records([m.record(ENTRY_TYPES) for m in memories])
    if len(reports) != len(memories) or len({r.entry_id for r in reports}) != len(memories):
        raise CodingDataError("import merged memories: two memories are identical")
    return {m.key: r.entry_id for m, r in zip(memories, reports)}


def prepare_store(
    data: CodingSet, cache_dir: Path, *, data_dir: Path = DATA_DIR, rebuild: bool = False, progress: Progress | None = None
) -> tuple[Path, dict[str, int]]:
    """Build (or reuse) the store for ``data``; cached by data + embedder + schema + crib source."""
    from ..config import load_settings
    from ..store.schema import latest_version

    embedder = load_settings().embedder or "minilm"
    subset = hashlib.sha256("\n".join(m.key for m in data.memories).encode()).hexdigest()[:6]
    folder = cache_dir / "coding" / f"{fingerprint(data_dir)}-{subset}-{embedder}-s{latest_version()}-b{BUILD_VERSION}"
    db, ids_path = folder / "coding.db", folder / "ids.json"
    if rebuild or not ids_path.exists():
        started = time.perf_counter()
        with fixed_now(data.now):
            ids = build_store(db, data.memories)
        ids_path.write_text(json.dumps(ids), encoding="utf-8")
        if progress:
            progress(f"coding store: {len(ids)} memories in {time.perf_counter() - started:.1f}s ({folder})")
    return db, json.loads(ids_path.read_text(encoding="utf-8"))


# -- one prompt's outcome and the metrics ------------------------------------------------------


@dataclass
class Outcome:
    """What crib did for one prompt: injected keys (in block order), facts, the raw rankings, timing."""

    prompt: CodingPrompt
    injected: list[str] = field(default_factory=list)
    contents: list[str] = field(default_factory=list)
    facts: list[str] = field(default_factory=list)
    facts_relevant: int = 0
    marked: list[str] = field(default_factory=list)  # injected entries the block marks as superseded
    ranked: dict[str, list[str]] = field(default_factory=dict)  # "fused" and each channel → keys, best first
    seconds: float = 0.0


def hit(relevant: Sequence[str], injected: Sequence[str]) -> bool:
    """At least one relevant memory injected."""
    return bool(set(relevant) & set(injected))


def recall(relevant: Sequence[str], injected: Sequence[str]) -> float:
    """Share of the relevant memories injected (0 when there are none)."""
    return len(set(relevant) & set(injected)) / len(set(relevant)) if relevant else 0.0


def precision(relevant: Sequence[str], acceptable: Sequence[str], injected: Sequence[str]) -> float | None:
    """Share of injected memories that are relevant or acceptable; ``None`` when nothing was injected."""
    if not injected:
        return None
    good = set(relevant) | set(acceptable)
    return sum(key in good for key in injected) / len(injected)


def stale_alone(injected: Sequence[str], current_of: dict[str, str], marked: Sequence[str] = ()) -> list[str]:
    """Superseded memories injected without the current memory of their chain (a stale belief shown alone).

    An entry the block itself marks as superseded (``marked``: crib set ``superseded_by`` on it) is
    not alone: the reader is told it is no longer true.
    """
    shown, flagged = set(injected), set(marked)
    return [key for key in injected if key in current_of and current_of[key] not in shown and key not in flagged]


def hit_at(ranked: Sequence[str], relevant: Sequence[str], k: int) -> bool:
    return bool(set(ranked[:k]) & set(relevant))


def percentile(values: Sequence[float], q: float) -> float:
    """The ``q`` quantile (0..1) by nearest rank; 0 for no values."""
    if not values:
        return 0.0
    ordered = sorted(values)
    return ordered[min(len(ordered), max(1, math.ceil(q * len(ordered)))) - 1]


def _pct(values: Sequence[float | bool]) -> float | None:
    return 100.0 * sum(values) / len(values) if values else None


@dataclass
class Summary:
    """The metrics over one group of outcomes (a kind, a split, everything)."""

    n: int
    answerable: int
    hit: float | None
    recall: float | None
    precision: float | None
    silence: float | None
    silence_on: float | None
    silence_off: float | None
    stale_alone: int
    mean_injected: float
    mean_injected_when_any: float | None
    search_hit1: float | None
    search_hit5: float | None
    channel_hits: dict[str, tuple[float | None, float | None]]
    latency_mean_ms: float
    latency_p90_ms: float
    facts_mean: float
    facts_relevant_mean: float

    def to_json(self) -> dict[str, Any]:
        data = dict(self.__dict__)
        data["channel_hits"] = {k: list(v) for k, v in self.channel_hits.items()}
        return data


def summarise(outcomes: Sequence[Outcome], current_of: dict[str, str]) -> Summary:
    """Hit rate, recall, precision, silence, stale-shown-alone, size, ranking and latency of a group."""
    answerable = [o for o in outcomes if o.prompt.answerable]
    silent = [o for o in outcomes if not o.prompt.answerable]
    shown = [o for o in outcomes if o.injected]
    precisions = [precision(o.prompt.relevant, o.prompt.acceptable, o.injected) for o in shown]
    ms = [o.seconds * 1000 for o in outcomes]
    channels = sorted({name for o in outcomes for name in o.ranked if name != "fused"})
    return Summary(
        n=len(outcomes),
        answerable=len(answerable),
        hit=_pct([hit(o.prompt.relevant, o.injected) for o in answerable]),
        recall=_pct([recall(o.prompt.relevant, o.injected) for o in answerable]),
        precision=_pct([p for p in precisions if p is not None]),
        silence=_pct([not o.injected for o in silent]),
        silence_on=_pct([not o.injected for o in silent if o.prompt.domain == "on"]),
        silence_off=_pct([not o.injected for o in silent if o.prompt.domain == "off"]),
        stale_alone=sum(bool(stale_alone(o.injected, current_of, o.marked)) for o in outcomes),
        mean_injected=statistics.fmean([len(o.injected) for o in outcomes]) if outcomes else 0.0,
        mean_injected_when_any=statistics.fmean([len(o.injected) for o in shown]) if shown else None,
        search_hit1=_pct([hit_at(o.ranked.get("fused", []), o.prompt.relevant, 1) for o in answerable]),
        search_hit5=_pct([hit_at(o.ranked.get("fused", []), o.prompt.relevant, 5) for o in answerable]),
        channel_hits={
            name: (
                _pct([hit_at(o.ranked.get(name, []), o.prompt.relevant, 1) for o in answerable]),
                _pct([hit_at(o.ranked.get(name, []), o.prompt.relevant, 5) for o in answerable]),
            )
            for name in channels
        },
        latency_mean_ms=statistics.fmean(ms) if ms else 0.0,
        latency_p90_ms=percentile(ms, 0.9),
        facts_mean=statistics.fmean([len(o.facts) for o in outcomes]) if outcomes else 0.0,
        facts_relevant_mean=statistics.fmean([o.facts_relevant for o in outcomes]) if outcomes else 0.0,
    )


# -- running -----------------------------------------------------------------------------------


def _fact_bears(fact: Any, good_ids: set[int], good_text: str) -> bool:
    """A fact bears on the prompt when a relevant/acceptable memory stated it or names its subject or object."""
    if good_ids & set(getattr(fact, "source_entry_ids", []) or []):
        return True
    return any(len(part) >= 3 and part.lower() in good_text for part in (fact.subject, fact.object))


def run_prompt(memory: Any, prompt: CodingPrompt, ids: dict[str, int], data: CodingSet, *, channels: Sequence[str]) -> Outcome:
    """Retrieve (as the hook does) and search (fused, then each channel alone) for one prompt."""
    from .noanswer import inject

    key_of = {v: k for k, v in ids.items()}
    started = time.perf_counter()
    injection = inject(memory, prompt.prompt, "coding")
    outcome = Outcome(prompt, seconds=time.perf_counter() - started)
    outcome.injected = [key_of.get(i, f"#{i}") for i in injection.entry_ids]
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
            ("| kind | n | hit % | recall % | precision % | silence % | stale alone | injected (mean / when any) "
            "| search hit@1 | hit@5 | latency ms mean / p90 |"),
            "|---|---|---|---|---|---|---|---|---|---|---|",
        ]
        present = [k for k in KINDS if any(o.prompt.kind == k for o in self.outcomes)]
        rows: list[tuple[str, Summary]] = [(k, self.summary(kind=k)) for k in present]
        splits = sorted({o.prompt.split for o in self.outcomes})
        if len(splits) > 1:
            rows += [(f"**{s}**", self.summary(split=s)) for s in splits]
        rows.append(("**all**", self.summary()))
        for name, s in rows:
            lines.append(
                f"| {name} | {s.n} | {f(s.hit)} | {f(s.recall)} | {f(s.precision)} | {f(s.silence)} | {s.stale_alone} "
                f"| {s.mean_injected:.1f} / {f(s.mean_injected_when_any)} | {f(s.search_hit1)} | {f(s.search_hit5)} "
                f"| {s.latency_mean_ms:.0f} / {s.latency_p90_ms:.0f} |"
            )
        total = self.summary()
        lines += [
            "",
            (f"Silence on no-answer prompts: {f(total.silence)}% (on-domain {f(total.silence_on)}%, "
            f"off-domain {f(total.silence_off)}%)."),
            (f"Facts in the block: {total.facts_mean:.2f} per prompt, {total.facts_relevant_mean:.2f} of them bearing on "
            "a relevant memory."),
            "",
            "| search ranking (answerable prompts) | hit@1 % | hit@5 % |",
            "|---|---|---|",
            f"| fused | {f(total.search_hit1)} | {f(total.search_hit5)} |",
        ]
        for name, (h1, h5) in total.channel_hits.items():
            lines.append(f"| {name} alone | {f(h1)} | {f(h5)} |")
        if offenders:
            lines += ["", *self.offender_lines(offenders)]
        return "\n".join(lines)

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
                    "injected": o.injected, "facts": o.facts, "facts_relevant": o.facts_relevant,
                    "ranked": o.ranked, "ms": round(o.seconds * 1000, 1),
                    "hit": hit(o.prompt.relevant, o.injected),
                    "precision": precision(o.prompt.relevant, o.prompt.acceptable, o.injected),
                    "stale_alone": stale_alone(o.injected, self.data.current_of(), o.marked),
                    "marked_superseded": o.marked,
                }
                for o in self.outcomes
            ],
        }


def evaluate(
    data: CodingSet,
    db: Path,
    ids: dict[str, int],
    *,
    split: str = "all",
    progress: Progress | None = None,
) -> CodingReport:
    """Run every prompt of ``split`` (dev / test / all) against the store, with ``CRIB_NOW`` fixed."""
    from .noanswer import open_memory

    if split not in (*SPLITS, "all"):
        raise CodingDataError(f"split {split!r} not in dev, test, all")
    prompts = [p for p in data.prompts if split == "all" or p.split == split]
    outcomes: list[Outcome] = []
    started = time.perf_counter()
    with fixed_now(data.now), open_memory(db) as memory:
        available = [c for c in CHANNELS if c in memory.registry.channels]
        for prompt in prompts:
            outcomes.append(run_prompt(memory, prompt, ids, data, channels=available))
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
) -> CodingReport:
    """Load the set (``data_dir``, default :data:`DATA_DIR`), build (or reuse) its store, evaluate ``split``."""
    data_dir = data_dir or DATA_DIR
    data = load(data_dir)
    db, ids = prepare_store(data, cache_dir, data_dir=data_dir, rebuild=rebuild, progress=progress)
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
