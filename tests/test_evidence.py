"""Issue 12: per-entry relevance, the time window as evidence, superseded entries, CRIB_NOW, facts
that name the real subject."""

from __future__ import annotations

from typing import Any

import pytest

CODING = [
    ("decision", "tally stores every log event in one SQLite file per repository, in WAL mode."),
    ("note", "The docs site is built with mkdocs-material and published on every tag."),
    ("error", "docket failed with ERR_DOCKET_LEASE_7 when two workers claimed the same job; fixed with a compare-and-swap update."),
    ("note", "Python dependencies are pinned with uv lock; upgrades happen on the first Monday of each month."),
    ("decision", "All dates are stored as ISO 8601 strings in UTC, never in local time."),
    ("note", "The release checklist: bump the version, update the changelog, tag, push."),
]


def _write(memory: Any, items: list[tuple[str, str]], start_day: int = 1) -> list[int]:
    from crib_plugin.memory import NewEntry

    reports = memory.write_many([NewEntry(t, k, f"2026-02-{start_day + i:02d}T10:00:00Z") for i, (k, t) in enumerate(items)])
    return [r.entry_id for r in reports]


def test_block_holds_only_entries_with_their_own_evidence(memory) -> None:
    ids = _write(memory, CODING)
    memory.retrieve("ERR_DOCKET_LEASE_7")
    kept = [h.entry.id for h in memory.last_retrieval.hits]
    assert kept == [ids[2]]
    evidence, cut = memory.last_retrieval.evidence
    assert "per-entry cut" in cut.line()
    assert any(not ev.kept for ev in evidence) or len(evidence) == 1


def test_per_entry_cut_can_be_switched_off_for_measurement(memory) -> None:
    _write(memory, CODING)
    with_cut = memory.select(memory.recall("where do the log events of tally live?"))
    without = memory.select(memory.recall("where do the log events of tally live?"), per_entry=False)
    assert 1 <= len(with_cut.hits) <= len(without.hits)
    assert without.evidence is None


def test_the_per_entry_cut_reads_an_entrys_first_scan_chars_only(memory, monkeypatch) -> None:
    """A hit's coverage is read from its first MAX_SCAN_CHARS, as the gate reads it: an older
    store's 5 MB entry cost the cut 1.7 s of stemming a prompt."""
    from crib_plugin.core.limits import MAX_ENTRY_CHARS, MAX_SCAN_CHARS
    from crib_plugin.read.gate import evidence

    _write(memory, CODING + [("note", "tally tally " + "filler words about nothing " * (MAX_ENTRY_CHARS // 30))])
    read: list[int] = []
    real = evidence._stems
    monkeypatch.setattr(evidence, "_stems", lambda text: read.append(len(text)) or real(text))
    memory.retrieve("where do the log events of tally live?")
    assert read and max(read) <= MAX_SCAN_CHARS + 100  # the content's head, its type and its cue


def test_explain_shows_each_entry_evidence_and_the_cut(crib) -> None:
    for kind, text in CODING:
        crib("write", "--type", kind, input=text)
    result = crib("retrieve", "--explain", input="ERR_DOCKET_LEASE_7 again")
    assert "per-entry cut" in result.stderr
    assert "relative" in result.stderr and "coverage" in result.stderr and "channels" in result.stderr


def test_prompt_kind() -> None:
    from crib_plugin.read.gate.evidence import prompt_kind

    assert prompt_kind("set up the background job for invoice emails") == "task"
    assert prompt_kind("why is CI red on the macOS runner?") == "question"
    assert prompt_kind("which linter do we use") == "question"
    assert prompt_kind("网页界面用什么技术写的？") == "question"  # a fullwidth question mark
    assert prompt_kind("これはバグですか") == "question"


def test_time_window_opens_the_gate(crib) -> None:
    """"what did we change in the infrastructure last month?" was parsed right, then the gate shut."""
    crib("write", "--type", "decision", "--created-at", "2026-02-12T10:00:00Z", input="We moved the CI runners to Hetzner.")
    crib("write", "--created-at", "2025-11-12T10:00:00Z", input="The README was reflowed.")
    prompt = "what did we change in the infrastructure last month?"
    opened = crib("retrieve", "--now", "2026-03-10T12:00:00Z", input=prompt)
    assert "Hetzner" in opened.stdout and "README" not in opened.stdout
    # the same prompt a month later names another window: nothing in it, nothing injected
    shut = crib("retrieve", input=prompt, env={"CRIB_NOW": "2026-05-10T12:00:00Z"})
    assert shut.stdout == ""


def _dated_store(memory: Any, monkeypatch: pytest.MonkeyPatch, *entries: tuple[str, str, str]) -> None:
    """``entries`` (text, type, created_at) among twelve unrelated notes spread over January–May,
    with "now" fixed to 2026-11-20 (so "June" is a selective window)."""
    from crib_plugin.memory import NewEntry

    monkeypatch.setenv("CRIB_NOW", "2026-11-20T12:00:00Z")
    filler = [NewEntry(f"The docs page {n} of the handbook was proofread and its links checked.", "note",
                       f"2026-{1 + n % 5:02d}-{1 + n:02d}T10:00:00Z") for n in range(12)]
    memory.write_many([*(NewEntry(*entry) for entry in entries), *filler])


def test_a_selective_window_answers_from_inside_it(memory, monkeypatch) -> None:
    """"which tally errors did we hit in June?": the October error is as similar, but outside June."""
    _dated_store(
        memory, monkeypatch,
        ("tally error: the importer crashed with ERR_TALLY_OFFSET on empty log files; fixed by skipping them.",
         "error", "2026-06-10T10:00:00Z"),
        ("tally error: the importer crashed with ERR_TALLY_ENCODING on Latin-1 log files; fixed by decoding them.",
         "error", "2026-10-10T10:00:00Z"),
    )
    memory.retrieve("which tally importer errors did we hit in June?")
    shown = [h.entry.content for h in memory.last_retrieval.hits]
    assert any("OFFSET" in c for c in shown)
    assert not any("ENCODING" in c for c in shown)
    memory.retrieve("which tally importer errors did we hit?")  # no window: both
    assert sum("tally error" in h.entry.content for h in memory.last_retrieval.hits) == 2


@pytest.mark.parametrize("prompt", ["which tally importer bugs did we fix in June?", "what tally importer problems came up in June?"])
def test_a_window_prompt_naming_a_type_keeps_that_type(memory, monkeypatch, prompt: str) -> None:
    _dated_store(
        memory, monkeypatch,
        ("tally importer: crashed with ERR_TALLY_OFFSET on empty log files; fixed by skipping them.",
         "error", "2026-06-10T10:00:00Z"),
        ("tally importer: log files are read in 64 KiB chunks and empty files are skipped.",
         "decision", "2026-06-12T10:00:00Z"),
    )
    memory.retrieve(prompt)
    assert [h.entry.type for h in memory.last_retrieval.hits] == ["error"]
    memory.retrieve("what did we do on the tally importer in June?")  # no type named: both
    assert {h.entry.type for h in memory.last_retrieval.hits} == {"error", "decision"}


@pytest.mark.parametrize(("prompt", "types"), [
    ("what did we decide in June?", {"decision"}),
    ("what happened in June?", {"error", "decision"}),
])
def test_a_prompt_asking_by_time_alone_is_answered_from_its_window(memory, monkeypatch, prompt: str, types: set[str]) -> None:
    """"what did we decide yesterday?" says when (and what kind) and nothing else: no word or cosine
    of an entry can match it, so the window's entries (of the named type) are the answer."""
    _dated_store(
        memory, monkeypatch,
        ("tally importer: crashed with ERR_TALLY_OFFSET on empty log files; fixed by skipping them.",
         "error", "2026-06-10T10:00:00Z"),
        ("The release notes are written by whoever cuts the release.", "decision", "2026-06-12T10:00:00Z"),
        ("Deployments freeze on Fridays after noon.", "decision", "2026-10-12T10:00:00Z"),
    )
    memory.retrieve(prompt)
    hits = memory.last_retrieval.hits
    assert {h.entry.type for h in hits} == types
    assert all(h.entry.created_at.startswith("2026-06") for h in hits)


def test_asks_by_time_alone() -> None:
    from crib_plugin.read.gate.relevance import asks_by_time_alone
    from crib_plugin.read.query import prepare

    assert asks_by_time_alone(prepare("what did we decide yesterday?"))
    assert asks_by_time_alone(prepare("What happened last week?"))
    assert not asks_by_time_alone(prepare("what did we change in the infrastructure last month?"))
    assert not asks_by_time_alone(prepare("what did we decide?"))  # no time: nothing to answer from


def test_a_window_holding_most_of_the_store_opens_nothing(memory, monkeypatch) -> None:
    monkeypatch.setenv("CRIB_NOW", "2026-03-01T12:00:00Z")
    _write(memory, CODING)
    memory.retrieve("what movies came out this year?")
    assert memory.last_retrieval.gate.window == ()  # "this year" holds every entry: no evidence
    assert memory.last_retrieval.hits == []


def test_crib_now_fixes_time_expressions(monkeypatch) -> None:
    from crib_plugin.core.errors import ConfigError
    from crib_plugin.core.timeutil import now_iso
    from crib_plugin.read.temporal import parse_time_range

    monkeypatch.setenv("CRIB_NOW", "2026-03-10T12:00:00Z")
    assert parse_time_range("last month") == ("2026-02-01T00:00:00Z", "2026-03-01T00:00:00Z")
    assert now_iso() == "2026-03-10T12:00:00Z"
    monkeypatch.setenv("CRIB_NOW", "soon")
    with pytest.raises(ConfigError):
        now_iso()


def test_correction_supersedes_the_entry_it_corrects(memory) -> None:
    old = memory.write("type=decision The MSRV of the parser crate is Rust 1.74.", created_at="2026-01-05T10:00:00Z")
    memory.write("type=note The docs site is built with mkdocs.", created_at="2026-01-06T10:00:00Z")
    new = memory.write("type=correction The MSRV of the parser crate is now Rust 1.80, not 1.74.", created_at="2026-03-01T10:00:00Z")
    assert memory.store.successor_of(old) == new
    assert memory.store.successor_of(new) is None


def test_a_superseded_entry_is_never_shown_alone(memory) -> None:
    from crib_plugin.core.records import Hit, Query, Retrieval

    old = memory.write("type=decision The MSRV of the parser crate is Rust 1.74.", created_at="2026-01-05T10:00:00Z")
    new = memory.write("type=correction The MSRV of the parser crate is now Rust 1.80, not 1.74.", created_at="2026-03-01T10:00:00Z")
    given = Retrieval(query=Query(text="msrv"), hits=[Hit(memory.entry(old), 1.0)])
    from crib_plugin.write.supersede import attach_successors

    retrieval = attach_successors(memory, given)
    assert [h.entry.id for h in retrieval.hits] == [old, new] and retrieval.hits[0].entry.superseded_by == new
    assert given.hits[0].entry.superseded_by is None  # marked on a copy: the stage before still holds the entry as it was
    block = memory.render(retrieval)
    assert "superseded]" in block and "1.80" in block


def test_fact_names_the_billing_service(crib) -> None:
    crib("write", input="type=decision We chose PostgreSQL for the billing service.")
    result = crib("retrieve", input="billing service", env={"CRIB_CHANNEL": "triples"})
    assert "billing service → uses → PostgreSQL" in result.stdout


def test_x_over_y_is_two_entities() -> None:
    from crib_plugin.models.rules import RuleExtractor

    triples = list(RuleExtractor().extract("We chose FastAPI over Flask for the API."))
    assert ("API", "uses", "FastAPI") in [(t.subject, t.predicate, t.object) for t in triples]
    assert ("API", "not_uses", "Flask") in [(t.subject, t.predicate, t.object) for t in triples]


def _hit(entry_id: int, score: float, evidence: float) -> Any:
    from crib_plugin.core.records import Entry, Hit

    entry = Entry(id=entry_id, content=f"entry {entry_id}", type="note", created_at="2026-02-01T10:00:00Z")
    return Hit(entry, score, {}, evidence)


def test_the_cut_judges_each_hit_on_the_fusions_evidence_not_on_the_order() -> None:
    """The fusion orders by one sum and judges by another (crib_plugin.read.fusion): a hit the order
    put first with little evidence is measured against the best evidence, not the other way round."""
    from crib_plugin.read.gate.evidence import RELATIVE_CUT, Cut, Evidence, _keep

    hits = [_hit(1, 1.0, 0.3), _hit(2, 0.9, 1.0)]  # the order's first has 30 % of the best evidence
    evidence = [Evidence(h.entry.id, 0.0, 0.7, None, 1, False) for h in hits]
    cut = Cut("task", RELATIVE_CUT, None, None, 0.6, 0.5)
    kept = _keep(hits, evidence, [["coverage ≥ cut"], ["coverage ≥ cut"]], [0, 1], cut)
    assert [h.entry.id for h in kept] == [2]
    assert evidence[0].relative == pytest.approx(0.3) and not evidence[0].kept
    assert evidence[1].reason.startswith("best evidenced hit")
    # without an evidence sum (a hit made elsewhere) the score is what is judged
    plain = [_hit(1, 1.0, 0.3), _hit(2, 0.9, 1.0)]
    for hit in plain:
        hit.evidence = None
    assert [h.entry.id for h in _keep(plain, evidence, [["c"], ["c"]], [0, 1], cut)] == [1, 2]


def test_when_the_gate_opened_on_other_evidence_the_hit_with_the_most_evidence_stands_alone(memory) -> None:
    """A gate opened by the facts channel alone: no hit has evidence of its own, and the one kept is
    the hit with the most fusion evidence — the facts channel's own hit, which the order (that
    leaves that channel out) puts last."""
    from crib_plugin.core.records import Hit, Retrieval
    from crib_plugin.read.gate.evidence import cut_entries
    from crib_plugin.read.query import prepare

    ids = _write(memory, CODING)
    entries = memory.store.get_entries(ids)
    hits = [Hit(entries[ids[0]], 0.02, {}, 0.02), Hit(entries[ids[1]], 0.01, {}, 0.01), Hit(entries[ids[2]], 0.0, {}, 0.03)]
    retrieval = Retrieval(query=prepare("zebra quantum"), hits=hits)
    kept, evidence, _cut = cut_entries(memory, retrieval, gate=None, floor=None)
    assert [h.entry.id for h in kept] == [ids[2]]
    assert "best hit" in next(ev.reason for ev in evidence if ev.entry_id == ids[2])


def test_a_fact_is_shown_only_when_an_entry_shown_in_full_stated_it(monkeypatch: pytest.MonkeyPatch) -> None:
    """A match of the facts channel alone opens the gate but does not put its facts in the block: on
    conversational stores those were extractor noise ("project → evening → …") costing tokens."""
    from types import SimpleNamespace

    from crib_plugin.core.records import ChannelHit, ChannelResult, Fact, Query, Retrieval
    from crib_plugin.read import selection

    shown, matched = _hit(1, 1.0, 1.0), _hit(2, 0.9, 0.9)
    monkeypatch.setattr(selection, "cut_entries", lambda memory, retrieval, **kw: ([shown], [], None))
    facts = [Fact(1, "billing service", "uses", "PostgreSQL", "2026-02-01", source_entry_ids=[1]),
             Fact(2, "project", "evening", "dinner at the lodge", "2026-02-01", source_entry_ids=[2])]
    channel = ChannelResult(channel="facts", hits=[ChannelHit(2, 1, 3.0, "facts", passed_floor=True)], facts=facts)
    given = Retrieval(query=Query(text="x"), channels=[channel], hits=[shown, matched], facts=facts)
    out = selection.cut_per_entry(SimpleNamespace(), given, SimpleNamespace(vector_gate=None, time_only=False, distinctive={}))
    assert [f.id for f in out.facts] == [1]
    assert any("no entry shown stated it" in note for _, note in out.notes)
