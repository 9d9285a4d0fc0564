"""Fact triples: normalisation, consolidation with history, forgetting, the facts channel, `crib facts`.

Most tests drive :func:`crib_plugin.facts.record_facts` against a real store; channel tests go
through :class:`crib_plugin.Memory` with a tiny stub embedder (the vector channel is not under test
here), and the acceptance session of issue 3 runs the real ``crib`` command in fresh processes.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any, Iterator, Sequence

import pytest
from fake_embedder import FakeEmbedder

from crib_plugin.core.records import Triple
from crib_plugin.store import facts as F
from crib_plugin.store import open_store
from crib_plugin.store.facts import (
    clean_name,
    current_facts,
    entity_key,
    fact_history,
    facts_command_output,
    forget_entry,
    match_facts,
    normalise_predicate,
    record_facts,
    single_valued,
)
from crib_plugin.store.facts import consolidate as facts_consolidate

T1 = "2026-01-05T09:00:00Z"
T2 = "2026-02-10T09:00:00Z"
T3 = "2026-03-15T09:00:00Z"


# -- helpers -------------------------------------------------------------------------------------


@pytest.fixture
def store(db: Path) -> Iterator[Any]:
    with open_store(db) as s:
        yield s


def add_entry(store: Any, content: str, created_at: str = T1, type: str = "note") -> int:
    with store.transaction():
        return store.insert_entry(type, content, created_at, {})


def state(store: Any, subject: str, predicate: str, obj: str, created_at: str, type: str = "note") -> tuple[int, list[int]]:
    """Store an entry stating one fact; returns (entry id, relation ids)."""
    entry_id = add_entry(store, f"{subject} {predicate} {obj}", created_at, type)
    with store.transaction():
        ids = record_facts(store, entry_id, [Triple(subject, predicate, obj)], valid_from=created_at, entry_type=type)
    return entry_id, ids


def rows(store: Any, sql: str, params: Sequence[Any] = ()) -> list[tuple[Any, ...]]:
    return store.execute(sql, params)


def triples_of(facts: Sequence[Any]) -> list[tuple[str, str, str]]:
    return [(f.subject, f.predicate, f.object) for f in facts]


@pytest.fixture
def mem(db: Path, fake_embedder: Any) -> Iterator[Any]:
    from crib_plugin import Memory

    with Memory(db) as m:
        yield m


# -- normalisation ---------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("a", "b"),
    [
        ("SQLite", "sqlite"),
        ("SQLite", ' "SQLite". '),
        ("clients", "Client"),
        ("the Clients", "client"),
        ("ClientA's", "ClientA"),
        ("policies", "policy"),
        ("APIs", "API"),
        ("Tokyo   office", "the tokyo office"),
        ("we", "our team"),
        ("We", "project"),
    ],
)
def test_entity_keys_fold_spelling_variants(a: str, b: str) -> None:
    assert entity_key(a) == entity_key(b)


@pytest.mark.parametrize("name", ["status", "Net30", "SQLite", "analysis", "Postgres", "Redis", "news", "bus"])
def test_plural_folding_leaves_non_plurals_alone(name: str) -> None:
    assert entity_key(name) == name.casefold()


def test_clean_name_keeps_case_and_strips_decoration() -> None:
    assert clean_name("  'The  Tokyo office'. ") == "Tokyo office"
    assert clean_name("**SQLite**") == "SQLite"
    assert clean_name("ClientA’s") == "ClientA"
    assert clean_name("a") == "a"


@pytest.mark.parametrize(
    ("raw", "expected"),
    [
        ("Payment Terms", "payment_terms"),
        ("pays", "payment_terms"),
        ("uses", "uses"),
        ("use", "uses"),
        ("not_use", "not_uses"),
        ("doesn't use", "not_uses"),
        ("does not use", "not_uses"),
        ("no longer uses", "not_uses"),
        ("don't like", "not_likes"),
        ("is not", "not_is"),
        ("lives in", "lives_in"),
        ("Storage-Backend", "storage_backend"),
        ("is a", "is"),
        ("", ""),
    ],
)
def test_predicates_are_snake_case_with_negation_prefix(raw: str, expected: str) -> None:
    assert normalise_predicate(raw) == expected


@pytest.mark.parametrize(
    ("predicate", "single"),
    [
        ("payment_terms", True), ("lives_in", True), ("storage_backend", True), ("status", True),
        ("owner", True), ("database", True), ("cache_backend", True), ("used_for_testing", True),
        ("maps_to", True),
        ("uses", False), ("likes", False), ("is", False), ("has", False), ("not_uses", False),
        ("attended", False), ("went", False), ("plays", False), ("works_with", False), ("decided", False),
    ],
)
def test_single_valued_rule(predicate: str, single: bool) -> None:
    assert single_valued(predicate) is single


def test_entity_terms_are_stemmed_words() -> None:
    assert F.entity_terms("The Tokyo offices") == ["tokyo", "offic"]
    assert F.entity_terms("valid_until") == ["valid", "until"]  # identifiers keep every part
    assert F.entity_terms("IT") == ["it"]  # a name made only of stop words is still findable


# -- consolidation ---------------------------------------------------------------------------------


def test_same_subject_predicate_new_object_supersedes_and_keeps_history(store: Any) -> None:
    e1, (r1,) = state(store, "ClientA", "pays", "Net30", T1)
    e2, (r2,) = state(store, "ClientA", "pays", "Net45", T2)
    assert r1 != r2
    assert triples_of(current_facts(store, "ClientA")) == [("ClientA", "payment_terms", "Net45")]
    history = fact_history(store, "clienta")
    assert [(f.object, f.valid_from, f.valid_until, f.source_entry_ids) for f in history] == [
        ("Net30", T1, T2, [e1]),
        ("Net45", T2, None, [e2]),
    ]
    # nothing deleted, and the closed relation knows what replaced it
    assert rows(store, "SELECT count(*) FROM relations")[0][0] == 2
    assert rows(store, "SELECT superseded_by FROM relations WHERE id = ?", (r1,))[0][0] == r2


def test_identical_fact_adds_a_source_not_a_duplicate(store: Any) -> None:
    e1, (r1,) = state(store, "SQLite", "is", "embedded database", T1)
    e2, (r2,) = state(store, "sqlite", "is", "Embedded databases", T2)
    assert r1 == r2
    assert rows(store, "SELECT count(*) FROM relations")[0][0] == 1
    assert rows(store, "SELECT count(*) FROM entities")[0][0] == 2
    (fact,) = current_facts(store, "SQLITE")
    assert fact.source_entry_ids == [e1, e2]
    assert fact.valid_from == T1
    assert fact.subject == "SQLite"  # display name: the first form seen


def test_multi_valued_predicates_accumulate(store: Any) -> None:
    state(store, "frontend", "uses", "React", T1)
    state(store, "frontend", "uses", "Vite", T2)
    assert sorted(f.object for f in current_facts(store, "frontend")) == ["React", "Vite"]


def test_correction_supersedes_even_multi_valued_facts(store: Any) -> None:
    state(store, "Caroline", "likes", "jazz", T1)
    state(store, "Caroline", "likes", "painting", T2)
    state(store, "Caroline", "likes", "rock", T3, type="correction")
    assert triples_of(current_facts(store, "Caroline")) == [("Caroline", "likes", "rock")]
    closed = [f for f in fact_history(store, "Caroline") if f.valid_until]
    assert sorted(f.object for f in closed) == ["jazz", "painting"]
    assert all(f.valid_until == T3 for f in closed)


def test_negation_supersedes_and_is_superseded(store: Any) -> None:
    state(store, "we", "uses", "Redis", T1)
    state(store, "we", "no longer uses", "Redis", T2)
    assert triples_of(current_facts(store, "project")) == [("project", "not_uses", "Redis")]
    state(store, "we", "uses", "Redis", T3)
    assert triples_of(current_facts(store, "Redis")) == [("project", "uses", "Redis")]
    assert len(fact_history(store, "Redis")) == 3  # uses, not_uses, uses again: every version kept


def test_role_switch_supersedes_the_previous_backend(store: Any) -> None:
    state(store, "project", "storage_backend", "SQLite", T1)
    state(store, "project", "storage_backend", "Postgres", T2)
    assert triples_of(current_facts(store, "project")) == [("project", "storage_backend", "Postgres")]
    (old,) = [f for f in fact_history(store, "SQLite")]
    assert old.valid_until == T2


def test_out_of_order_import_inserts_the_older_fact_already_closed(store: Any) -> None:
    state(store, "ClientA", "payment_terms", "Net45", T2)
    state(store, "ClientA", "payment_terms", "Net30", T1)  # an older entry imported later
    assert triples_of(current_facts(store, "ClientA")) == [("ClientA", "payment_terms", "Net45")]
    history = {f.object: (f.valid_from, f.valid_until) for f in fact_history(store, "ClientA")}
    assert history == {"Net30": (T1, T2), "Net45": (T2, None)}


def test_unfindable_triples_are_skipped(store: Any) -> None:
    entry_id = add_entry(store, "it is what it is")
    ids = record_facts(
        store, entry_id,
        [Triple("it", "is", "broken"), Triple("", "uses", "x"), Triple("ClientA", "", "Net30"),
         Triple("ClientA", "is", "clienta"), Triple("X", "is", "y" * 200)],
        valid_from=T1,
    )
    assert ids == []
    assert rows(store, "SELECT count(*) FROM entities")[0][0] == 0


def test_duplicates_within_one_entry_count_once(store: Any) -> None:
    entry_id = add_entry(store, "x")
    ids = record_facts(store, entry_id, [Triple("A", "uses", "B"), Triple("a", "use", "b")], valid_from=T1)
    assert len(ids) == 1


def test_record_facts_is_atomic(store: Any, monkeypatch: pytest.MonkeyPatch) -> None:
    entry_id = add_entry(store, "x")
    real = facts_consolidate._consolidate
    calls: list[int] = []

    def failing(*args: Any, **kwargs: Any) -> int:
        calls.append(1)
        if len(calls) == 2:
            raise RuntimeError("disk on fire")
        return real(*args, **kwargs)

    monkeypatch.setattr(facts_consolidate, "_consolidate", failing)
    with pytest.raises(RuntimeError):
        record_facts(store, entry_id, [Triple("A", "uses", "B"), Triple("A", "uses", "C")], valid_from=T1)
    assert rows(store, "SELECT count(*) FROM relations")[0][0] == 0
    assert rows(store, "SELECT count(*) FROM entities")[0][0] == 0


# -- forgetting --------------------------------------------------------------------------------------


def test_forgetting_the_superseding_entry_restores_the_old_fact(store: Any) -> None:
    state(store, "ClientA", "pays", "Net30", T1)
    e2, _ = state(store, "ClientA", "pays", "Net45", T2)
    with store.transaction():
        assert forget_entry(store, e2) == 1
        store.delete_entry(e2)
    (fact,) = fact_history(store, "ClientA")
    assert (fact.object, fact.valid_until) == ("Net30", None)
    assert rows(store, "SELECT count(*) FROM entities WHERE name = 'net45'")[0][0] == 0


def test_forgetting_a_middle_version_hands_history_on(store: Any) -> None:
    state(store, "ClientA", "pays", "Net30", T1)
    e2, _ = state(store, "ClientA", "pays", "Net45", T2)
    _e3, (r3,) = state(store, "ClientA", "pays", "Net60", T3)
    forget_entry(store, e2)
    history = [(f.object, f.valid_until) for f in fact_history(store, "ClientA")]
    assert history == [("Net30", T3), ("Net60", None)]
    assert rows(store, "SELECT superseded_by FROM relations WHERE valid_until IS NOT NULL")[0][0] == r3


def test_forgetting_one_of_two_sources_keeps_the_fact(store: Any) -> None:
    e1, _ = state(store, "Maya", "lives in", "Lisbon", T1)
    e2, _ = state(store, "Maya", "lives in", "Lisbon", T2)
    forget_entry(store, e1)
    (fact,) = current_facts(store, "Maya")
    assert fact.source_entry_ids == [e2]


def test_memory_forget_removes_fact_sources(mem: Any) -> None:
    entry_id = mem.write("Maya lives in Lisbon")
    assert current_facts(mem.store, "Maya")
    assert mem.forget(entry_id)
    assert current_facts(mem.store, "Maya") == []
    assert rows(mem.store, "SELECT count(*) FROM relation_sources")[0][0] == 0


# -- the write path ---------------------------------------------------------------------------------


def test_write_extracts_and_consolidates_with_the_rules_extractor(mem: Any) -> None:
    mem.write("ClientA pays Net30", created_at=T1)
    mem.write("ClientA now pays Net45", created_at=T2)
    assert triples_of(current_facts(mem.store, "ClientA")) == [("ClientA", "payment_terms", "Net45")]
    assert [f.valid_until for f in fact_history(mem.store, "ClientA")] == [T2, None]


def test_readme_example_chose_sqlite_for_storage(mem: Any) -> None:
    mem.write("Chose SQLite for storage. Zero dependencies.", type="decision", created_at=T1)
    assert triples_of(current_facts(mem.store)) == [("project", "storage_backend", "SQLite")]
    mem.write("We switched to Postgres for storage", type="decision", created_at=T2)
    assert triples_of(current_facts(mem.store)) == [("project", "storage_backend", "Postgres")]


def test_correction_entry_through_memory(mem: Any) -> None:
    mem.write("Dana is the project lead", created_at=T1)
    mem.write("type=correction Dana is the tech lead", created_at=T2)
    assert triples_of(current_facts(mem.store, "Dana")) == [("Dana", "is", "tech lead")]


# -- the facts channel ------------------------------------------------------------------------------


def channel_search(mem: Any, prompt: str, limit: int = 50) -> Any:
    from crib_plugin.read.query import prepare

    return mem.registry.channels["facts"].search(mem, prepare(prompt), limit)


def test_channel_answers_a_query_whose_words_appear_in_no_entry(mem: Any) -> None:
    entry_id = mem.write("storage → PostgreSQL", created_at=T1)
    mem.write("The nightly job rotates the logs", created_at=T1)
    # full text cannot find it: "postgres" is not a word of any entry
    assert mem.search("postgres", channels=["fts"]) == []
    result = channel_search(mem, "postgres")
    assert triples_of(result.facts) == [("storage", "maps_to", "PostgreSQL")]
    assert result.facts[0].valid_from == T1 and result.facts[0].source_entry_ids == [entry_id]
    assert [(h.entry_id, h.rank, h.channel) for h in result.hits] == [(entry_id, 1, "facts")]


def test_channel_bridges_canonical_names_and_predicates(mem: Any) -> None:
    mem.write("We chose SQLite for storage", type="decision", created_at=T1)
    # neither "project" nor "backend" is in the entry's text: the fact's structure answers
    assert mem.search("project backend", channels=["fts"]) == []
    result = channel_search(mem, "project backend")
    assert triples_of(result.facts) == [("project", "storage_backend", "SQLite")]
    # "which database …" reaches storage_backend through the predicate's synonyms
    assert triples_of(channel_search(mem, "which database did we pick?").facts) == [
        ("project", "storage_backend", "SQLite")
    ]


def test_channel_possessive_and_current_only(mem: Any) -> None:
    first = mem.write("ClientA pays Net30", created_at=T1)
    second = mem.write("ClientA now pays Net45", created_at=T2)
    result = channel_search(mem, "What are ClientA's payment terms?")
    assert triples_of(result.facts) == [("ClientA", "payment_terms", "Net45")]
    assert [h.entry_id for h in result.hits] == [second]
    assert first not in [h.entry_id for h in result.hits]


def test_channel_matches_stems_and_multi_word_names(mem: Any) -> None:
    mem.write("The Tokyo office uses Slack", created_at=T1)
    mem.write("Tokyo is the capital", created_at=T1)
    mem.write("Our clients pay Net60", created_at=T1)
    assert triples_of(channel_search(mem, "client").facts) == [("clients", "payment_terms", "Net60")]
    facts = channel_search(mem, "what does the tokyo office use?").facts
    # the fully named entity ("Tokyo office") plus the predicate word ranks above the partial one
    assert triples_of(facts)[0] == ("Tokyo office", "uses", "Slack")
    assert ("Tokyo", "is", "capital") in triples_of(facts)
    assert facts[0].score > facts[1].score


def test_channel_ranks_full_name_over_partial_and_predicate_words(store: Any) -> None:
    e1 = add_entry(store, "a")
    record_facts(store, e1, [Triple("ClientA billing contact", "is", "Dana")], valid_from=T1)
    e2 = add_entry(store, "b")
    record_facts(store, e2, [Triple("ClientA", "owner", "Lee")], valid_from=T1)
    e3 = add_entry(store, "c")
    record_facts(store, e3, [Triple("ClientA", "payment_terms", "Net30")], valid_from=T1)
    found = match_facts(store, ["clienta", "payment", "terms"])
    assert triples_of(found.facts) == [
        ("ClientA", "payment_terms", "Net30"),  # full name + both predicate words
        ("ClientA", "owner", "Lee"),  # full name
        ("ClientA billing contact", "is", "Dana"),  # partial name
    ]
    # only the fact that matched two parts is evidence for fusion; the others are context
    assert [e for e, _s in found.entries] == [e3]
    assert [e for e, _s in found.weak_entries] == [e2, e1]


def test_one_prompt_word_in_subject_and_object_is_one_unit(store: Any) -> None:
    """"billing" inside both names is one piece of evidence: the fact is context, not a gate-opening hit."""
    e1 = add_entry(store, "a")
    record_facts(store, e1, [Triple("billing on-call runbook", "is", "docs/runbooks/billing.md")], valid_from=T1)
    found = match_facts(store, ["coupon", "code", "billing", "checkout"])
    assert triples_of(found.facts) == [("billing on-call runbook", "is", "docs/runbooks/billing.md")]
    assert found.entries == [] and [e for e, _s in found.weak_entries] == [e1]
    # two distinct prompt words, one in each name, still make a strong fact
    assert [e for e, _s in match_facts(store, ["billing", "runbooks", "oncall"]).entries] == [e1]


def test_channel_weak_facts_are_context_below_the_floor(mem: Any) -> None:
    entry_id = mem.write("Maya lives in Lisbon", created_at=T1)
    result = channel_search(mem, "what instrument does Maya play?")
    assert triples_of(result.facts) == [("Maya", "lives_in", "Lisbon")]  # context about Maya
    assert [(h.entry_id, h.passed_floor) for h in result.hits] == [(entry_id, False)]
    assert result.dropped_by_floor == 1
    assert mem.search("what instrument does Maya play?", channels=["facts"]) == []
    # asked about Maya alone, the same fact is the answer
    assert [h.passed_floor for h in channel_search(mem, "Maya").hits] == [True]
    assert [h.passed_floor for h in channel_search(mem, "where does Maya live?").hits] == [True]


def test_hub_entities_contribute_few_name_only_facts(store: Any) -> None:
    for i in range(30):
        entry_id = add_entry(store, f"note {i}", f"2026-01-{i + 1:02d}T00:00:00Z")
        record_facts(store, entry_id, [Triple("Caroline", "attended", f"event number {i}")],
                     valid_from=f"2026-01-{i + 1:02d}T00:00:00Z")
    entry_id = add_entry(store, "research", T2)
    record_facts(store, entry_id, [Triple("Caroline", "researched", "adoption agencies")], valid_from=T2)
    found = match_facts(store, ["caroline", "research", "adoption"])
    assert triples_of(found.facts)[0] == ("Caroline", "researched", "adoption agencies")
    assert [e for e, _s in found.entries] == [entry_id]
    assert len(found.facts) == 1 + F.HUB_KEEP and found.dropped == 30 - F.HUB_KEEP
    # the hub's name alone asks for everything about it
    assert len(match_facts(store, ["caroline"]).facts) == 31


def test_channel_prefix_match_both_ways(store: Any) -> None:
    e1 = add_entry(store, "x")
    record_facts(store, e1, [Triple("Postgres", "version", "16")], valid_from=T1)
    assert triples_of(match_facts(store, ["postgresql"]).facts) == [("Postgres", "version", "16")]
    assert match_facts(store, ["pos"]).facts == []  # too short to prefix-match


def test_channel_floor_nothing_named_means_empty(mem: Any) -> None:
    mem.write("ClientA pays Net30", created_at=T1)
    result = channel_search(mem, "how do I bake sourdough bread?")
    assert result.ran and result.facts == [] and result.hits == []
    assert channel_search(mem, "the of and").facts == []


def test_channel_takes_part_in_fusion(mem: Any) -> None:
    entry_id = mem.write("storage → PostgreSQL", created_at=T1)
    hits = mem.search("postgres")
    assert [h.entry.id for h in hits] == [entry_id]
    assert "facts" in hits[0].channels


def test_retrieve_with_only_the_triples_channel(mem: Any, monkeypatch: pytest.MonkeyPatch) -> None:
    mem.write("storage → PostgreSQL", created_at=T1)
    block = mem.retrieve("postgres", channels=["facts"])
    assert "## Known facts" in block
    assert "- storage → maps_to → PostgreSQL (since 2026-01-05)" in block
    assert mem.retrieve("postgres", channels=["fts"]) == ""


# -- `crib facts` -----------------------------------------------------------------------------------


def test_facts_command_output_forms(store: Any) -> None:
    state(store, "ClientA", "pays", "Net30", T1)
    state(store, "ClientA", "pays", "Net45", T2)
    assert facts_command_output(store, "ClientA", False, False) == (
        "ClientA → payment_terms → Net45 (since 2026-02-10) [entries: 2]"
    )
    assert facts_command_output(store, "clienta", True, False).splitlines() == [
        f"ClientA → payment_terms → Net30 (from {T1} until {T2}) [entries: 1]",
        f"ClientA → payment_terms → Net45 (from {T2}, current) [entries: 2]",
    ]
    data = json.loads(facts_command_output(store, None, True, True))
    assert [(d["object"], d["valid_until"], d["sources"]) for d in data] == [("Net30", T2, [1]), ("Net45", None, [2])]
    assert facts_command_output(store, "Nobody", False, False) == "no facts about 'Nobody'"
    assert json.loads(facts_command_output(store, "Nobody", False, True)) == []


# -- the acceptance session of issue 3, through the real command ------------------------------------


def test_issue3_acceptance_session(crib: Any) -> None:
    assert crib("write", input="ClientA pays Net30").returncode == 0
    assert crib("write", input="ClientA now pays Net45").returncode == 0
    retrieved = crib("retrieve", input="what are ClientA's payment terms?")
    assert retrieved.returncode == 0
    known = retrieved.stdout.split("## Known facts", 1)[1].split("##", 1)[0]
    assert "- ClientA → payment_terms → Net45 (since " in known
    assert "Net30" not in known
    history = crib("facts", "ClientA", "--all")
    assert history.returncode == 0, history.stderr
    lines = history.stdout.strip().splitlines()
    assert len(lines) == 2
    assert lines[0].startswith("ClientA → payment_terms → Net30 (from ") and " until " in lines[0]
    assert lines[1].startswith("ClientA → payment_terms → Net45 (from ") and lines[1].endswith("current) [entries: 2]")
    current = json.loads(crib("facts", "ClientA", "--json").stdout)
    assert [(f["object"], f["valid_until"]) for f in current] == [("Net45", None)]


def test_cli_triples_channel_alone_answers_entity_query(crib: Any) -> None:
    assert crib("write", input="storage → PostgreSQL").returncode == 0
    alone = crib("retrieve", input="postgres", env={"CRIB_CHANNEL": "triples"})
    assert "- storage → maps_to → PostgreSQL (since " in alone.stdout
    assert crib("retrieve", input="postgres", env={"CRIB_CHANNEL": "fts"}).stdout == ""


# -- extraction through Ollama (the loopback fake) ---------------------------------------------------


def test_ollama_extraction_end_to_end_is_deterministic(db: Path, fake_ollama: Any, monkeypatch: pytest.MonkeyPatch) -> None:
    from crib_plugin import Memory
    from crib_plugin.models.ollama_models import EXTRACTION_SCHEMA

    monkeypatch.setenv("CRIB_EXTRACTOR", "ollama")
    monkeypatch.setenv("CRIB_WRITE_MODELS", "inline")  # extracted by the write (the background path: test_model_work.py)
    monkeypatch.setenv("OLLAMA_HOST", fake_ollama.host)

    def model(request: Any) -> dict[str, Any]:
        note = request.body["messages"][-1]["content"]
        if "Net30" in note:
            return {"facts": [{"subject": "ClientA", "predicate": "payment terms", "object": "Net30"},
                              {"subject": "we", "predicate": "not_use", "object": "PayPal"}]}
        return {"facts": []}

    fake_ollama.respond_with(model)
    text = "ClientA pays Net30; we do not use PayPal."
    with Memory(db, embedder=FakeEmbedder()) as mem:
        first = mem.write(text, created_at=T1)
        second = mem.write(text, created_at=T2, metadata={"session": 2})  # same text, new entry
        assert first != second
        assert mem.last_write is not None and mem.last_write.facts == 2
        by_entry = {e: triples_of(F.facts_for_entries(mem.store, [e])) for e in (first, second)}
        assert by_entry[first] == by_entry[second] == [
            ("ClientA", "payment_terms", "Net30"),
            ("project", "not_uses", "PayPal"),
        ]
        assert rows(mem.store, "SELECT count(*) FROM relations")[0][0] == 2  # confirmed, not duplicated
    chats = fake_ollama.requests_to("/api/chat")
    assert len(chats) == 2
    for request in chats:
        assert request.body["format"] == EXTRACTION_SCHEMA
        assert request.body["options"]["temperature"] == 0
        assert "seed" in request.body["options"]
    assert chats[0].body == chats[1].body  # the same text → the same request, byte for byte


def test_ollama_bad_output_keeps_the_entry_and_stores_no_facts(db: Path, fake_ollama: Any, monkeypatch: pytest.MonkeyPatch) -> None:
    from crib_plugin import Memory

    monkeypatch.setenv("CRIB_EXTRACTOR", "ollama")
    monkeypatch.setenv("CRIB_WRITE_MODELS", "inline")  # extracted by the write (the background path: test_model_work.py)
    monkeypatch.setenv("OLLAMA_HOST", fake_ollama.host)
    fake_ollama.script("{not json")
    with Memory(db, embedder=FakeEmbedder()) as mem:
        entry_id = mem.write("ClientA pays Net30", created_at=T1)
        assert mem.entry(entry_id) is not None
        assert mem.last_write is not None and mem.last_write.facts == 0
        assert any("facts not extracted" in n for n in mem.last_write.notes)
        assert current_facts(mem.store) == []
