"""Seed 000 ("Three channels, one query"), reconstructed: ten memories about an agent's tool suite
and its thirteen queries. Every answerable query must inject its entry; the control query (B3,
about FTS5 tokenizer internals, which no memory discusses) must inject nothing.

The memories are written anew from the seed's description of them (not copied from it).
"""

from __future__ import annotations

from typing import Any

import pytest

# one worker runs the whole module under -n (pyproject: --dist loadgroup): its module fixture builds the seed store
pytestmark = pytest.mark.xdist_group("test_seed000")

MEMORIES: list[tuple[str, str]] = [
    ("decision", "spill keeps its log in a SQLite database, one file, instead of plain text logs: events can be queried with SQL."),
    ("note", "nomic-embed-text turns each memory into a vector of 768 floating point numbers, stored with sqlite-vec."),
    ("error", "hooker broke when a commit message held a single quote: the gsub call did not escape it before the shell saw it. Every user-supplied string is now escaped."),
    ("error", "book's job queue crashed when two workers took the same task at once; a row lock on the task fixed it."),
    ("decision", "Every tool (hooker, crib, screen, spill, book, trick) lives in its own sibling directory. prophet discovers them at runtime through relative paths and vendors nothing: no shared dependencies between tools."),
    ("note", "screen's small model (gemma3:1b) is unreliable at classification: messages of only a few words are labelled as chat whatever they say."),
    ("correction", "trick pulled 14 memories out of a single transcript, 9 of them trivial operational details; its extraction prompt now asks only for decisions, corrections and lessons."),
    ("decision", "crib consolidates on write: a new fact with the same subject and predicate closes the old one by setting valid_until, so history is kept (consolidation-on-write)."),
    ("note", "The reviewer persona is defined once in prophet and shared by every project, so it evolves in one place and never diverges."),
    ("decision", "crib stores all of a project's memory in a single SQLite file: entries, facts and vectors together, no server to run."),
]

# (query, indices of the memories that answer it); an empty tuple is the control.
QUERIES: list[tuple[str, tuple[int, ...]]] = [
    ("what logging backend does spill use?", (0,)),
    ("what does prophet discover at runtime?", (4,)),
    ("what architecture does prophet use for dependencies?", (4,)),
    ("gsub escaping single quote", (2,)),
    ("valid_until consolidation-on-write", (7,)),
    ("porter stemming unicode61 tokenize", ()),
    ("768 dimensional float vectors nomic", (1,)),
    ("how do the tools find each other at startup?", (4,)),
    ("what went wrong with the task queue crashing?", (3,)),
    ("preventing the agent from remembering useless things", (6,)),
    ("making sure the persona does not diverge across projects", (8,)),
    ("how does the small model fail on classification?", (5,)),
    ("every architectural decision we made about persistence", (0, 7, 9)),
]


@pytest.fixture(scope="module")
def seeded(tmp_path_factory: pytest.TempPathFactory) -> Any:
    import os

    from crib_plugin import Memory
    from crib_plugin.memory import NewEntry

    os.environ.setdefault("CRIB_EXTRACTOR", "rules")
    db = tmp_path_factory.mktemp("seed000") / "crib.db"
    with Memory(db) as memory:
        reports = memory.write_many(
            [NewEntry(text, kind, f"2026-02-{10 + i:02d}T10:00:00Z") for i, (kind, text) in enumerate(MEMORIES)]
        )
    return db, [r.entry_id for r in reports]


@pytest.mark.parametrize("query,expected", QUERIES, ids=[q for q, _ in QUERIES])
def test_seed000_query(seeded: Any, query: str, expected: tuple[int, ...]) -> None:
    from crib_plugin import Memory

    db, ids = seeded
    with Memory(db) as memory:
        block = memory.retrieve(query)
        injected = {h.entry.id for h in memory.last_retrieval.hits}
    if not expected:
        assert block == "", f"control query injected {sorted(injected)}"
        return
    wanted = {ids[i] for i in expected}
    assert wanted & injected, f"{query!r}: expected one of {sorted(wanted)}, injected {sorted(injected)}"
