"""Managing what is stored: list, show, stats, forget (with a preview), correct, and the audit log.

One implementation for every host: the CLI (``crib list/show/stats/forget/correct/log``) and the
MCP server call these functions, so both behave the same. Each takes an open
:class:`~crib_plugin.memory.Memory` (see :func:`crib_plugin.scopes.open_scope` for a scope's store).

Every change is recorded in the ``audit`` table (migration 4). An audit row never holds a memory's
text: a forgotten memory must leave no readable trace, so forgetting keeps only its id, type and a
hash of its content (enough to recognise it if the same text comes back, not to read it).
"""

from __future__ import annotations

import json
from typing import TYPE_CHECKING, Any, Iterator, Sequence

from .errors import InputError
from .records import Entry
from .timeutil import now_iso, parse_iso, to_iso

if TYPE_CHECKING:  # pragma: no cover
    from .memory import Memory

# The full-text indexes whose deleted rows are merged away after a forget, so the forgotten words
# are gone from their segments too, not only hidden by a delete marker.
FTS_TABLES = ("entries_fts", "entries_trigram", "entries_cjk")
LIST_COLUMNS = "id, type, content, created_at, metadata, superseded_by"


# -- audit ------------------------------------------------------------------------------------


def record_audit(store: Any, action: str, entry_id: int | None = None, **detail: Any) -> None:
    """Append one audit row (``detail`` is JSON; callers must not put memory text in it)."""
    store.execute(
        "INSERT INTO audit(at, action, entry_id, detail) VALUES (?, ?, ?, ?)",
        (now_iso(), action, entry_id, json.dumps(detail, ensure_ascii=False, sort_keys=True)),
    )


def audit_log(memory: "Memory", limit: int = 50, entry_id: int | None = None) -> list[dict[str, Any]]:
    """Audit rows, newest first (optionally only those about ``entry_id``)."""
    where, args = ("WHERE entry_id = ?", [entry_id]) if entry_id is not None else ("", [])
    rows = memory.store.execute(
        f"SELECT id, at, action, entry_id, detail FROM audit {where} ORDER BY id DESC LIMIT ?", [*args, limit]
    )
    return [
        {"id": int(r[0]), "at": r[1], "action": r[2], "entry_id": r[3], "detail": json.loads(r[4] or "{}")}
        for r in rows
    ]


# -- reading -------------------------------------------------------------------------------------


def _row_json(row: Sequence[Any]) -> dict[str, Any]:
    try:
        metadata = json.loads(row[4]) if row[4] else {}
    except json.JSONDecodeError:
        metadata = {}
    return {
        "id": int(row[0]), "type": row[1], "content": row[2], "created_at": row[3],
        "metadata": metadata, "superseded_by": int(row[5]) if row[5] is not None else None,
    }


def _bound(value: str | None, *, end: bool) -> str | None:
    """An ISO bound for ``created_at``; a bare date as ``until`` covers that whole day."""
    if not value:
        return None
    moment = to_iso(parse_iso(value))
    if end and len(value.strip()) == 10:  # YYYY-MM-DD
        return moment[:10] + "T23:59:59Z"
    return moment


def list_entries(
    memory: "Memory",
    *,
    types: Sequence[str] = (),
    since: str | None = None,
    until: str | None = None,
    limit: int | None = 50,
    include_superseded: bool = True,
) -> list[dict[str, Any]]:
    """Entries newest first, filtered by type and ``created_at`` bounds (ISO dates or times)."""
    clauses: list[str] = []
    args: list[Any] = []
    if types:
        clauses.append(f"type IN ({','.join('?' * len(types))})")
        args.extend(t.strip().lower() for t in types)
    start, stop = _bound(since, end=False), _bound(until, end=True)
    if start:
        clauses.append("created_at >= ?")
        args.append(start)
    if stop:
        clauses.append("created_at <= ?")
        args.append(stop)
    if not include_superseded:
        clauses.append("superseded_by IS NULL")
    where = f"WHERE {' AND '.join(clauses)}" if clauses else ""
    tail = " LIMIT ?" if limit is not None else ""
    if limit is not None:
        args.append(int(limit))
    rows = memory.store.execute(
        f"SELECT {LIST_COLUMNS} FROM entries {where} ORDER BY created_at DESC, id DESC{tail}", args
    )
    return [_row_json(r) for r in rows]


def _get(memory: "Memory", entry_id: int) -> dict[str, Any]:
    rows = memory.store.execute(f"SELECT {LIST_COLUMNS} FROM entries WHERE id = ?", (entry_id,))
    if not rows:
        raise InputError(f"no entry with id {entry_id}")
    return _row_json(rows[0])


def history(memory: "Memory", entry_id: int) -> list[dict[str, Any]]:
    """The supersession chain through ``entry_id``, oldest first (the newest text last)."""
    store = memory.store
    chain = [_get(memory, entry_id)]
    seen = {entry_id}
    while True:  # walk back: entries this one replaced
        rows = store.execute(f"SELECT {LIST_COLUMNS} FROM entries WHERE superseded_by = ? ORDER BY id", (chain[0]["id"],))
        older = [_row_json(r) for r in rows if int(r[0]) not in seen]
        if not older:
            break
        chain.insert(0, older[-1])
        seen.add(older[-1]["id"])
    while chain[-1]["superseded_by"] is not None and chain[-1]["superseded_by"] not in seen:  # walk forward
        nxt = chain[-1]["superseded_by"]
        found = store.execute(f"SELECT {LIST_COLUMNS} FROM entries WHERE id = ?", (nxt,))
        if not found:
            break
        chain.append(_row_json(found[0]))
        seen.add(nxt)
    return chain


def show_entry(memory: "Memory", entry_id: int) -> dict[str, Any]:
    """One entry with its facts, where it came from, its correction history and its audit rows.

    ``history`` is oldest → newest; ``current`` is the id whose text stands now (the newest).
    """
    from .facts import facts_for_entries

    entry = _get(memory, entry_id)
    chain = history(memory, entry_id)
    metadata = entry["metadata"]
    sources = {k: metadata[k] for k in ("source", "source_path", "heading", "thread", "corrects", "imported_from") if k in metadata}
    return {
        "entry": entry,
        "current": chain[-1]["id"],
        "history": chain,
        "facts": [f.to_json() for f in facts_for_entries(memory.store, [entry_id])],
        "sources": sources,
        "audit": audit_log(memory, limit=100, entry_id=entry_id),
    }


def stats(memory: "Memory") -> dict[str, Any]:
    """Counts that say what the store holds (JSON-ready)."""
    store = memory.store
    one = lambda sql: int(store.execute(sql)[0][0])  # noqa: E731
    by_type = {str(t): int(n) for t, n in store.execute("SELECT type, count(*) FROM entries GROUP BY type ORDER BY type")}
    span = store.execute("SELECT min(created_at), max(created_at) FROM entries")[0]
    spaces = {}
    for key, (table, dim) in store.vector_spaces().items():
        spaces[key] = {"vectors": store.vector_count(table), "dim": dim}
    path = memory.path
    return {
        "path": str(path),
        "size_bytes": path.stat().st_size if path.exists() else 0,
        "schema": store.schema_version(),
        "entries": one("SELECT count(*) FROM entries"),
        "by_type": by_type,
        "superseded": one("SELECT count(*) FROM entries WHERE superseded_by IS NOT NULL"),
        "facts": one("SELECT count(*) FROM relations WHERE valid_until IS NULL"),
        "fact_versions": one("SELECT count(*) FROM relations"),
        "entities": one("SELECT count(*) FROM entities"),
        "pending_vectors": one("SELECT count(*) FROM pending_embeddings"),
        "vector_spaces": spaces,
        "embedder": store.get_setting("embedder"),
        "first": span[0],
        "last": span[1],
        "audit_rows": one("SELECT count(*) FROM audit"),
    }


# -- forgetting ---------------------------------------------------------------------------------


def _mentions(content: str, words: Sequence[str]) -> bool:
    """Whether ``content`` itself contains one of the query's words (a plural or -ing may differ)."""
    text = content.lower()
    return any(word[: max(4, len(word) - 3)] in text if len(word) > 4 else word in text for word in words)


def preview_forget(memory: "Memory", query: str, limit: int = 20) -> list[dict[str, Any]]:
    """The entries ``forget --query`` would remove: the channels' hits for ``query`` whose own text
    contains one of its words. A neighbour found only through its thread's context, or a vector
    that is merely close, is not offered for deletion."""
    from .query import prepare

    if not query.strip():
        raise InputError("forget --query needs some text to match")
    prepared = prepare(query)
    words = [w.lower() for w in prepared.keywords] + list(prepared.cjk_terms)
    hits = [h for h in memory.recall(query).hits if _mentions(h.entry.content, words)][:limit]
    out = []
    for hit in hits:
        data = _get(memory, hit.entry.id)
        data["score"] = round(hit.score, 6)
        out.append(data)
    return out


def _fingerprint(entry: Entry) -> dict[str, Any]:
    """What the audit keeps of a forgotten entry: never its text."""
    return {"type": entry.type, "content_hash": entry.content_hash, "created_at": entry.created_at}


def forget(memory: "Memory", entry_ids: Sequence[int], *, reason: str = "forget") -> list[int]:
    """Remove entries from every channel and index; returns the ids that existed and are gone.

    Gone means: the entry row, its full-text, trigram and CJK index rows (their segments merged so
    the words are not left behind a delete marker), its vector in every vector table, its
    pending-embedding row, its fact sources and the relations and entities only it supported.
    Entries it superseded point to nothing afterwards (they become current again). Freed pages
    are zeroed (``secure_delete``) and the write-ahead log is checkpointed and truncated, so the
    text is not left in the file either. One audit row per entry holds its id, type and content
    hash — no text.
    """
    from . import facts as facts_mod

    store = memory.store
    removed: list[int] = []
    store.execute("PRAGMA secure_delete = ON")  # freed pages are zeroed, not left holding the text
    for entry_id in dict.fromkeys(int(i) for i in entry_ids):
        if not 0 < entry_id < 2**63:  # no SQLite rowid is outside this (and apsw would overflow)
            continue
        entry = store.get_entry(entry_id)
        if entry is None:
            continue
        with store.transaction():
            facts_mod.forget_entry(store, entry_id)
            store.execute("UPDATE entries SET superseded_by = NULL WHERE superseded_by = ?", (entry_id,))
            store.delete_entry(entry_id)
            record_audit(store, "forget", entry_id, reason=reason, **_fingerprint(entry))
        removed.append(entry_id)
    if removed:
        _merge_indexes(store)
        # the write-ahead log still holds the pages as they were written: copy it back and empty it
        # (a reader holding an old snapshot can delay this; the next checkpoint finishes it)
        store.execute("PRAGMA wal_checkpoint(TRUNCATE)")
    return removed


def _merge_indexes(store: Any) -> None:
    """Merge every full-text index into one segment: deleted rows' terms leave the index files."""
    with store.transaction():
        for table in FTS_TABLES:
            if store.execute("SELECT 1 FROM sqlite_master WHERE name = ?", (table,)):
                store.execute(f"INSERT INTO {table}({table}) VALUES ('optimize')")


# -- correcting ---------------------------------------------------------------------------------


def correct(memory: "Memory", entry_id: int, new_text: str, *, type: str | None = None) -> int:
    """Store ``new_text`` as the entry that supersedes ``entry_id``; the old one is kept.

    The new entry is a ``correction`` (unless ``type`` says otherwise) whose metadata names the
    entry it corrects; the old entry's ``superseded_by`` names the new one. Retrieval puts the
    corrected text first; ``show`` gives both, oldest first. Correcting an entry that was already
    corrected corrects the newest version, so the chain stays a line.
    """
    store = memory.store
    if store.get_entry(entry_id) is None:
        raise InputError(f"no entry with id {entry_id}")
    target = store.successor_of(entry_id) or entry_id
    old = store.get_entry(target)
    assert old is not None
    metadata = {k: v for k, v in old.metadata.items() if k in ("thread",)}
    metadata["corrects"] = target
    new_id = memory.write(new_text, type=type or "correction", metadata=metadata, dedupe=False)
    with store.transaction():
        store.supersede_entry(target, new_id)
        record_audit(store, "correct", target, new_id=new_id)
    return new_id


def iter_ids(values: Sequence[str]) -> Iterator[int]:
    """Entry ids from command-line words; InputError for anything that is not a positive integer."""
    for value in values:
        try:
            number = int(value)
        except ValueError as exc:
            raise InputError(f"not an entry id: {value!r}") from exc
        if not 0 < number < 2**63:
            raise InputError(f"not an entry id: {value!r}")
        yield number


def list_scoped(scope: str = "all", **filters: Any) -> list[dict[str, Any]]:
    """:func:`list_entries` over one scope or both (``all``): each dict gains ``scope``; missing
    stores are skipped. Newest first across scopes."""
    from .scopes import SCOPES, open_scope, scope_path

    names = SCOPES if scope == "all" else (scope,)
    out: list[dict[str, Any]] = []
    for name in names:
        if not scope_path(name).exists():
            continue
        with open_scope(name, create=False) as memory:
            for row in list_entries(memory, **filters):
                row["scope"] = name
                out.append(row)
    out.sort(key=lambda r: (r["created_at"], r["id"]), reverse=True)
    limit = filters.get("limit", 50)
    return out[:limit] if limit is not None else out
