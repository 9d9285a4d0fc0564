"""An import written in batches (one embedding pass and one transaction per batch) stores exactly
what the same records written one by one store: the same rows, facts, vectors and supersession."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import numpy as np
import pytest

from crib_plugin import Memory
from crib_plugin.write import path as writepath

RECORDS = [
    {"type": "decision", "content": "MSRV for logsift is 1.74: rust-version = \"1.74\" in Cargo.toml.", "created_at": "2026-01-02T10:00:00Z"},
    {"type": "error", "content": "CI failed: LazyLock is only stable from Rust 1.80; fixed with once_cell::sync::Lazy.", "created_at": "2026-01-04T10:00:00Z"},
    {"type": "preference", "content": "Shell: the user uses fish, so give shell snippets in fish syntax.", "created_at": "2026-01-05T10:00:00Z"},
    {"type": "note", "content": "Alice manages the billing service and the payments team.", "created_at": "2026-01-06T10:00:00Z"},
    {"type": "note", "content": "The staging database is PostgreSQL 15 on db-staging-2.", "created_at": "2026-01-07T10:00:00Z"},
    {"type": "decision", "content": "MSRV raised from 1.74 to 1.80 so we can use std::sync::LazyLock and drop once_cell.", "created_at": "2026-02-10T10:00:00Z"},
    {"type": "preference", "content": "The user switched from fish to zsh (with starship): give snippets in zsh syntax.", "created_at": "2026-02-11T10:00:00Z"},
    {"type": "correction", "content": "Bob manages the billing service now, not Alice.", "created_at": "2026-02-12T10:00:00Z"},
] + [
    {"type": "note", "content": f"Build note {n}: the nightly job {n} archives logs to bucket logs-{n}.", "created_at": f"2026-03-{1 + n:02d}T10:00:00Z"}
    for n in range(20)
]


def _snapshot(memory: Memory) -> dict[str, Any]:
    store = memory.store
    rows = store.execute("SELECT id, type, content, created_at, metadata, superseded_by, context FROM entries ORDER BY id")
    facts = store.execute(
        "SELECT s.name, r.predicate, o.name, r.valid_until IS NULL FROM relations r "
        "JOIN entities s ON s.id = r.subject_id JOIN entities o ON o.id = r.object_id ORDER BY r.id")
    table = store.vector_space(memory.embedder_key())[0]
    vectors = store.stored_vectors(table, [r[0] for r in rows])
    return {"rows": rows, "facts": facts, "vectors": {i: np.frombuffer(b, dtype="<f4") for i, b in vectors.items()}}


def _import(db: Path, batch: int, monkeypatch: pytest.MonkeyPatch) -> dict[str, Any]:
    monkeypatch.setattr(writepath, "WRITE_BATCH", batch)
    with Memory(db) as memory:
        memory.import_records([dict(r) for r in RECORDS])
        return _snapshot(memory)


def test_batched_import_equals_one_by_one(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    one = _import(tmp_path / "one.db", 1, monkeypatch)
    batched = _import(tmp_path / "batched.db", 64, monkeypatch)
    assert batched["rows"] == one["rows"]
    assert batched["facts"] == one["facts"] and one["facts"]
    assert sum(1 for r in one["rows"] if r[5] is not None) >= 2  # supersession ran and linked
    assert batched["vectors"].keys() == one["vectors"].keys() and len(one["vectors"]) == len(RECORDS)
    for entry_id, vector in one["vectors"].items():
        assert np.allclose(batched["vectors"][entry_id], vector, atol=1e-5)
