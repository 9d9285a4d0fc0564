"""The ``Store`` contract suite: what every crib storage backend must do, backend-agnostic.

A backend's test module subclasses :class:`StoreContract` and provides one fixture,
``open_backend``: a callable ``open_backend(readonly=False) -> Store`` that opens the *same*
fresh store each time it is called (so a test can reopen it read-only). Everything here goes
through the :class:`~crib_plugin.store.base.Store` methods only — no SQL — so the PostgreSQL
backend runs the very same tests (``tests/test_store_contract_sqlite.py`` shows the pattern).
"""

from __future__ import annotations

import struct
from collections.abc import Callable, Iterator
from typing import Any

import pytest

from crib_plugin.core.errors import StoreError
from crib_plugin.core.records import Triple
from crib_plugin.store import facts
from crib_plugin.store.base import Store

Opener = Callable[..., Store]
T0 = "2026-01-01T00:00:00Z"


def vec(*values: float) -> bytes:
    """A little-endian float32 vector, as the contract passes vectors."""
    return struct.pack(f"<{len(values)}f", *values)


def add(store: Store, content: str, *, type: str = "note", at: str = T0, **metadata: Any) -> int:
    with store.transaction():
        return store.insert_entry(type, content, at, dict(metadata))


class StoreContract:
    """Backend-agnostic tests; a subclass supplies the ``open_backend`` fixture."""

    @pytest.fixture
    def store(self, open_backend: Opener) -> Iterator[Store]:
        store = open_backend()
        yield store
        store.close()

    # -- identity ------------------------------------------------------------------------------

    def test_is_a_store(self, store: Store) -> None:
        assert isinstance(store, Store)
        assert store.backend and not store.readonly and store.schema_version() > 0

    # -- entries -------------------------------------------------------------------------------

    def test_entries_round_trip(self, store: Store) -> None:
        first = add(store, "Chose SQLite for storage.", at="2026-01-01T00:00:00Z", source="cli")
        second = add(store, "Deploy on Fridays is banned.", type="decision", at="2026-01-03T00:00:00Z")
        third = add(store, "Tests run with pytest.", at="2026-01-02T00:00:00Z")
        assert first < second < third
        entry = store.get_entry(first)
        assert entry is not None
        assert (entry.type, entry.content, entry.created_at, entry.metadata) == ("note", "Chose SQLite for storage.", T0, {"source": "cli"})
        assert entry.content_hash
        assert store.get_entry(10**9) is None
        assert set(store.get_entries([first, third, 10**9])) == {first, third}
        assert [e.id for e in store.iter_entries()] == [first, second, third]
        assert [e.id for e in store.iter_entries("created_at")] == [first, third, second]
        assert [e.id for e in store.recent_entries(2)] == [second, third]
        assert [e.id for e in store.recent_entries(5, ["decision"])] == [second]
        assert store.count_entries() == 3

    def test_duplicates_match_type_content_and_metadata(self, store: Store) -> None:
        entry_id = add(store, "Chose  SQLite\nfor storage.", thread="t")
        assert store.find_duplicate("note", "Chose SQLite for storage.", {"thread": "t"}) == entry_id
        assert store.find_duplicate("note", "Chose SQLite for storage.", {}) is None
        assert store.find_duplicate("decision", "Chose SQLite for storage.", {"thread": "t"}) is None

    def test_same_text_is_found_whatever_type_and_metadata_among_current_entries(self, store: Store) -> None:
        first = add(store, "Chose  SQLite\nfor storage.", thread="t")
        again = add(store, "Chose SQLite for storage.", type="decision")
        assert store.find_same_text("Chose SQLite for storage.") == [again, first]  # newest first
        assert store.find_same_text("Chose SQLite for storage!") == []
        newer = add(store, "A newer plan.")
        with store.transaction():
            store.supersede_entry(first, newer)
        assert store.find_same_text("Chose SQLite for storage.") == [again]  # superseded: history, not current

    def test_metadata_can_be_replaced_and_vectors_removed(self, store: Store) -> None:
        entry_id = add(store, "Chose SQLite for storage.")
        plain = add(store, "No cue here.")
        table = store.ensure_vector_space("fake:2", 2)
        with store.transaction():
            assert store.set_metadata(entry_id, {"when": "choosing a database"}) is True
            assert store.set_metadata(10**9, {}) is False
            store.put_vector(table, entry_id, struct.pack("<2f", 1.0, 0.0))
        entry = store.get_entry(entry_id)
        assert entry is not None and entry.metadata == {"when": "choosing a database"} and entry.content == "Chose SQLite for storage."
        assert store.count_with_metadata("when") == 1 and store.count_with_metadata("thread") == 0
        assert store.entries_without_vector(table) == [plain]
        assert store.entries_without_vector(store.ensure_vector_space("fake2:2", 2), with_metadata="when") == [entry_id]
        with store.transaction():
            store.delete_vector(table, entry_id)
        assert store.stored_vectors(table, [entry_id]) == {}

    def test_threads_link_neighbours(self, store: Store) -> None:
        a = add(store, "We talked about the cache.", thread="chat")
        b = add(store, "Redis it is.", thread="chat")
        add(store, "Unrelated.", thread="other")
        assert store.thread_neighbours("chat", a) == (None, b)
        assert store.thread_neighbours("chat", b) == (a, None)
        last = store.last_in_thread("chat")
        assert last is not None and last.id == b
        # the neighbour's text is searchable as context: "cache" finds the reply too
        assert b in {i for i, _ in store.fts_search("cache", 10)}

    def test_deletion_removes_the_entry_from_every_index(self, store: Store) -> None:
        keep = add(store, "Keep this PostgreSQL note.")
        gone = add(store, "PostgreSQL 缓存设计 holds everything.")
        table = store.ensure_vector_space("fake:2", 2)
        with store.transaction():
            store.put_vector(table, gone, vec(1.0, 0.0))
            store.put_vector(table, keep, vec(0.0, 1.0))
            store.queue_embedding(gone, "other:3", "model down")
            store.queue_embedding(gone, "extract", "slow")
        facts.record_facts(store, gone, [Triple("crib", "uses", "PostgreSQL")], valid_from=T0)
        assert store.relations_of_entry(gone)
        with store.transaction():
            facts.forget_entry(store, gone)
            assert store.delete_entry(gone)
        assert store.get_entry(gone) is None and store.count_entries() == 1
        assert [i for i, _ in store.fts_search("postgresql", 10)] == [keep]
        assert gone not in {i for i, _ in store.trigram_search('"ostgre"', 10)}
        assert store.cjk_search('"缓存"', 10) == []
        assert store.like_search(["缓存"], 10) == []
        assert store.stored_vectors(table, [gone]) == {}
        assert [i for i, _ in store.vector_search(table, vec(1.0, 0.0), 5)] == [keep]
        assert store.pending() == [] and store.pending("extract") == []
        assert store.relations_of_entry(gone) == [] and facts.current_facts(store) == []
        assert store.term_document_frequency("postgresql") == 1
        with store.transaction():
            assert store.delete_entry(gone) is False

    def test_supersession_chains(self, store: Store) -> None:
        a, b, c = (add(store, f"Version {n} of the plan.") for n in "abc")
        with store.transaction():
            store.supersede_entry(a, b)
            store.supersede_entry(b, c)
        assert store.successor_of(a) == c and store.successor_of(b) == c and store.successor_of(c) is None
        assert store.superseded([a, b, c]) == {a: b, b: c}
        version = store.entry_version(a)
        assert version is not None and version.superseded_by == b and version.entry.id == a
        assert [v.entry.id for v in store.superseded_by_entry(c)] == [b]
        assert [v.entry.id for v in store.list_versions(include_superseded=False)] == [c]
        assert [e.id for e in store.recent_entries(5, current_only=True)] == [c]
        with store.transaction():
            store.unsupersede(c)  # c is going: b is current again
        assert store.superseded([a, b, c]) == {a: b}
        with store.transaction():
            store.supersede_entry(b, a)  # a cycle must not hang
        assert store.successor_of(a) in {a, b, None}

    def test_list_versions_filters(self, store: Store) -> None:
        old = add(store, "Old.", at="2026-01-01T00:00:00Z")
        new = add(store, "New decision.", type="decision", at="2026-02-01T00:00:00Z")
        assert [v.entry.id for v in store.list_versions()] == [new, old]
        assert [v.entry.id for v in store.list_versions(types=["decision"])] == [new]
        assert [v.entry.id for v in store.list_versions(since="2026-01-15T00:00:00Z")] == [new]
        assert [v.entry.id for v in store.list_versions(until="2026-01-15T00:00:00Z")] == [old]
        assert [v.entry.id for v in store.list_versions(limit=1)] == [new]

    # -- full text -----------------------------------------------------------------------------

    def test_full_text_search_basics(self, store: Store) -> None:
        pg = add(store, "We migrated the database to PostgreSQL.")
        other = add(store, "Lunch was pizza.")
        cjk = add(store, "使用缓存提高速度")
        hits = store.fts_search("postgresql", 10)
        assert [i for i, _ in hits] == [pg] and hits[0][1] > 0
        assert [i for i, _ in store.fts_search("migrate", 10)] == [pg]  # stemmed
        assert [i for i, _ in store.trigram_search('"ostgre"', 10)] == [pg]
        assert [i for i, _ in store.cjk_search('"缓存"', 10)] == [cjk]
        assert [i for i, _ in store.like_search(["pizza"], 10)] == [other]
        assert store.term_document_frequency("postgresql") == 1
        assert store.term_document_frequency("absent") == 0
        more = [add(store, f"PostgreSQL tuning {n}.") for n in range(3)]
        assert store.documents_up_to("PostgreSQL", 10) == 4  # stemmed and folded as full text is
        assert store.documents_up_to("postgresql", 2) == 2  # counted no further than the limit
        assert store.documents_up_to("absent", 10) == 0 and more
        assert store.documents_up_to("postgresql tuning", 10) == 3  # a phrase: words in sequence
        assert store.entries_holding(["tuning", "PostgreSQL"], 10) == more  # every word, any order, oldest first
        assert store.entries_holding(["postgresql"], 2) == [pg, more[0]]  # no more than the limit
        assert store.entries_holding(["postgresql", "absent"], 10) == [] and store.entries_holding([], 10) == []
        with pytest.raises(StoreError):
            store.fts_search('"unterminated', 10)

    def test_full_text_ranks_best_first(self, store: Store) -> None:
        """Full-text hits come best first, scores never rising, and ``limit`` keeps the best: an
        entry holding both query terms, the rare one twice, above those holding one; a rare term
        above a common one (the contract checked sets only, and a reversed order went unseen)."""
        common = [add(store, f"The consumer service number {n} restarts nightly.") for n in range(4)]
        rare = add(store, "Kafka retention is seven days.")
        both = add(store, "Kafka consumer lag: the Kafka consumer group rebalances.")  # last: id order is not rank order
        hits = store.fts_search("kafka OR consumer", 10)
        assert [i for i, _ in hits][:2] == [both, rare] and set(i for i, _ in hits[2:]) == set(common)
        scores = [s for _, s in hits]
        assert scores == sorted(scores, reverse=True) and scores[0] > scores[-1]
        assert [i for i, _ in store.fts_search("kafka OR consumer", 1)] == [both]

    def test_full_text_folds_diacritics(self, store: Store) -> None:
        """"cafe" finds "café" and the other way round, as FTS5's ``remove_diacritics 2`` does."""
        cafe = add(store, "Meet at the Café Müller in Łódź; the naïve façade.")
        add(store, "Lunch was pizza.")
        for query in ("cafe", "café", "CAFÉ", "muller", "naive", "facade", "façade", '"cafe muller"'):
            assert [i for i, _ in store.fts_search(query, 10)] == [cafe], query
        assert store.term_document_frequency("cafe") == 1

    def test_recall_cues_are_a_word_index_of_their_own(self, store: Store) -> None:
        """An entry's cue (metadata ``when``) is found by its words, best first, and follows the
        entry: set after the fact, replaced, forgotten. The entries' own word index and document
        frequencies never see it (the relevance gate's statistics stay those of what memories say)."""
        cued = add(store, "The user's package manager is uv.", when="installing a Python package; running pytest")
        plain = add(store, "Deploys go out on Tuesdays.")
        later = add(store, "Billing emails are sent by Postmark.")
        assert [i for i, _ in store.cue_search("installing OR package", 10)] == [cued]
        assert [i for i, _ in store.cue_search("pytest OR install", 10)] == [cued]  # stemmed
        assert store.cue_search("tuesdays", 10) == [] and store.fts_search("pytest", 10) == []
        assert store.term_document_frequency("pytest") == 0 and store.term_document_frequency("packag") == 1
        with store.transaction():
            store.set_metadata(later, {"when": "sending invoice emails; pytest fixtures for email"})
            store.set_metadata(cued, {"when": "choosing a lockfile"})
        hits = store.cue_search("pytest OR email OR lockfile", 10)
        assert {i for i, _ in hits} == {cued, later} and hits[0][0] == later  # two of its words
        assert [s for _, s in hits] == sorted((s for _, s in hits), reverse=True)
        with store.transaction():
            store.set_metadata(later, {})
            assert store.delete_entry(cued)
        assert store.cue_search("pytest OR email OR lockfile", 10) == [] and plain

    def test_recall_cues_are_counted_up_to_a_limit(self, store: Store) -> None:
        """``cue_documents_up_to`` counts the entries whose cue holds a word or a phrase — in any
        of its forms, never in what the entries say — and stops at the limit."""
        for n in range(4):
            add(store, f"Note {n} about pytest.", when=f"when writing billing code {n}")
        add(store, "Another note.", when="reviewing invoices")
        assert store.cue_documents_up_to("billing", 10) == 4
        assert store.cue_documents_up_to("writes", 10) == 4  # stemmed: "writing"
        assert store.cue_documents_up_to("billing", 2) == 2  # counted no further than the limit
        assert store.cue_documents_up_to("billing code", 10) == 4 and store.cue_documents_up_to("code billing", 10) == 0
        assert store.cue_documents_up_to("invoice", 10) == 1
        assert store.cue_documents_up_to("pytest", 10) == 0 and store.documents_up_to("pytest", 10) == 4
        assert store.cue_documents_up_to("", 10) == 0 and store.cue_documents_up_to("billing", 0) == 0

    # -- vectors -------------------------------------------------------------------------------

    def test_vector_spaces_never_mix_dimensions(self, store: Store) -> None:
        entry = add(store, "A vector holder.")
        two = store.ensure_vector_space("fake:2", 2)
        three = store.ensure_vector_space("fake:3", 3)
        assert two != three
        assert store.ensure_vector_space("fake:2", 5) == two  # existing space kept
        assert store.vector_spaces() == {"fake:2": (two, 2), "fake:3": (three, 3)}
        assert store.vector_space("fake:3") == (three, 3) and store.vector_space("nope") is None
        with pytest.raises(StoreError), store.transaction():
            store.put_vector(two, entry, vec(1.0, 0.0, 0.0))
        assert store.vector_count(two) == 0
        with store.transaction():
            store.put_vector(three, entry, vec(1.0, 0.0, 0.0))
        assert store.vector_count(three) == 1 and store.vector_count(two) == 0

    def test_vector_search_and_similarities(self, store: Store) -> None:
        a, b, c = (add(store, f"Entry {n}.") for n in "abc")
        table = store.ensure_vector_space("fake:2", 2)
        with store.transaction():
            store.put_vector(table, a, vec(1.0, 0.0))
            store.put_vector(table, b, vec(0.0, 1.0))
            store.put_vector(table, a, vec(0.6, 0.8))  # replaces
        hits = store.vector_search(table, vec(0.0, 1.0), 5)
        assert [i for i, _ in hits] == [b, a] and hits[0][1] == pytest.approx(0.0, abs=1e-6)
        assert hits[1][1] == pytest.approx(0.2, abs=1e-5)
        have, sims = store.vector_similarities(table, [b, a, c, a])
        assert have == [b, a] and sims[0][0] == 1.0 and sims[0][1] == pytest.approx(0.8, abs=1e-5)
        assert store.stored_vectors(table, [a, c]) == {a: vec(0.6, 0.8)}
        store.prefetch_vectors(table, [b])
        assert store.stored_vectors(table, [b]) == {b: vec(0.0, 1.0)}
        assert sorted(store.all_vectors(table)) == [(a, vec(0.6, 0.8)), (b, vec(0.0, 1.0))]
        assert store.entries_without_vector(table) == [c]

    def test_claim_without_vector_yields_the_next_batch_and_commits_its_vectors(self, store: Store) -> None:
        a, b, c, d = (add(store, f"Entry {n}.", **({"when": "cue"} if n in "bd" else {})) for n in "abcd")
        table = store.ensure_vector_space("fake:2", 2)
        with store.claim_without_vector(table, 2) as ids:
            assert ids == [a, b]
            with store.transaction():
                store.put_vector(table, a, vec(1.0, 0.0))
        assert store.entries_without_vector(table) == [b, c, d]  # committed on leaving the claim
        with store.claim_without_vector(table, 2, after=b) as ids:
            assert ids == [c, d]
        with store.claim_without_vector(table, 5, with_metadata="when") as ids:
            assert ids == [b, d]
        with store.claim_without_vector(table, 5, after=d) as ids:
            assert ids == []

    # -- the work queue ------------------------------------------------------------------------

    def test_work_queue(self, store: Store) -> None:
        a, b = add(store, "One."), add(store, "Two.")
        table = store.ensure_vector_space("fake:2", 2)
        with store.transaction():
            store.queue_embedding(b, "fake:2", "down")
            store.queue_embedding(a, "fake:2", "down")
            store.queue_embedding(a, "fake:2", "still down")  # one row per entry and space
            store.queue_embedding(a, "extract", "slow")
        assert store.pending("fake:2") == [a, b] and store.pending() == [a, b] and store.pending("extract") == [a]
        assert store.pending_counts() == {"embedding:fake:2": 2, "extraction": 1}
        with store.transaction():
            store.clear_pending(b, "fake:2")
            store.put_vector(table, a, vec(1.0, 0.0))
            store.clear_embedded_pending(table)
        assert store.pending() == [] and store.pending("extract") == [a]

    # -- facts ---------------------------------------------------------------------------------

    def test_facts_validity_and_supersession(self, store: Store) -> None:
        first = add(store, "crib uses SQLite.", at="2026-01-01T00:00:00Z")
        later = add(store, "crib uses PostgreSQL now.", type="correction", at="2026-03-01T00:00:00Z")
        with store.transaction():
            facts.record_facts(store, first, [Triple("crib", "uses", "SQLite")], valid_from="2026-01-01T00:00:00Z")
            facts.record_facts(store, later, [Triple("crib", "uses", "PostgreSQL")], valid_from="2026-03-01T00:00:00Z", entry_type="correction")
        current = facts.current_facts(store)
        assert [(f.object, f.source_entry_ids) for f in current] == [("PostgreSQL", [later])]
        history = facts.fact_history(store, "crib")
        old = next(f for f in history if f.object == "SQLite")
        assert old.valid_until == "2026-03-01T00:00:00Z"
        assert [f.object for f in facts.facts_for_entries(store, [first])] == ["SQLite"]
        assert facts.facts_for_entries(store, [first], current_only=True) == []
        with store.transaction():
            facts.forget_entry(store, later)  # the mistaken correction goes: SQLite holds again
        assert [(f.object, f.valid_until) for f in facts.current_facts(store)] == [("SQLite", None)]

    def test_fact_primitives(self, store: Store) -> None:
        entry = add(store, "Alice Smith owns the cache.")
        with store.transaction():
            alice = store.insert_entity("alice smith", "Alice Smith", "entity", ["alic", "smith"], T0)
            cache = store.insert_entity("cache", "cache", "entity", ["cach"], T0)
            store.add_predicate_terms("owns", ["own"])
            rel = store.insert_relation(alice, "owns", cache, T0, None, None, T0)
            store.add_relation_source(rel, entry, T0)
            store.add_relation_source(rel, entry, T0)  # idempotent
        assert store.entity_id("alice smith") == alice and store.entity_id("bob") is None
        assert store.entities_with_all_terms(["alic", "smith"]) == [alice]
        assert store.entity_terms_matching(["smith", "nope"]) == [("smith", alice)]
        assert store.entity_terms_between("smi", "smj", 10) == [("smith", alice)]
        assert store.entity_term_counts([alice, cache, 999]) == {alice: 2, cache: 1}
        assert store.term_entity_frequencies(["cach", "zzz"]) == {"cach": 1}
        assert store.entity_id_ceiling() >= cache
        assert store.entity_display_names([alice]) == {alice: "Alice Smith"}
        assert store.predicates_with_terms(["own"]) == ["owns"]
        assert store.current_relations(alice, "owns") == [(rel, cache, T0)]
        assert store.current_relations_of([cache], "object", 5) == [(rel, alice, "owns", cache, T0)]
        assert store.current_relations_with_predicate("owns", 5) == [rel]
        assert store.relation_sources([rel]) == {rel: [entry]} and store.relation_has_sources(rel)
        rows = store.fact_rows(relation_ids=[rel])
        assert [(r.subject, r.predicate, r.object, r.valid_until) for r in rows] == [("Alice Smith", "owns", "cache", None)]
        with store.transaction():
            newer = store.insert_relation(alice, "owns", alice, "2026-02-01T00:00:00Z", None, None, T0)
            store.close_relation(rel, "2026-02-01T00:00:00Z", newer)
            store.close_relation(rel, "2027-01-01T00:00:00Z", newer)  # already closed: unchanged
        row = store.relation_row(rel)
        assert row is not None and (row.valid_until, row.superseded_by) == ("2026-02-01T00:00:00Z", newer)
        assert store.supersedes_any(newer) and not store.supersedes_any(rel)
        assert [r.id for r in store.fact_rows(current_only=True)] == [newer]
        with store.transaction():
            store.hand_over_supersession(newer, None, None)
            store.delete_relation(newer)
        assert store.relation_row(rel) == type(row)(alice, cache, None, None)
        assert store.entity_in_use(cache)
        with store.transaction():
            store.delete_entry_sources(entry)
            store.delete_relation(rel)
            store.delete_entity(cache)
        assert not store.relation_has_sources(rel) and store.entity_id("cache") is None

    # -- audit, settings, counts ---------------------------------------------------------------

    def test_audit_rows(self, store: Store) -> None:
        entry = add(store, "Audited.")
        with store.transaction():
            store.record_audit("write", entry, {"type": "note"})
            store.record_audit("reindex", None, {"embedded": 3})
        rows = store.audit_rows()
        assert [(r.action, r.entry_id, r.detail) for r in rows] == [("reindex", None, {"embedded": 3}), ("write", entry, {"type": "note"})]
        assert [r.action for r in store.audit_rows(entry_id=entry)] == ["write"]
        assert len(store.audit_rows(limit=1)) == 1 and rows[0].at

    def test_settings_named_methods(self, store: Store) -> None:
        assert store.embedder_name() is None and store.gate("m:2") is None
        assert store.vector_floor("m:2") is None and store.fusion_weights() == {}
        store.set_embedder_name("minilm")
        store.set_gate("m:2", 0.31234567)
        store.set_vector_floor("m:2", 0.2)
        store.set_fusion_weights({"fulltext": 1.0, "vectors": 0.5})
        assert store.embedder_name() == "minilm"
        assert store.gate("m:2") == pytest.approx(0.3123) and store.gate("other:2") is None
        assert store.vector_floor("m:2") == pytest.approx(0.2)
        assert store.fusion_weights() == {"fulltext": 1.0, "vectors": 0.5}
        store.clear_gate("m:2")
        assert store.gate("m:2") is None and store.vector_floor("m:2") == pytest.approx(0.2)

    def test_counts(self, store: Store) -> None:
        a = add(store, "One.", at="2026-01-01T00:00:00Z")
        b = add(store, "Two.", type="decision", at="2026-02-01T00:00:00Z")
        with store.transaction():
            store.supersede_entry(a, b)
            store.queue_embedding(a, "m:2", "down")
            store.record_audit("write", a, {})
        facts.record_facts(store, b, [Triple("crib", "uses", "SQLite")], valid_from=T0)
        counts = store.counts()
        assert (counts.entries, counts.by_type, counts.superseded) == (2, {"decision": 1, "note": 1}, 1)
        assert (counts.facts, counts.fact_versions, counts.entities, counts.pending, counts.audit_rows) == (1, 1, 2, 1, 1)
        assert (counts.first, counts.last) == ("2026-01-01T00:00:00Z", "2026-02-01T00:00:00Z")

    def test_storage_bytes_grow_with_the_store(self, store: Store) -> None:
        """``crib stats``'s size: a file's bytes, or a server's crib tables' (never 0 for a server)."""
        before = store.storage_bytes()
        assert before > 0
        with store.transaction():
            for i in range(300):
                store.insert_entry("note", f"Entry {i}: " + "padding words for the size " * 40, T0, {})
        assert store.storage_bytes() > before + 100_000

    def test_entries_record_their_project(self, store: Store, tmp_path: Any, monkeypatch: pytest.MonkeyPatch) -> None:
        """Each entry carries the repository it was written from; a list can keep one project's."""
        here = add(store, "Written from this repository.")
        (tmp_path / "other-project").mkdir()
        monkeypatch.chdir(tmp_path / "other-project")  # not in a repository: the folder's name
        there = add(store, "Written from another project.")
        monkeypatch.undo()
        entries = store.get_entries([here, there])
        assert entries[there].project == "other-project" and entries[here].project not in (None, "other-project")
        assert [v.entry.id for v in store.list_versions(project="other-project")] == [there]
        assert {v.entry.id for v in store.list_versions()} == {here, there}
        assert store.entry_version(here).entry.project == entries[here].project  # type: ignore[union-attr]

    def test_audit_rows_of_one_project(self, store: Store) -> None:
        with store.transaction():
            store.record_audit("write", 1, {"project": "alpha", "by": "ann@box"})
            store.record_audit("write", 2, {"project": "beta"})
            store.record_audit("reindex", None, {})  # names no project: kept under any filter
        assert [r.entry_id for r in store.audit_rows(10, project="alpha")] == [None, 1]
        assert [r.entry_id for r in store.audit_rows(10, project="beta")] == [None, 2]
        assert len(store.audit_rows(10)) == 3

    def test_forgotten_hashes_are_those_of_forget_rows(self, store: Store) -> None:
        with store.transaction():
            store.record_audit("forget", 7, {"content_hash": "abc", "type": "note"})
            store.record_audit("write", 8, {"content_hash": "def"})
            store.record_audit("forget", 9, {"type": "note"})  # an older row without a hash
        assert store.forgotten_hashes() == {"abc"}

    def test_entry_ids_between(self, store: Store) -> None:
        a = add(store, "One.", at="2026-01-01T00:00:00Z")
        b = add(store, "Two.", type="decision", at="2026-01-02T00:00:00Z")
        c = add(store, "Three.", type="decision", at="2026-01-03T00:00:00Z")
        add(store, "Four.", at="2026-02-01T00:00:00Z")
        assert store.entry_ids_between("2026-01-01T00:00:00Z", "2026-02-01T00:00:00Z") == [c, b, a]  # newest first, end excluded
        assert store.entry_ids_between("2026-01-01T00:00:00Z", "2026-02-01T00:00:00Z", ["decision"]) == [c, b]
        assert store.entry_ids_between("2026-01-01T00:00:00Z", "2026-02-01T00:00:00Z", limit=1) == [c]
        assert store.count_entries_between("2026-01-01T00:00:00Z", "2026-02-01T00:00:00Z") == 3

    # -- transactions and read-only --------------------------------------------------------------

    def test_transactions_roll_back_on_error(self, store: Store) -> None:
        keep = add(store, "Kept.")
        with pytest.raises(RuntimeError), store.transaction():
            store.insert_entry("note", "Lost.", T0, {})
            store.record_audit("write", keep, {})
            raise RuntimeError("boom")
        assert store.count_entries() == 1 and store.audit_rows() == []
        assert store.fts_search("lost", 5) == []
        with store.transaction():
            outer = store.insert_entry("note", "Outer.", T0, {})
            with pytest.raises(RuntimeError), store.transaction():
                store.insert_entry("note", "Inner.", T0, {})
                raise RuntimeError("inner")
        assert store.get_entry(outer) is not None and store.count_entries() == 2

    def test_readonly_store_refuses_writes(self, open_backend: Opener) -> None:
        writer = open_backend()
        entry = add(writer, "Written before.")
        writer.close()
        reader = open_backend(readonly=True)
        try:
            assert reader.readonly and reader.count_entries() == 1
            with pytest.raises(StoreError):
                add(reader, "Refused.")
            with pytest.raises(StoreError):
                reader.set_embedder_name("minilm")
            with pytest.raises(StoreError), reader.transaction():
                reader.delete_entry(entry)
            assert reader.count_entries() == 1 and reader.embedder_name() is None
        finally:
            reader.close()
