"""The offline rule extractor: a table of sentences agents write → the triples expected.

Conservative by design: the second half of the table is sentences that must yield nothing.
"""

from __future__ import annotations

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from crib_plugin.core.records import Triple
from crib_plugin.models.base import Extractor
from crib_plugin.models.rules import RuleExtractor

P = "project"

TABLE: list[tuple[str, list[tuple[str, str, str]]]] = [
    # payment terms
    ("ClientA pays Net30", [("ClientA", "payment_terms", "Net30")]),
    ("ClientA now pays Net45.", [("ClientA", "payment_terms", "Net45")]),
    ("Acme Corp pays on net 30 terms", [("Acme Corp", "payment_terms", "net 30")]),
    ("ClientA's payment terms are Net60", [("ClientA", "payment_terms", "Net60")]),
    ("ClientA pays Net30, as agreed in May", [("ClientA", "payment_terms", "Net30")]),
    # choices and roles ("for Z")
    ("Chose SQLite for storage. Zero dependencies.", [(P, "storage_backend", "SQLite")]),
    ("We chose SQLite for storage", [(P, "storage_backend", "SQLite")]),
    ("Decision: use SQLite for storage", [(P, "storage_backend", "SQLite")]),
    ("crib uses SQLite for storage", [("crib", "storage_backend", "SQLite")]),
    ("The API uses Redis for caching", [("API", "cache_backend", "Redis")]),
    ("We use pytest for testing", [(P, "used_for_testing", "pytest")]),
    ("I chose Jinja for templates", [(P, "used_for_templates", "Jinja")]),
    ("We moved to Postgres for storage", [(P, "storage_backend", "Postgres")]),
    # uses / switches
    ("We switched to pnpm", [(P, "uses", "pnpm")]),
    ("The frontend uses React and Vite", [("frontend", "uses", "React"), ("frontend", "uses", "Vite")]),
    ("We use Redis, Celery and Postgres", [(P, "uses", "Redis"), (P, "uses", "Celery"), (P, "uses", "Postgres")]),
    ("The frontend uses React, which is fast", [("frontend", "uses", "React")]),
    ("We switched from Postgres to SQLite", [(P, "uses", "SQLite"), (P, "not_uses", "Postgres")]),
    ("We use SQLite instead of Postgres", [(P, "uses", "SQLite"), (P, "not_uses", "Postgres")]),
    # places, employers, infrastructure
    ("spill lives in the repo", [("spill", "lives_in", "repo")]),
    ("Maya lives in Lisbon", [("Maya", "lives_in", "Lisbon")]),
    ("Maya moved to Berlin", [("Maya", "lives_in", "Berlin")]),
    ("ClientA is based in Tokyo", [("ClientA", "located_in", "Tokyo")]),
    ("Dana works at Acme Corp", [("Dana", "works_at", "Acme Corp")]),
    ("Our API now runs on Kubernetes", [("API", "runs_on", "Kubernetes")]),
    ("The service depends on Redis", [("service", "depends_on", "Redis")]),
    # relations with a closed verb list
    ("Caroline likes painting, hiking and jazz",
     [("Caroline", "likes", "painting"), ("Caroline", "likes", "hiking"), ("Caroline", "likes", "jazz")]),
    # is / attributes
    ("Dana is the project lead", [("Dana", "is", "project lead")]),
    ("The deploy target is Fly.io", [("deploy target", "is", "Fly.io")]),
    ("The status of the migration is blocked", [("migration", "status", "blocked")]),
    # negations and "no longer"
    ("We no longer use Redis", [(P, "not_uses", "Redis")]),
    ("The worker does not use Celery", [("worker", "not_uses", "Celery")]),
    ("Dana doesn't like meetings", [("Dana", "not_likes", "meetings")]),
    ("tally never rotates files", [("tally", "not_rotates", "files")]),
    ("sieve never watches logs", [("sieve", "not_watches", "logs")]),
    ("Postgres is not an option", [("Postgres", "not_is", "option")]),
    ("Stopped using Travis", [(P, "not_uses", "Travis")]),
    # decisions
    ("We decided to drop Python 3.8 support", [(P, "decided", "drop Python 3.8 support")]),
    # arrows and key: value lines
    ("storage → PostgreSQL", [("storage", "maps_to", "PostgreSQL")]),
    ("spill → lives in → repo", [("spill", "lives_in", "repo")]),
    ("Postgres -> MySQL -> SQLite", [("Postgres", "maps_to", "MySQL"), ("MySQL", "maps_to", "SQLite")]),
    ("Owner: Dana Lee", [(P, "owner", "Dana Lee")]),
    ("database: PostgreSQL 16", [(P, "storage_backend", "PostgreSQL 16")]),
    ("- **Deadline**: 2026-03-01", [(P, "deadline", "2026-03-01")]),
    ("ClientA's contact: Dana Lee", [("ClientA", "contact", "Dana Lee")]),
    # several statements in one note
    ("type=decision Chose SQLite for storage.\n- Maya lives in Lisbon; ClientA pays Net30.",
     [(P, "storage_backend", "SQLite"), ("Maya", "lives_in", "Lisbon"), ("ClientA", "payment_terms", "Net30")]),
    # sentences that state no fact crib can use: nothing, rather than noise
    ("Thanks, that looks good to me!", []),
    ("It is broken", []),
    ("This is great", []),
    ("If the cache is cold, the API is slow", []),
    ("The bug was fixed yesterday", []),
    ("How do we handle retries?", []),
    ("Does ClientA pay Net30?", []),
    ("The build is failing because of a flaky test", []),
    ("Retries are capped at 3 because the upstream rate-limits us", []),
    ("See https://example.com/docs for details", []),
    ("Note: this is a long rambling sentence that goes on and on about many different unrelated things", []),
    ("", []),
]


@pytest.mark.parametrize(("text", "expected"), TABLE, ids=[t[:40] or "<empty>" for t, _ in TABLE])
def test_rules_table(text: str, expected: list[tuple[str, str, str]]) -> None:
    got = [(t.subject, t.predicate, t.object) for t in RuleExtractor().extract(text)]
    assert got == expected


def test_table_covers_enough_sentences() -> None:
    assert len(TABLE) >= 30
    assert sum(1 for _t, e in TABLE if not e) >= 10  # and enough that must yield nothing


def test_is_an_extractor_named_rules() -> None:
    extractor = RuleExtractor()
    assert isinstance(extractor, Extractor)
    assert extractor.name == "rules"


def test_registered_as_the_rules_extractor() -> None:
    from crib_plugin.plugins.manager import get_plugin_manager, registry

    assert isinstance(registry(get_plugin_manager()).make("extractors", "rules"), RuleExtractor)


def test_deterministic() -> None:
    text = "\n".join(t for t, _ in TABLE)
    first = RuleExtractor().extract(text)
    assert first == RuleExtractor().extract(text)
    assert all(isinstance(t, Triple) for t in first)


@settings(max_examples=300, deadline=None)
@given(st.text(max_size=300))
def test_never_raises_and_yields_clean_triples(text: str) -> None:
    for triple in RuleExtractor().extract(text):
        assert triple.subject.strip() and triple.predicate and triple.object.strip()
        assert triple.predicate == triple.predicate.lower()


@settings(max_examples=200, deadline=None)
@given(st.lists(st.sampled_from(
    ["We", "ClientA", "the API", "uses", "pays", "is", "not", "for", "storage", "Net30", "→", ":", ",", "and",
     "Redis", "lives in", "Tokyo", "switched from", "to", "?", ".", "\n", "doesn't", "instead of"]),
    max_size=12))
def test_word_salad_never_raises(words: list[str]) -> None:
    RuleExtractor().extract(" ".join(words))
