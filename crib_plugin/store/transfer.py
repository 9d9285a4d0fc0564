"""``crib migrate``: copy a whole store to another backend (SQLite ↔ PostgreSQL), losslessly and
resumably.

Lossless: every row keeps its id, its dates (ISO text, byte for byte), its metadata and recall
cue, its supersession pointer and thread context; facts keep their ids, validity and history, and
their sources; the audit log, the settings, the work queue and every vector space (the float32
blobs unchanged) come along. :func:`snapshot` reads all of that in one comparable value, so a round
trip can be checked for equality (``tests/test_migrate.py``, ``bench/pg_roundtrip.py``).

Resumable: tables are copied in id order, in chunks of :data:`CHUNK` rows, each chunk in one
transaction of the target. A rerun after a kill starts each table after the largest id the target
already holds; tables keyed otherwise are written with ``ON CONFLICT DO NOTHING``, and relations'
successor pointers and vectors are rewritten idempotently. The result of a killed-then-resumed
migration is the same as an uninterrupted one.

Runs through the stores' own statement runners (both speak the shared dialect: ``?`` placeholders,
``ON CONFLICT``), so it lives in ``store/``; each backend indexes what it copies its own way
(:meth:`copy_entry_row`).
"""

from __future__ import annotations

import json
from collections.abc import Callable, Sequence
from typing import Any

from .sqlite_rows import ENTRY_ROW

CHUNK = 1000
OnProgress = Callable[[int, int], None]

# (table, columns, key): tables copied row for row after the entries, in an order foreign keys accept.
TABLES: list[tuple[str, str, str | None]] = [
    ("settings", "key, value", None),
    ("pending_embeddings", "entry_id, space, reason, queued_at", None),
    ("entities", "id, name, display_name, type, n_terms, created_at", "id"),
    ("entity_terms", "term, entity_id", None),
    ("relations", "id, subject_id, predicate, object_id, valid_from, valid_until, NULL, created_at", "id"),
    ("relation_sources", "relation_id, entry_id, created_at", None),
    ("predicate_terms", "term, predicate", None),
    ("audit", "id, at, action, entry_id, detail", "id"),
]


def _count(store: Any, table: str) -> int:
    return int(store.execute(f"SELECT count(*) FROM {table}", ())[0][0])


def _max_id(store: Any, table: str) -> int:
    return int(store.execute(f"SELECT coalesce(max(id), 0) FROM {table}", ())[0][0])


def _pages(store: Any, table: str, columns: str, key: str | None, after: int) -> Any:
    """The rows of ``table`` in pages: by ``key`` after ``after``, or all at once in pages by offset."""
    if key is not None:
        last = after
        while True:
            rows = store.execute(f"SELECT {columns} FROM {table} WHERE {key} > ? ORDER BY {key} LIMIT ?", (last, CHUNK))
            if not rows:
                return
            yield rows
            last = int(rows[-1][0])
    offset = 0
    while True:
        rows = store.execute(f"SELECT {columns} FROM {table} ORDER BY 1, 2 LIMIT ? OFFSET ?", (CHUNK, offset))
        if not rows:
            return
        yield rows
        offset += len(rows)


def _insert_rows(target: Any, table: str, columns: str, rows: Sequence[Sequence[Any]]) -> None:
    names = columns.replace("NULL", "superseded_by")
    marks = ",".join("?" * len(rows[0]))
    for row in rows:
        target.execute(f"INSERT INTO {table}({names}) VALUES ({marks}) ON CONFLICT DO NOTHING", list(row))


def migrate_store(source: Any, target: Any, on_progress: OnProgress | None = None) -> dict[str, int]:
    """Copy everything in ``source`` into ``target`` (empty, or a partial copy of ``source``);
    returns rows copied per table. Calls ``on_progress(done, total)`` as it goes."""
    total = _count(source, "entries") + sum(_count(source, t) for t, _c, _k in TABLES)
    done = 0
    copied: dict[str, int] = {}

    def advance(n: int) -> None:
        nonlocal done
        done += n
        if on_progress is not None:
            on_progress(done, total)

    spaces = {key: (table, target.ensure_vector_space(key, dim)) for key, (table, dim) in source.vector_spaces().items()}
    start = _max_id(target, "entries")
    done = _count(target, "entries")
    for rows in _pages(source, "entries", ENTRY_ROW, "id", start):
        ids = [int(r[0]) for r in rows]
        with target.transaction():
            for row in rows:
                target.copy_entry_row(row)
            for src_table, dst_table in spaces.values():
                for entry_id, blob in source.stored_vectors(src_table, ids).items():
                    target.put_vector(dst_table, entry_id, blob)
        copied["entries"] = copied.get("entries", 0) + len(rows)
        advance(len(rows))
    for table, columns, key in TABLES:
        after = _max_id(target, table) if key is not None else 0
        for rows in _pages(source, table, columns, key, after):
            with target.transaction():
                _insert_rows(target, table, columns, rows)
            copied[table] = copied.get(table, 0) + len(rows)
            advance(len(rows))
    for rows in _pages(source, "relations", "id, superseded_by", "id", 0):
        with target.transaction():
            for relation_id, successor in rows:
                if successor is not None:
                    target.execute("UPDATE relations SET superseded_by = ? WHERE id = ?", (int(successor), int(relation_id)))
    target.after_copy()
    return copied


def snapshot(store: Any) -> dict[str, Any]:
    """Everything :func:`migrate_store` promises to keep, as plain comparable values."""
    out: dict[str, Any] = {"entries": [tuple(r) for r in store.execute(f"SELECT {ENTRY_ROW} FROM entries ORDER BY id", ())]}
    for table, columns, _key in TABLES:
        names = columns.replace("NULL", "superseded_by")
        rows = store.execute(f"SELECT {names} FROM {table} ORDER BY 1, 2", ())
        out[table] = [tuple(json.loads(v) if table == "audit" and i == 4 else v for i, v in enumerate(r)) for r in rows]
    out["vectors"] = {key: sorted(store.all_vectors(table)) for key, (table, _dim) in store.vector_spaces().items()}
    out["dims"] = {key: dim for key, (_table, dim) in store.vector_spaces().items()}
    return out
