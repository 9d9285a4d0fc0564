"""Concurrency on the PostgreSQL store: writers that race leave one consistent memory."""

from __future__ import annotations

import multiprocessing
import time
from typing import Any

from crib_plugin.core.records import Triple
from crib_plugin.store import facts, open_store

T0 = "2026-01-01T00:00:00Z"


def _write_fact(url: str, backend: str, barrier: Any, slow: float) -> None:
    """One writer: an entry and its fact in one transaction, started at the barrier; the gap between
    reading what is current and inserting the new relation is widened by ``slow`` seconds."""
    store = open_store(url)
    insert = store.insert_relation

    def slow_insert(*args: Any) -> int:
        time.sleep(slow)
        return insert(*args)

    store.insert_relation = slow_insert  # type: ignore[method-assign]
    barrier.wait()
    with store.transaction():
        entry = store.insert_entry("decision", f"Storage is {backend} now.", T0, {})
        facts.record_facts(store, entry, [Triple("crib", "storage_backend", backend)], valid_from=T0)
    store.close()


def test_two_writers_contradicting_at_the_same_instant_leave_one_current_fact(pg_url: str) -> None:  # noqa: F811
    context = multiprocessing.get_context("fork")
    barrier = context.Barrier(2)
    writers = [context.Process(target=_write_fact, args=(pg_url, name, barrier, 0.3)) for name in ("SQLite", "PostgreSQL")]
    for writer in writers:
        writer.start()
    for writer in writers:
        writer.join(60)
        assert writer.exitcode == 0
    store = open_store(pg_url, readonly=True)
    try:
        current = facts.current_facts(store)
        assert len(current) == 1 and current[0].predicate == "storage_backend"
        history = facts.fact_history(store, "crib")
        assert len(history) == 2 and sum(f.valid_until is None for f in history) == 1
    finally:
        store.close()
