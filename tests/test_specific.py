"""Issue 12: a task prompt's cosine counts only when it is distinctive (crib_plugin.specific).

On a project's memory every prompt about the project resembles much of the store; a task that
names something no memory holds ("write a Dockerfile for logsift") must get nothing, while a task
that shares a specific word with its memory, or a question, is still answered.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from crib_plugin.core.records import ChannelHit, ChannelResult, Entry, Hit, Query, Retrieval
from crib_plugin.read.gate.specific import CROWD_MARGIN, crowd_level, distinctive, specific_terms

# one worker runs the whole module under -n (pyproject: --dist loadgroup): its module fixture imports the logsift store
pytestmark = pytest.mark.xdist_group("test_specific")

LOGSIFT = Path(__file__).resolve().parents[1] / "crib_eval" / "data" / "coding" / "memories-logsift.jsonl"


@pytest.fixture(scope="module")
def logsift(tmp_path_factory: pytest.TempPathFactory) -> Any:
    """A store holding the coding set's logsift memories (one Rust CLI project, ~55 entries)."""
    import json

    from crib_plugin import Memory
    from crib_plugin.memory import NewEntry

    db = tmp_path_factory.mktemp("logsift") / "crib.db"
    rows = [json.loads(line) for line in LOGSIFT.read_text(encoding="utf-8").splitlines() if line.strip()]
    with Memory(db) as memory:
        memory.write_many([NewEntry(r["content"], r["type"], r["created_at"]) for r in rows])
    return db


def _retrieve(db: Path, text: str) -> Any:
    from crib_plugin import Memory

    with Memory(db) as memory:
        memory.retrieve(text)
        return memory.last_retrieval


@pytest.mark.parametrize(
    "prompt",
    ["write a Dockerfile for logsift", "make logsift show a progress bar while reading from stdin"],
)
def test_a_task_that_only_names_the_project_gets_nothing(logsift: Path, prompt: str) -> None:
    retrieval = _retrieve(logsift, prompt)
    assert retrieval.hits == []
    assert "distinctive" in retrieval.gate.reason


def test_a_task_sharing_a_specific_word_is_answered(logsift: Path) -> None:
    retrieval = _retrieve(logsift, "add an --exclude flag to the logsift grep subcommand, next to the others in src/cli")
    assert retrieval.hits
    assert any("clap" in h.entry.content for h in retrieval.hits)


def test_specific_terms_are_the_rare_ones(logsift: Path) -> None:
    from crib_plugin import Memory

    with Memory(logsift) as memory:
        found = {alts[0][0] for alts in specific_terms(memory, "make logsift read hdrhistogram percentiles from journald")}
    assert "hdrhistogram" in found  # in one or two entries
    assert "logsift" not in found  # in most of them
    assert "journald" not in found  # in none: it can match nothing


def test_crowd_level() -> None:
    assert crowd_level([]) is None and crowd_level([0.5]) is None
    assert crowd_level([0.9, 0.5]) == 0.5  # a small store: its last hit
    assert crowd_level([1 - i / 100 for i in range(30)]) == pytest.approx(0.91)  # the 10th


def _synthetic(text: str, cosines: list[float]) -> Retrieval:
    hits = [ChannelHit(entry_id=i + 1, rank=i + 1, score=c, channel="vector") for i, c in enumerate(cosines)]
    entries = [Hit(Entry(id=i + 1, type="note", content=f"memory number {i + 1}", created_at="2026-01-01T00:00:00Z"), c)
               for i, c in enumerate(cosines)]
    return Retrieval(query=Query(text=text), hits=entries, channels=[ChannelResult("vector", hits)])


class _NoTerms:
    """A memory whose store knows no term (so only the crowd can make a hit distinctive)."""

    class store:  # noqa: N801 - the attribute the protocol names
        @staticmethod
        def count_entries() -> int:
            return 100

        @staticmethod
        def term_document_frequency(stem: str) -> int:
            return 0


def test_a_task_hit_is_distinctive_above_the_crowd_a_question_hit_always() -> None:
    crowd = [0.40] * 20
    task = _synthetic("wire the thing into the other thing", [0.40 + CROWD_MARGIN + 0.05, 0.45, *crowd])
    assert set(distinctive(_NoTerms(), task, gate=0.42)) == {1}  # type: ignore[arg-type]
    question = _synthetic("which thing is wired into the other thing?", [0.45, 0.44, *[0.43] * 20])
    assert set(distinctive(_NoTerms(), question, gate=0.42)) == set(range(1, 23))  # type: ignore[arg-type]
    flat_task = _synthetic("wire the thing into the other thing", [0.45, 0.44, *[0.43] * 20])
    assert distinctive(_NoTerms(), flat_task, gate=0.42) == {}  # type: ignore[arg-type]


def test_a_task_fact_match_needs_a_specific_word(memory) -> None:
    """A fact matched on "atlas" and "web app" — words of the whole project — opens nothing for a task."""
    from crib_plugin.memory import NewEntry
    from crib_plugin.read.gate.specific import facts_bear

    memory.write_many([NewEntry(f"The atlas web app {what}.", "note", f"2026-03-{1 + i:02d}T10:00:00Z") for i, what in enumerate([
        "is built with Vite", "uses TanStack Router", "reads feature flags from Unleash", "is styled with Tailwind",
        "talks to the api through tRPC", "ships source maps to Sentry", "has its e2e tests in Playwright",
        "stores sessions in Redis", "is deployed by ArgoCD", "keeps translations in locales/en.json",
    ])])
    ids = [e.id for e in memory.store.get_entries(range(1, 11)).values()]
    router = next(i for i, e in memory.store.get_entries(ids).items() if "TanStack" in e.content)

    def retrieval(text: str) -> Retrieval:
        return Retrieval(query=Query(text=text), hits=[Hit(memory.entry(i), 1.0) for i in ids])

    assert not facts_bear(memory, retrieval("add a Spanish translation to the atlas web app"), [router])
    assert facts_bear(memory, retrieval("add a route for invoices to the TanStack router of the atlas web app"), [router])
    assert facts_bear(memory, retrieval("what does the atlas web app use?"), [router])  # a question: as before


def test_a_rare_verb_counts_like_any_rare_word(memory) -> None:
    """The list of task verbs that were never specific is gone (it cost nothing to remove: coding
    dev precision −0.1, nothing else): "add" in one memory of twenty is as specific as "Sentry"."""
    from crib_plugin.memory import NewEntry

    memory.write_many([NewEntry(f"The report job {n} runs nightly.", "note", f"2026-03-{1 + n:02d}T10:00:00Z") for n in range(19)])
    memory.write("We add a Sentry tag to every failed webhook.", created_at="2026-03-25T10:00:00Z")
    found = {alts[0][0] for alts in specific_terms(memory, "add a Sentry tag to the export")}
    assert {"sentri", "add"} <= found


def test_a_confident_vector_channel_counts_its_best_hit_fully() -> None:
    """A vector top far above the crowd gets full strength in the fusion (like full text's best hit);
    a crowded top keeps the headroom strength it had."""
    from crib_plugin.read.channels.vectors import confident_strengths

    def hits(cosines: list[float], floor: float) -> list[ChannelHit]:
        out = [ChannelHit(entry_id=i + 1, rank=i + 1, score=c, channel="vector") for i, c in enumerate(cosines)]
        for h in out:
            h.strength = max(0.0, (h.score - floor) / (1.0 - floor))  # the channel's headroom strength
        return out

    standing = hits([0.60, 0.45, *[0.30] * 20], floor=0.32)
    confident_strengths(standing, 0.32)
    assert standing[0].strength == pytest.approx(1.0)
    assert standing[1].strength == pytest.approx((0.45 - 0.32) / (0.60 - 0.32))
    crowded = hits([0.60, *[0.58] * 20], floor=0.32)
    before = [h.strength for h in crowded]
    confident_strengths(crowded, 0.32)
    assert crowded[0].strength == pytest.approx(max(before[0], 1.0 * (0.02 / 0.25)))
    assert crowded[0].strength < 0.5


def test_a_vector_top_below_the_gate_is_no_evidence_by_its_crowd_margin_alone() -> None:
    """A task phrased unlike its memory: cosine 0.38 (floor 0.32, gate 0.42), 0.23 above the
    prompt's crowd. No entry in full on that alone — the rule that made it evidence for tasks was
    removed: the pointer tier's maybe gate carries such a prompt (coding hit ∪ pointers unchanged)."""
    from crib_plugin.read.gate.relevance import vector_extras

    cosines = [0.38, 0.36, *[0.15] * 20]
    task = _synthetic("the crash when cutting long lines that contain accented letters", cosines)
    assert vector_extras(task, 0.32, entries=200) == {}
    question = _synthetic("why did it crash when cutting long lines with accented letters?", cosines)
    assert vector_extras(question, 0.32, entries=200) == {}


def test_a_word_in_four_percent_of_the_store_is_its_vocabulary_not_specific(memory) -> None:
    """A term is specific when at most 3 % of the entries hold it (seventh pass: at 5 %, words such
    as "log" or "cluster" that a few memories of a project share opened the gate for tasks no
    memory answers; coding dev silence 81.2 → 93.8 %, hit ∪ pointers unchanged on both splits)."""
    from crib_plugin.memory import NewEntry

    rows = [f"The nightly report job number {n} runs at two." for n in range(93)]
    rows += [f"Zeppelin mooring note {n}." for n in range(4)] + [f"Quokka habitat note {n}." for n in range(3)]
    memory.write_many([NewEntry(text, "note", f"2026-03-{1 + n % 28:02d}T10:00:00Z") for n, text in enumerate(rows)])
    found = {alts[0][0] for alts in specific_terms(memory, "move the zeppelin next to the quokka")}
    assert "quokka" in found  # in 3 of 100 entries
    assert "zeppelin" not in found  # in 4 of 100


def test_the_gate_asks_facts_bear_before_a_fact_match_opens_it_for_a_task(memory) -> None:
    """The relevance gate itself consults :func:`facts_bear`: with only the facts channel running, a
    task whose fact match shares nothing but the project's own words ("atlas web app uses") injects
    nothing, while one naming a specific word of a matched memory (Zod) does."""
    from crib_plugin.memory import NewEntry
    from crib_plugin.read.gate.relevance import decide

    tools = ["Vite", "TanStack Router", "Unleash", "Tailwind", "tRPC", "Sentry", "Playwright", "Redis", "ArgoCD", "Zod"]
    memory.write_many([NewEntry(f"The atlas web app uses {tool}.", "note", f"2026-03-{1 + i:02d}T10:00:00Z") for i, tool in enumerate(tools)])
    vague = memory.recall("make the atlas web app use the new one", channels=["facts"])
    assert any(h.passed_floor for c in vague.channels for h in c.hits)  # the facts channel matched on two counts
    decision = decide(memory, vague)
    assert not decision.facts and not decision.open, decision.reason
    assert memory.retrieve("make the atlas web app use the new one", channels=["facts"]) == ""
    specific = decide(memory, memory.recall("make the atlas web app use Zod for the forms", channels=["facts"]))
    assert specific.facts and specific.open, specific.reason
