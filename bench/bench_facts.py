"""Fact triples: extraction throughput, and LoCoMo recall with the facts channel on and off.

    python bench/bench_facts.py [--data PATH] [--conversations N] [--questions N] [--vectors]
                                [--skip-throughput] [--skip-locomo]

**Throughput.** The rule extractor over a set of agent-style notes and over LoCoMo's 5,882 turns
(texts/s, facts/s, share of texts yielding a fact); consolidation (``record_facts``) into a
fresh store (facts/s); the Ollama extractor on the agent notes when ``OLLAMA_HOST`` (default
localhost:11434) answers and serves ``CRIB_EXTRACTION_MODEL`` (default gemma3:1b).

**LoCoMo** (``../shared/eval/locomo/README.md``; read at run time, never copied). One store per
conversation, one entry per turn as in ``crib eval``. The facts come from two places, measured
separately:

- ``observation`` facts — LoCoMo's LLM-written facts with provenance dia_ids — turned into triples
  mechanically (no extractor involved): subject = the speaker, predicate = the verb right after the
  speaker's name ("Caroline *attended* …", else ``noted``), object = the rest of the sentence
  (capped at the entity-name limit). Each fact is recorded once per evidence turn, so its sources
  are those turns. This measures the *channel* independently of any extractor.
- ``rules`` facts — crib's offline extractor run on every turn, as the write path would.

Systems scored per question (recall@5/10/25 of evidence turns, hit@10, nDCG@10, MRR, by the
lead's ``crib_plugin.evaluation`` metrics): the full-text channel alone, the facts channel alone,
and the two fused by crib's own ``crib_plugin.fusion.fuse`` (RRF, k = 60, gated by each hit's
strength) — "facts off" vs "facts on". ``--vectors`` also embeds every turn (MiniLM, ~5 minutes
on 2 busy cores) and scores fts+vector with and without facts.
"""

from __future__ import annotations

import argparse
import os
import re
import sys
import tempfile
import time
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Sequence

from crib_eval import locomo
from crib_eval.metrics import KS, Scores
from crib_plugin.core.records import ChannelResult, Triple
from crib_plugin.models.rules import RuleExtractor
from crib_plugin.read.channels.facts import FactsChannel
from crib_plugin.read.channels.fulltext import FullTextChannel
from crib_plugin.read.fusion import fuse
from crib_plugin.read.query import prepare
from crib_plugin.store import open_store
from crib_plugin.store.facts import MAX_NAME_CHARS, record_facts

CANDIDATES = 50

AGENT_NOTES = [
    "ClientA pays Net30",
    "ClientA now pays Net45.",
    "Chose SQLite for storage. Zero dependencies.",
    "We switched from Postgres to SQLite because the deploy target has no database server.",
    "The API uses Redis for caching and Celery for background jobs.",
    "Maya lives in Lisbon; she leads the payments team.",
    "We no longer use Travis, CI runs on GitHub Actions.",
    "Decision: use pytest for testing, not unittest.",
    "- Owner: Dana Lee\n- Deadline: 2026-03-01\n- Status: blocked on legal review",
    "storage → PostgreSQL",
    "spill → lives in → repo",
    "The worker does not use Celery any more; it polls the queue table directly.",
    "The bug was a race condition in the retry loop, fixed by taking the lock before reading the cursor.",
    "Caroline likes painting, hiking and jazz.",
    "type=correction ClientA's payment terms are Net60, not Net45.",
    "How should we handle retries when the upstream rate-limits us?",
    "We decided to drop Python 3.8 support in the next release.",
    "The frontend uses React and Vite, deployed to Fly.io.",
    "Acme Corp is based in Tokyo and pays on net 30 terms.",
    "Thanks, that looks good to me!",
]


# ------------------------------------------------------------------------------------------------
# Throughput
# ------------------------------------------------------------------------------------------------


def time_extractor(extractor: Any, texts: Sequence[str], repeat: int = 1) -> dict[str, float]:
    started = time.perf_counter()
    facts = with_fact = 0
    for _ in range(repeat):
        for text in texts:
            found = extractor.extract(text)
            facts += len(found)
            with_fact += bool(found)
    seconds = time.perf_counter() - started
    n = len(texts) * repeat
    return {"texts": n, "seconds": seconds, "texts_per_s": n / seconds, "facts_per_s": facts / seconds,
            "facts_per_text": facts / n, "share_with_fact": with_fact / n}


def time_consolidation(n_entries: int = 2000) -> dict[str, float]:
    """record_facts throughput: entries of 3 facts each, a third of them superseding earlier ones.

    Each entry is its own transaction, as on the write path; ``in_record_facts`` is the time spent
    inside ``record_facts`` itself (the rest is the entry insert and the commit).
    """
    inside = 0.0
    with tempfile.TemporaryDirectory() as tmp:
        with open_store(Path(tmp) / "c.db") as store:
            started = time.perf_counter()
            for i in range(n_entries):
                created = f"2026-01-01T{i // 3600:02d}:{(i // 60) % 60:02d}:{i % 60:02d}Z"
                with store.transaction():
                    entry_id = store.insert_entry("note", f"note {i}", created, {})
                    mark = time.perf_counter()
                    record_facts(store, entry_id, [
                        Triple(f"client{i % 300}", "payment_terms", f"Net{30 + i % 4 * 15}"),
                        Triple(f"service{i % 50}", "uses", f"lib{i % 97}"),
                        Triple("project", "storage_backend", ["SQLite", "Postgres"][i % 2] if i % 3 == 0 else "SQLite"),
                    ], valid_from=created)
                    inside += time.perf_counter() - mark
            seconds = time.perf_counter() - started
            relations = store.execute("SELECT count(*), count(valid_until) FROM relations")[0]
    return {"entries": n_entries, "facts": 3 * n_entries, "seconds": seconds, "in_record_facts": inside,
            "facts_per_s": 3 * n_entries / seconds, "record_facts_per_s": 3 * n_entries / inside,
            "relations": relations[0], "closed": relations[1]}


def ollama_throughput() -> str:
    from crib_plugin.models.ollama_probe import list_models, ollama_host

    host = ollama_host()
    model = os.environ.get("CRIB_EXTRACTION_MODEL") or "gemma3:1b"
    names = list_models(host)
    if names is None:
        return f"ollama: skipped — nothing answers at {host}"
    if not any(n in (model, f"{model}:latest") for n in names):
        return f"ollama: skipped — {host} answers but does not serve {model}"
    from crib_plugin.models.ollama_models import OllamaExtractor

    stats = time_extractor(OllamaExtractor(), AGENT_NOTES)
    return (f"ollama ({model}) on {stats['texts']} agent notes: {stats['texts_per_s']:.2f} texts/s, "
            f"{stats['facts_per_text']:.2f} facts/text")


# ------------------------------------------------------------------------------------------------
# LoCoMo
# ------------------------------------------------------------------------------------------------


def _cap(text: str, limit: int = MAX_NAME_CHARS) -> str:
    if len(text) <= limit:
        return text
    cut = text[:limit].rsplit(" ", 1)[0]
    return cut.rstrip(",;: ")


def observation_triple(speaker: str, fact: str) -> Triple:
    """LoCoMo observation → triple, mechanically: (speaker, verb after the name, rest) or (speaker, noted, fact)."""
    body = " ".join(fact.split()).rstrip(".")
    match = re.match(rf"^{re.escape(speaker)}\s+([a-z]+)\s+(.+)$", body)
    if match:
        return Triple(speaker, match.group(1), _cap(match.group(2)))
    return Triple(speaker, "noted", _cap(body))


class StoreOnly:
    """What the fts and facts channels need from a Memory: its store."""

    def __init__(self, store: Any) -> None:
        self.store = store


@dataclass
class Built:
    store: Any
    dia_of: dict[int, str]
    facts: int
    relations: int


def build(conv: Any, db: Path, source: str, memory: Any = None) -> Built:
    """A store of the conversation's turns plus facts from ``source`` ("observation" or "rules")."""
    if memory is not None:
        from crib_plugin.memory import NewEntry

        items = [NewEntry(t.content, "note", t.created_at, {"dia_id": t.dia_id}) for t in conv.turns]
        reports = memory.write_many(items, dedupe=False, extract=False)
        store = memory.store
        ids = [r.entry_id for r in reports]
    else:
        store = open_store(db)
        ids = []
        with store.transaction():
            for t in conv.turns:
                ids.append(store.insert_entry("note", t.content, t.created_at, {"dia_id": t.dia_id}))
    entry_of = {t.dia_id: i for t, i in zip(conv.turns, ids)}
    turn_of = {t.dia_id: t for t in conv.turns}
    facts = 0
    with store.transaction():
        if source == "observation":
            for speaker, fact, dia_ids in conv.observations:
                triple = observation_triple(speaker, fact)
                for dia_id in dia_ids:
                    dia_id = next(iter(locomo.repair_evidence([dia_id], set(entry_of))), None)
                    if dia_id is None:
                        continue
                    facts += len(record_facts(store, entry_of[dia_id], [triple], valid_from=turn_of[dia_id].created_at))
        else:
            extractor = RuleExtractor()
            for t in conv.turns:
                triples = extractor.extract(t.text.split(": ", 1)[-1])
                # "I"/"my" in a turn mean the speaker: name them, as an agent's note would
                triples = [Triple(t.speaker if x.subject == "project" else x.subject, x.predicate, x.object) for x in triples]
                facts += len(record_facts(store, entry_of[t.dia_id], triples, valid_from=t.created_at))
    relations = int(store.execute("SELECT count(*) FROM relations")[0][0])
    return Built(store, {i: d for d, i in entry_of.items()}, facts, relations)


def ranking(results: Sequence[ChannelResult], dia_of: dict[int, str]) -> list[str]:
    return [dia_of[f.entry_id] for f in fuse(list(results)) if f.entry_id in dia_of]


def run_locomo(data: Path | None, n_conv: int | None, n_questions: int | None, vectors: bool) -> str:
    conversations = locomo.load(data)[:n_conv]
    systems: dict[str, dict[str, Scores]] = {}
    wo5: dict[str, dict[str, Scores]] = {}
    stats: dict[str, list[int]] = {}
    answered: dict[str, int] = {}
    started = time.perf_counter()
    fts_channel, facts_channel = FullTextChannel(), FactsChannel()
    n_q = 0
    with tempfile.TemporaryDirectory() as tmp:
        for source in ("observation", "rules"):
            for conv in conversations:
                memory = None
                if vectors and source == "observation":
                    from crib_plugin.core.config import Settings
                    from crib_plugin.memory import Memory

                    db = Path(tmp) / f"{conv.sample_id}-v.db"
                    memory = Memory(db, settings=Settings.for_eval(db))
                built = build(conv, Path(tmp) / f"{conv.sample_id}-{source}.db", source, memory)
                s = stats.setdefault(source, [0, 0])
                s[0] += built.facts
                s[1] += built.relations
                shim = memory or StoreOnly(built.store)
                for question in conv.questions[:n_questions]:
                    query = prepare(question.question)
                    fts = fts_channel.search(shim, query, CANDIDATES)
                    fct = facts_channel.search(shim, query, CANDIDATES)
                    runs = {
                        "fts alone (facts off)": [fts],
                        f"facts alone ({source})": [fct],
                        f"fts + facts ({source})": [fts, fct],
                    }
                    if memory is not None:
                        from crib_plugin.read.recall import run_channel

                        vec = run_channel(memory, "vector", query, CANDIDATES)
                        runs["fts + vector (facts off)"] = [fts, vec]
                        runs[f"fts + vector + facts ({source})"] = [fts, vec, fct]
                    if source == "rules":
                        runs.pop("fts alone (facts off)")
                    answered[source] = answered.get(source, 0) + bool(fct.facts)
                    for name, results in runs.items():
                        ranked = ranking(results, built.dia_of)
                        systems.setdefault(name, {}).setdefault("all", Scores()).add(ranked, question.evidence)
                        if question.category != 5:
                            wo5.setdefault(name, {}).setdefault("all", Scores()).add(ranked, question.evidence)
                    if source == "observation":
                        n_q += 1
                if memory is not None:
                    memory.close()
                else:
                    built.store.close()
    seconds = time.perf_counter() - started
    keys = [f"R@{k}" for k in KS] + ["hit@10", "nDCG@10", "MRR"]
    lines = [
        f"LoCoMo turn level, {n_q} questions over {len(conversations)} conversations ({seconds:.0f}s)",
        f"facts recorded: observation {stats['observation'][0]} (→ {stats['observation'][1]} relations), "
        f"rules {stats['rules'][0]} (→ {stats['rules'][1]} relations)",
        f"questions where the facts channel returned anything: observation {answered.get('observation', 0)}/{n_q}, "
        f"rules {answered.get('rules', 0)}/{n_q}",
        "",
        "| system | " + " | ".join(keys) + " | R@10 w/o cat.5 |",
        "|---" * (len(keys) + 2) + "|",
    ]
    for name, by in systems.items():
        scores = by["all"]
        values = " | ".join(f"{v:.1f}" for v in scores.row(keys))
        lines.append(f"| {name} | {values} | {wo5[name]['all'].mean('R@10'):.1f} |")
    return "\n".join(lines)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--data", type=Path, default=None)
    parser.add_argument("--conversations", type=int, default=None)
    parser.add_argument("--questions", type=int, default=None)
    parser.add_argument("--vectors", action="store_true", help="also embed turns (MiniLM) and score with vectors")
    parser.add_argument("--skip-throughput", action="store_true")
    parser.add_argument("--skip-locomo", action="store_true")
    args = parser.parse_args(argv)

    if not args.skip_throughput:
        rules = RuleExtractor()
        notes = time_extractor(rules, AGENT_NOTES, repeat=200)
        print(f"rules on agent notes: {notes['texts_per_s']:.0f} texts/s, {notes['facts_per_s']:.0f} facts/s, "
              f"{notes['facts_per_text']:.2f} facts/text, {100 * notes['share_with_fact']:.0f}% of notes yield a fact")
        try:
            turns = [t.text.split(": ", 1)[-1] for c in locomo.load(args.data) for t in c.turns]
            stats = time_extractor(rules, turns)
            print(f"rules on {len(turns)} LoCoMo turns: {stats['texts_per_s']:.0f} texts/s, "
                  f"{stats['facts_per_text']:.3f} facts/turn, {100 * stats['share_with_fact']:.1f}% of turns yield a fact")
        except Exception as exc:  # the data set is optional for this part
            print(f"rules on LoCoMo turns: skipped ({exc})")
        cons = time_consolidation()
        print(f"consolidation: {cons['record_facts_per_s']:.0f} facts/s inside record_facts, "
              f"{cons['facts_per_s']:.0f} facts/s with one committed transaction per 3-fact entry "
              f"({cons['facts']} facts → {cons['relations']} relations, {cons['closed']} closed by supersession)")
        print(ollama_throughput())
        print()
    if not args.skip_locomo:
        print(run_locomo(args.data, args.conversations, args.questions, args.vectors))
    return 0


if __name__ == "__main__":
    sys.exit(main())
