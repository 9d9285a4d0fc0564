"""Managing what is stored: list, show, stats, forget (with a preview), correct, recall cues, and
the audit log.

One implementation for every host: the CLI (``crib list/show/stats/forget/correct/log``) and the
MCP server call these functions, so both behave the same. Each takes an open
:class:`~crib_plugin.memory.Memory` (see :func:`crib_plugin.scopes.open_scope` for a scope's store).

Every change is recorded in the ``audit`` table (migration 4). An audit row never holds a memory's
text: a forgotten memory must leave no readable trace, so forgetting keeps only its id, type and a
hash of its content (enough to recognise it if the same text comes back, not to read it).
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any, Callable, Iterator, Sequence

from ..core.authorship import authored, project_filter
from ..core.cues import CUE_BY_KEY, CUE_KEY, cue_of, cue_space_key, embed_cues, with_cue
from ..core.errors import CribError, InputError, ModelError
from ..core.limits import check_metadata
from ..core.records import Entry
from ..core.timeutil import parse_iso, to_iso
from ..store import facts as facts_mod
from ..store.base_vectors import to_blob
from ..store.facts import facts_for_entries
from ..text.redact import redact_value
from ..text.scrub import neutralise_tags
from .clean import clean_cue
from .cue_model import cue_writer

if TYPE_CHECKING:  # pragma: no cover
    from ..plugins.contracts import MemoryLike  # the protocol: no import of the facade above
    from ..store.base import Store
    from ..store.records import EntryVersion



# -- audit ------------------------------------------------------------------------------------


def record_audit(store: Store, action: str, entry_id: int | None = None, **detail: Any) -> None:
    """Append one audit row (``detail`` is JSON; callers must not put memory text in it), naming
    who made the change (:func:`crib_plugin.core.authorship.authored`)."""
    store.record_audit(action, entry_id, authored(detail))


def audit_log(memory: "MemoryLike", limit: int = 50, entry_id: int | None = None) -> list[dict[str, Any]]:
    """Audit rows, newest first (optionally only those about ``entry_id``)."""
    return [
        {"id": r.id, "at": r.at, "action": r.action, "entry_id": r.entry_id, "detail": r.detail}
        for r in memory.store.audit_rows(limit, entry_id, project=project_filter(memory.settings.projects))
    ]


# -- reading -------------------------------------------------------------------------------------


def _row_json(version: EntryVersion) -> dict[str, Any]:
    """One entry as ``list`` and ``show`` (CLI and MCP) print it: content and metadata redacted (text
    stored before redaction existed never leaves verbatim), memory tags in the content inert (a
    stored ``</memory-context>`` shown to an agent would close the fence it reads inside)."""
    entry = version.entry
    return {
        "id": entry.id, "type": entry.type, "content": neutralise_tags(redact_value(entry.content)), "created_at": entry.created_at,
        "metadata": redact_value(entry.metadata), "superseded_by": version.superseded_by,
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
    memory: "MemoryLike",
    *,
    types: Sequence[str] = (),
    since: str | None = None,
    until: str | None = None,
    limit: int | None = 50,
    include_superseded: bool = True,
    keep: Callable[[EntryVersion], bool] | None = None,
    scan: int | None = None,
) -> list[dict[str, Any]]:
    """Entries newest first, filtered by type and ``created_at`` bounds (ISO dates or times).

    ``keep`` (``crib ui``'s text, project and author filters) is asked of the newest ``scan``
    entries before any is redacted, and the first ``limit`` it keeps are returned."""
    versions = memory.store.list_versions(
        types=[t.strip().lower() for t in types], since=_bound(since, end=False), until=_bound(until, end=True),
        limit=scan if keep is not None and scan is not None else limit, include_superseded=include_superseded,
        project=project_filter(memory.settings.projects),
    )
    if keep is not None:
        versions = [v for v in versions if keep(v)][:limit]
    return [_row_json(v) for v in versions]


def entry_data(memory: "MemoryLike", entry_id: int) -> dict[str, Any]:
    version = memory.store.entry_version(entry_id)
    if version is None:
        raise InputError(f"no entry with id {entry_id}")
    return _row_json(version)


def history(memory: "MemoryLike", entry_id: int) -> list[dict[str, Any]]:
    """The supersession chain through ``entry_id``, oldest first (the newest text last)."""
    store = memory.store
    chain = [entry_data(memory, entry_id)]
    seen = {entry_id}
    while True:  # walk back: entries this one replaced
        older = [_row_json(v) for v in store.superseded_by_entry(chain[0]["id"]) if v.entry.id not in seen]
        if not older:
            break
        chain.insert(0, older[-1])
        seen.add(older[-1]["id"])
    while chain[-1]["superseded_by"] is not None and chain[-1]["superseded_by"] not in seen:  # walk forward
        nxt = chain[-1]["superseded_by"]
        found = store.entry_version(nxt)
        if found is None:
            break
        chain.append(_row_json(found))
        seen.add(nxt)
    return chain


def show_entry(memory: "MemoryLike", entry_id: int) -> dict[str, Any]:
    """One entry with its facts, where it came from, its correction history and its audit rows.

    ``history`` is oldest → newest; ``current`` is the id whose text stands now (the newest).
    """
    entry = entry_data(memory, entry_id)
    chain = history(memory, entry_id)
    metadata = entry["metadata"]
    sources = {k: metadata[k] for k in ("source", "source_path", "heading", "thread", "corrects", "imported_from") if k in metadata}
    return {
        "entry": entry,
        "current": chain[-1]["id"],
        "history": chain,
        # redacted like the entry: facts extracted from text stored before redaction existed
        "facts": redact_value([f.to_json() for f in facts_for_entries(memory.store, [entry_id])]),
        "sources": sources,
        "audit": audit_log(memory, limit=100, entry_id=entry_id),
    }


def stats(memory: "MemoryLike") -> dict[str, Any]:
    """Counts that say what the store holds (JSON-ready)."""
    store = memory.store
    counts = store.counts()
    spaces = {}
    for key, (table, dim) in store.vector_spaces().items():
        spaces[key] = {"vectors": store.vector_count(table), "dim": dim}
    path = memory.path
    return {
        "path": str(path),
        "size_bytes": store.storage_bytes(),
        "schema": store.schema_version(),
        "entries": counts.entries,
        "by_type": counts.by_type,
        "superseded": counts.superseded,
        "facts": counts.facts,
        "fact_versions": counts.fact_versions,
        "entities": counts.entities,
        "pending_vectors": counts.pending,
        "with_cue": store.count_with_metadata(CUE_KEY),
        "vector_spaces": spaces,
        "embedder": store.embedder_name(),
        "first": counts.first,
        "last": counts.last,
        "audit_rows": counts.audit_rows,
    }


# -- forgetting ---------------------------------------------------------------------------------


def _fingerprint(entry: Entry) -> dict[str, Any]:
    """What the audit keeps of a forgotten entry: never its text."""
    return {"type": entry.type, "content_hash": entry.content_hash, "created_at": entry.created_at}


def forget(memory: "MemoryLike", entry_ids: Sequence[int], *, reason: str = "forget") -> list[int]:
    """Remove entries from every channel and index; returns the ids that existed and are gone.

    Gone means: the entry row, its full-text, trigram and CJK index rows (their segments merged so
    the words are not left behind a delete marker), its vector in every vector table, its
    pending-embedding row, its fact sources and the relations and entities only it supported.
    Entries it superseded point to nothing afterwards (they become current again). Freed pages
    are zeroed (``secure_delete``) and the write-ahead log is checkpointed and truncated, so the
    text is not left in the file either. One audit row per entry holds its id, type and content
    hash — no text.
    """
    store = memory.store
    removed: list[int] = []
    store.begin_secure_delete()  # freed pages are zeroed, not left holding the text
    for entry_id in dict.fromkeys(int(i) for i in entry_ids):
        if not 0 < entry_id < 2**63:  # no SQLite rowid is outside this (and apsw would overflow)
            continue
        entry = store.get_entry(entry_id)
        if entry is None:
            continue
        with store.transaction():
            facts_mod.forget_entry(store, entry_id)
            store.unsupersede(entry_id)
            store.delete_entry(entry_id)
            record_audit(store, "forget", entry_id, reason=reason, **_fingerprint(entry))
        removed.append(entry_id)
    if removed:
        store.purge_deleted_text()  # merged indexes and a truncated write-ahead log: the words are gone
    return removed


# -- correcting ---------------------------------------------------------------------------------


def correct(memory: "MemoryLike", entry_id: int, new_text: str, *, type: str | None = None) -> int:
    """Store ``new_text`` as the entry that supersedes ``entry_id``; the old one is kept.

    The new entry is a ``correction`` (unless ``type`` says otherwise) whose metadata names the
    entry it corrects and keeps its recall cue (``when``: the corrected fact matters in the same
    situations); the old entry's ``superseded_by`` names the new one. Retrieval puts the
    corrected text first; ``show`` gives both, oldest first. Correcting an entry that was already
    corrected corrects the newest version, so the chain stays a line.
    """
    store = memory.store
    if store.get_entry(entry_id) is None:
        raise InputError(f"no entry with id {entry_id}")
    target = store.successor_of(entry_id) or entry_id
    old = store.get_entry(target)
    assert old is not None
    metadata = {k: v for k, v in old.metadata.items() if k in ("thread", CUE_KEY, CUE_BY_KEY)}  # same conversation, same cue
    metadata["corrects"] = target
    new_id = memory.write(new_text, type=type or "correction", metadata=metadata, dedupe=False)
    with store.transaction():
        store.supersede_entry(target, new_id)
        record_audit(store, "correct", target, new_id=new_id)
    return new_id


def set_cue(memory: "MemoryLike", entry_id: int, cue: str | None, *, by: str | None = None) -> dict[str, Any]:
    """Say (or, with ``None`` or ``""``, stop saying) when entry ``entry_id`` should come back: its
    recall cue (:mod:`crib_plugin.core.cues`), for a memory written without one or with one that missed.

    The cue is cleaned as on the write path, kept in the entry's metadata and embedded into the cue
    space; the entry's text is never touched. When the embedder is down the cue is still kept and
    its old vector removed, and ``crib reindex`` embeds it. ``by`` names the model that wrote the
    cue (kept as ``when_by``). Returns ``{"id", "when", "embedded"}``.
    """
    store = memory.store
    entry = store.get_entry(entry_id)
    if entry is None:
        raise InputError(f"no entry with id {entry_id}")
    cleaned = clean_cue(cue)
    metadata = with_cue(entry.metadata, cleaned, by)
    check_metadata(metadata)
    vectors = embed_cues(memory, [cleaned], []) if cleaned else None
    try:
        key: str | None = memory.embedder_key()
    except CribError:  # no embedder can be made: the cue is kept for `crib reindex`
        key, vectors = None, None
    with store.transaction():
        store.set_metadata(entry_id, metadata)
        space = store.vector_space(cue_space_key(key)) if key else None
        if vectors is not None and key:
            table = store.ensure_vector_space(cue_space_key(key), len(vectors[0]))
            store.put_vector(table, entry_id, to_blob(vectors[0]))
        elif space is not None:
            store.delete_vector(space[0], entry_id)
        record_audit(store, "cue", entry_id, cleared=not cleaned)
    return {"id": entry_id, "when": cleaned, "embedded": vectors is not None}


def write_missing_cues(memory: "MemoryLike", model: str, on_progress: Any = None) -> dict[str, int]:
    """Let the cue model (:mod:`crib_plugin.models.ollama.cue_writer`) write the recall cue of
    every entry stored without one — ``crib reindex --write-cues`` on a store written before cues,
    or imported. Each cue commits on its own (:func:`set_cue`), so a model that fails half-way
    keeps what it wrote: the ``ModelError`` says how far it got. Returns ``{"cues_written", "had_cue"}``.
    """
    writer = cue_writer(model)
    had_cue = memory.store.count_with_metadata(CUE_KEY)
    todo = [e for e in memory.store.iter_entries() if not cue_of(e.metadata)]
    if on_progress is not None:
        on_progress(0, len(todo))
    for done, entry in enumerate(todo):
        try:
            set_cue(memory, entry.id, writer.write_cue(entry.content, entry.type), by=model)
        except CribError as exc:
            raise ModelError(f"wrote {done} of {len(todo)} missing cues, then: {exc}") from None
        if on_progress is not None:
            on_progress(done + 1, len(todo))
    return {"cues_written": len(todo), "had_cue": had_cue}


def iter_ids(values: Sequence[str]) -> Iterator[int]:
    """Entry ids from command-line words; InputError for anything that is not a positive integer."""
    for value in values:
        try:
            number = int(value)
        except ValueError as exc:
            raise InputError(f"not an entry id: {value!r}") from exc
        if not 0 < number < 2**63:  # no SQLite rowid is outside this range
            raise InputError(f"no entry with id {value}")
        yield number
