"""What an import pays per entry must not grow with the store (issue 23): the statements the
write path runs for every entry read what they need through an index bounded by the answer, not
by the store's history. Checked by the query plans, not by timings."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from crib_plugin.store import open_store


def _plans(store: Any, call: Any) -> list[str]:
    """The query plans of every statement ``call`` runs on ``store``."""
    seen: list[tuple[str, Any]] = []
    real = store.execute
    store.execute = lambda sql, bindings=(): seen.append((sql, bindings)) or real(sql, bindings)
    try:
        call()
    finally:
        store.execute = real
    return [" / ".join(str(row[-1]) for row in real("EXPLAIN QUERY PLAN " + sql, bindings)) for sql, bindings in seen]


def test_current_relations_read_only_the_current_ones(tmp_path: Path) -> None:
    """A (subject, predicate) with a long history of closed values: finding its current values
    searches the partial index of current relations (relations_current_sp), not the history."""
    store = open_store(tmp_path / "crib.db")
    with store.transaction():
        subject = store.insert_entity("release runner", "release runner", "entity", ["release", "runner"], "2026-01-01T00:00:00Z")
        previous = None
        for n in range(50):
            shell = store.insert_entity(f"shell {n}", f"shell {n}", "entity", ["shell"], "2026-01-01T00:00:00Z")
            current = store.insert_relation(subject, "uses", shell, f"2026-01-01T00:{n:02d}:00Z", None, None, "2026-01-01T00:00:00Z")
            if previous is not None:
                store.close_relation(previous, f"2026-01-01T00:{n:02d}:00Z", current)
            previous = current
    for object_id in (None, shell):
        plans = _plans(store, lambda object_id=object_id: store.current_relations(subject, "uses", object_id))
        assert plans and all("relations_current_sp" in plan for plan in plans), plans
    assert [r[0] for r in store.current_relations(subject, "uses")] == [previous]
