"""LoCoMo turn-level retrieval, run through crib's own write and retrieve paths.

Protocol (``../shared/eval/locomo/README.md``): one store per conversation; one entry per turn,
``"{speaker}: {text}"`` plus ``" [shares {blip_caption}]"``, dated with its session's date and
carrying its ``dia_id`` in metadata; the question is the query; relevant = the repaired evidence
ids; questions left without evidence are dropped (1,982 remain).

The data is read from where it lies at run time (``--data`` / ``CRIB_LOCOMO``); it is never copied
into the repository. Stores are cached under ``.state/eval`` keyed by the data's hash, the
embedder and crib's schema, since embedding 5,882 turns takes a couple of minutes.
"""

from __future__ import annotations

import hashlib
import json
import re
import time
from dataclasses import dataclass, field, replace
from datetime import datetime
from pathlib import Path
from typing import Any, Callable, Iterable, Sequence

from crib_plugin.core.timeutil import to_iso

from .datapaths import shared_eval_path
from .metrics import KS, Scores
from .paired import LEAD_TITLE, lead_lines

CATEGORIES = {1: "multi-hop", 2: "temporal", 3: "open-domain", 4: "single-hop", 5: "adversarial"}
BUILD_VERSION = "2"  # bump when the way turns become entries changes


@dataclass
class Turn:
    dia_id: str
    speaker: str
    text: str
    created_at: str
    session: int

    @property
    def content(self) -> str:
        return self.text


@dataclass
class Question:
    question: str
    evidence: set[str]
    category: int
    exclude: set[str] = field(default_factory=set)  # turns no ranking may return for this question (its own answer)
    key: str = ""  # the question's own split key, where a set splits questions rather than conversations


@dataclass
class Conversation:
    sample_id: str
    turns: list[Turn]
    questions: list[Question]
    observations: list[tuple[str, str, list[str]]] = field(default_factory=list)  # (speaker, fact, dia_ids)
    threads: bool = True  # turns of one session are one thread (crib indexes a turn's neighbours); False: separate memories


def default_data_path() -> Path:
    """``CRIB_LOCOMO``, else ``../shared/eval/locomo/locomo10.json`` beside the checkout."""
    from crib_plugin.core.config import get_settings

    return shared_eval_path(get_settings().locomo, "locomo/locomo10.json")


def parse_session_date(value: str) -> str:
    """``"1:56 pm on 8 May, 2023"`` → ``"2023-05-08T13:56:00Z"``."""
    text = " ".join(value.replace("\u202f", " ").split())
    for fmt in ("%I:%M %p on %d %B, %Y", "%I:%M %p on %d %b, %Y", "%I:%M %p on %B %d, %Y"):
        try:
            return to_iso(datetime.strptime(text, fmt))
        except ValueError:
            continue
    raise ValueError(f"unrecognised LoCoMo date: {value!r}")


def repair_evidence(raw: Iterable[Any], known: set[str]) -> set[str]:
    """Split, fix ``D:11:26`` → ``D11:26`` and ``D30:05`` → ``D30:5``; keep only ids naming a turn."""
    found: set[str] = set()
    for item in raw:
        for piece in re.split(r"[;,\s]+", str(item)):
            piece = piece.strip()
            if not piece:
                continue
            piece = re.sub(r"^D:(\d)", r"D\1", piece)
            match = re.fullmatch(r"D(\d+):(\d+)", piece)
            if not match:
                continue
            dia_id = f"D{int(match.group(1))}:{int(match.group(2))}"
            if dia_id in known:
                found.add(dia_id)
    return found


def turn_text(turn: dict[str, Any]) -> str:
    text = f"{turn['speaker']}: {turn['text']}"
    if turn.get("blip_caption"):
        text += f" [shares {turn['blip_caption']}]"
    return text


def load(path: Path | None = None) -> list[Conversation]:
    """Read LoCoMo into conversations of turns and judged questions."""
    path = path or default_data_path()
    if not path.exists():
        from crib_plugin.core.errors import ConfigError

        raise ConfigError(f"LoCoMo data not found at {path} (set CRIB_LOCOMO or pass --data)")
    data = json.loads(path.read_text(encoding="utf-8"))
    conversations: list[Conversation] = []
    for sample in data:
        conv = sample["conversation"]
        turns: list[Turn] = []
        for key, value in conv.items():
            match = re.fullmatch(r"session_(\d+)", key)
            if not match or not isinstance(value, list):
                continue
            session = int(match.group(1))
            created = parse_session_date(conv[f"{key}_date_time"])
            for turn in value:
                turns.append(Turn(turn["dia_id"], turn["speaker"], turn_text(turn), created, session))
        known = {t.dia_id for t in turns}
        questions = []
        for qa in sample["qa"]:
            evidence = repair_evidence(qa.get("evidence", []), known)
            if evidence:
                questions.append(Question(str(qa["question"]), evidence, int(qa["category"])))
        observations: list[tuple[str, str, list[str]]] = []
        for session_obs in (sample.get("observation") or {}).values():
            for speaker, facts in (session_obs or {}).items():
                for fact in facts:
                    ids = fact[1] if isinstance(fact[1], list) else [fact[1]]
                    observations.append((speaker, str(fact[0]), [str(i) for i in ids]))
        conversations.append(Conversation(sample["sample_id"], turns, questions, observations))
    return conversations


def data_fingerprint(path: Path) -> str:
    """A hash of the data file (or of every file in the data folder, by name and content)."""
    digest = hashlib.sha256()
    for item in sorted(path.rglob("*")) if path.is_dir() else [path]:
        if item.is_file():
            digest.update(item.name.encode() + b"\0" + item.read_bytes())
    return digest.hexdigest()[:12]


def build_store(conv: Conversation, db: Path, *, extract: bool = True, progress: Callable[[str], None] | None = None) -> Any:
    """Write a conversation's turns into a new store at ``db`` through ``Memory.write_many``."""
    from crib_plugin.core.config import Settings
    from crib_plugin.memory import Memory, NewEntry

    if db.exists():
        for suffix in ("", "-wal", "-shm"):
            Path(str(db) + suffix).unlink(missing_ok=True)
    memory = Memory(db, settings=Settings.for_eval(db))
    items = [
        NewEntry(t.content, "note", t.created_at, {"dia_id": t.dia_id, "session": t.session, "sample_id": conv.sample_id,
                                                   **({"thread": f"{conv.sample_id}/session_{t.session}"} if conv.threads else {})})
        for t in conv.turns
    ]
    started = time.perf_counter()
    for start in range(0, len(items), 256):
        memory.write_many(items[start:start + 256], dedupe=False, extract=extract)
    if progress:
        progress(f"{conv.sample_id}: {len(items)} turns in {time.perf_counter() - started:.1f}s")
    memory.close()
    return db


def store_path(cache_dir: Path, conv: Conversation, fingerprint: str, embedder: str) -> Path:
    from crib_plugin.store.schema import latest_version

    threads = "" if conv.threads else "-nothreads"
    return cache_dir / f"{fingerprint}-{embedder}-s{latest_version()}-b{BUILD_VERSION}{threads}" / f"{conv.sample_id}.db"


@dataclass
class Report:
    """Scores per system (overall and per category) plus timing."""

    systems: dict[str, Scores] = field(default_factory=dict)
    by_category: dict[tuple[str, int], Scores] = field(default_factory=dict)
    without_adversarial: dict[str, Scores] = field(default_factory=dict)
    questions: int = 0
    seconds: float = 0.0
    blocks: dict[str, list[tuple[float, int, float]]] = field(default_factory=dict)  # system → (evidence recall, items, tokens)
    title: str = "LoCoMo turn-level retrieval"
    categories: dict[int, str] = field(default_factory=lambda: dict(CATEGORIES))

    def add_block(self, system: str, ids: Sequence[str], question: Question, tokens: float = 0.0) -> None:
        """The whole injected block at the default budget: its evidence recall, its size in items and tokens."""
        found = len(set(ids) & question.evidence) / len(question.evidence) if question.evidence else 0.0
        self.blocks.setdefault(system, []).append((found, len(ids), tokens))

    def add(self, system: str, ranked: Sequence[str], question: Question) -> None:
        self.systems.setdefault(system, Scores()).add(ranked, question.evidence)
        self.by_category.setdefault((system, question.category), Scores()).add(ranked, question.evidence)
        if question.category != 5:
            self.without_adversarial.setdefault(system, Scores()).add(ranked, question.evidence)

    def table(self) -> str:
        keys = [f"R@{k}" for k in KS] + ["hit@10", "nDCG@10", "MRR"]
        lines = [f"{self.title}, {self.questions} questions ({self.seconds:.0f}s)", ""]
        lines.append("| system | " + " | ".join(keys) + " | R@10 w/o cat.5 |")
        lines.append("|---" * (len(keys) + 2) + "|")
        for name, scores in self.systems.items():
            values = " | ".join(f"{v:.1f}" for v in scores.row(keys))
            wo = self.without_adversarial.get(name)
            lines.append(f"| {name} | {values} | {wo.mean('R@10') if wo else 0:.1f} |")
        lines += self.lead_lines()
        cats = sorted({c for _, c in self.by_category} & set(self.categories))
        if len(cats) > 1:
            lines += ["", "| R@10 by category | " + " | ".join(f"{self.categories[c]} ({c})" for c in cats) + " |"]
            lines.append("|---" * (len(cats) + 1) + "|")
            for name in self.systems:
                row = [self.by_category.get((name, c), Scores()).mean("R@10") for c in cats]
                lines.append(f"| {name} | " + " | ".join(f"{v:.1f}" for v in row) + " |")
        if self.blocks:
            lines += ["", "| injected block (default budget, 10-entry cap) | evidence recall % | mean items (entries, + pointers) "
                      "| items when injected | injected % | mean block tokens |", "|---|---|---|---|---|---|"]
            for name, rows in self.blocks.items():
                recall = 100 * sum(r for r, _, _ in rows) / len(rows)
                sizes = [n for _, n, _ in rows]
                nonempty = [n for n in sizes if n]
                tokens = sum(t for _, _, t in rows) / len(rows)
                lines.append(
                    f"| {name} | {recall:.1f} | {sum(sizes) / len(sizes):.2f} | "
                    f"{(sum(nonempty) / len(nonempty)) if nonempty else 0:.2f} | {100 * len(nonempty) / len(sizes):.1f} | {tokens:.0f} |"
                )
        return "\n".join(lines)

    def lead_lines(self) -> list[str]:
        """The fused ranking's lead over plain BM25 and each channel alone at R@5 and R@10, with its
        paired interval (:mod:`crib_eval.paired`); nothing when there is no fused row."""
        fused = self.systems.get(FUSED)
        if fused is None or not fused.n:
            return []
        keys = ("R@5", "R@10")
        others = {name: {k: s.values[k] for k in keys} for name, s in self.systems.items()
                  if name not in (FUSED, INJECTED) and s.n == fused.n}
        return ["", *lead_lines(LEAD_TITLE, {k: fused.values[k] for k in keys}, others)] if others else []


def ranked_ids(hits: Sequence[Any]) -> list[str]:
    return [str(h.entry.metadata.get("dia_id")) for h in hits]


BASELINE = "plain BM25 (harness, no crib code)"
CHANNEL_ROWS = {"fts": "full text alone", "vector": "vectors alone", "facts": "facts alone"}
FUSED = "fused (raw ranking)"
INJECTED = "fused, as injected"


def entry_ids_by_turn(db: Path) -> dict[str, int]:
    """dia_id → entry id, read from the store's file (no crib code needed)."""
    import sqlite3

    with sqlite3.connect(f"file:{db}?mode=ro", uri=True) as conn:
        rows = conn.execute("SELECT id, json_extract(metadata, '$.dia_id') FROM entries").fetchall()
    return {str(dia): int(i) for i, dia in rows if dia is not None}


def without(result: Any, excluded: set[int]) -> Any:
    """A channel's result with the excluded entries' hits removed (as if they were not stored)."""
    if not excluded:
        return result
    return replace(result, hits=[h for h in result.hits if h.entry_id not in excluded])


def evaluate(
    conversations: Sequence[Conversation],
    stores: dict[str, Path],
    *,
    channels: Sequence[str] = ("facts", "fts", "vector"),
    injected: bool = True,
    progress: Callable[[str], None] | None = None,
    limit_questions: int | None = None,
    title: str = "LoCoMo turn-level retrieval",
    categories: dict[int, str] | None = None,
) -> Report:
    """Score the plain-BM25 baseline, every channel alone, the fusion of all, and (``injected``) what
    a prompt's block would hold, with its size in tokens (characters / 4)."""
    from crib_plugin.core.config import Settings
    from crib_plugin.core.records import Retrieval
    from crib_plugin.memory import Memory
    from crib_plugin.read.query import prepare
    from crib_plugin.read.recall import CANDIDATES, fused_stage, run_channel

    from .baseline import PlainBM25
    from .coding_metrics import CHARS_PER_TOKEN

    report = Report(title=title, categories=dict(CATEGORIES if categories is None else categories))
    started = time.perf_counter()
    for conv in conversations:
        db = stores[conv.sample_id]
        baseline = PlainBM25((t.dia_id, t.text) for t in conv.turns)
        entry_of = entry_ids_by_turn(db)
        with Memory(db, settings=Settings.for_eval(db), create=False) as memory:
            available = [c for c in channels if c in memory.registry.channels]
            for question in conv.questions[:limit_questions]:
                report.add(BASELINE, baseline.search(question.question, max(KS), exclude=sorted(question.exclude)), question)
                excluded = {entry_of[d] for d in question.exclude if d in entry_of}
                query = prepare(question.question)
                base = Retrieval(query=query, channels=[without(run_channel(memory, name, query, CANDIDATES), excluded)
                                                        for name in available])
                for name in available:
                    solo = fused_stage(memory, replace(base, channels=list(base.channels)), only=[name])
                    report.add(CHANNEL_ROWS.get(name, name), ranked_ids(solo.hits), question)
                fused = fused_stage(memory, replace(base, channels=list(base.channels)))
                report.add(FUSED, ranked_ids(fused.hits), question)
                if injected:
                    chosen = memory.select(replace(fused, hits=list(fused.hits), dropped=[]), max_items=max(KS))
                    report.add(INJECTED, ranked_ids(chosen.hits), question)
                    for name, per_entry in (("per-entry cut", True), ("gate only (no per-entry cut)", False)):
                        block = memory.select(replace(fused, hits=list(fused.hits), dropped=[], notes=[]), per_entry=per_entry)
                        tokens = len(memory.render(block)) / CHARS_PER_TOKEN
                        report.add_block(name, ranked_ids(block.hits), question, tokens)
                        if per_entry:  # the same block with its one-line pointers (crib_plugin.read.pointers)
                            report.add_block("per-entry cut ∪ pointers", ranked_ids(block.hits) + ranked_ids(block.pointers), question, tokens)
                report.questions += 1
        baseline.close()
        if progress:
            progress(f"{conv.sample_id}: {report.questions} questions so far")
    report.seconds = time.perf_counter() - started
    return report


def prepare_stores(
    conversations: Sequence[Conversation],
    data_path: Path,
    cache_dir: Path,
    *,
    rebuild: bool = False,
    progress: Callable[[str], None] | None = None,
) -> dict[str, Path]:
    """Build (or reuse) one store per conversation; returns sample_id → database path."""
    from crib_plugin.core.config import load_settings

    embedder = load_settings().embedder or "minilm"
    fingerprint = data_fingerprint(data_path)
    stores: dict[str, Path] = {}
    for conv in conversations:
        db = store_path(cache_dir, conv, fingerprint, embedder)
        done = db.with_suffix(".done")
        if rebuild or not done.exists():
            db.parent.mkdir(parents=True, exist_ok=True)
            build_store(conv, db, progress=progress)
            done.write_text("ok")
        stores[conv.sample_id] = db
    return stores
