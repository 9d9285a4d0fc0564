"""The maintenance work behind ``Memory.reindex`` and ``Memory.import_records``.

``memory`` is the :class:`~crib_plugin.memory.Memory` facade (store, registry, models); it is not
imported here, so the facade can import this module (lazily: the prompt path never needs it).
"""

from __future__ import annotations

from typing import Any, Callable, Iterable

from ..core.authorship import authored
from ..core.cues import CUE_KEY, cue_of, cue_space_key, embed_cues
from ..core.errors import ConfigError, InputError, ModelError
from ..core.limits import check_entry, check_metadata
from ..core.records import Entry
from ..core.timeutil import created_at_iso
from ..core.write_types import EMBED_BATCH, NewEntry, WriteReport
from ..models.base import embedder_key
from ..store.base_vectors import to_blob
from ..store.records import thread_of
from ..store.sqlite_rows import content_hash
from .clean import clean_content, validate_type
from .deferred import QueuedIds, complete_supersession
from .model_work import drain_model_work


def reindex(memory: Any, embedder: str | None = None, on_progress: Callable[[int, int], None] | None = None) -> dict[str, Any]:
    """Drain the queues: extract the facts of entries whose extraction was deferred, then
    embed every entry that lacks a vector in the (new) active embedder's space.

    ``embedder`` switches the store to another embedder explicitly: its vectors go to their own
    table, and the store records the new choice only once every entry has been embedded.
    Each batch commits on its own (a kill keeps it; a rerun continues from the next);
    ``on_progress(done, total)`` follows the batches.
    """
    extracted = drain_model_work(memory, on_progress)["facts_extracted"]  # a queued write's cue, then its facts
    store = memory.store
    if embedder:
        embedder = embedder.lower()
        if embedder not in memory.registry.embedders:
            raise ConfigError(f"unknown embedder {embedder!r} (registered: {', '.join(sorted(memory.registry.embedders))})")
        memory._embedder = memory.registry.make("embedders", embedder)
    key, done = embed_pending(memory, on_progress, audit={"facts_extracted": extracted})
    return {"embedder": key, "embedded": done, "total": store.count_entries(), "pending": len(store.pending()), "facts_extracted": extracted}


def embed_pending(memory: Any, on_progress: Callable[[int, int], None] | None = None, *, audit: dict[str, Any] | None = None) -> tuple[str, int]:
    """Embed every entry without a vector in the active embedder's space (and its recall cue),
    then record the embedder and bring the side index up to date: ``(embedder key, embedded)``.
    ``audit`` (extra detail) records a ``reindex`` row; ``None`` records none (an import's second
    phase: the import records its own). A :class:`ModelError` leaves the rest queued."""
    store = memory.store
    model = memory.embedder()
    key = embedder_key(model)
    probe = model.embed_documents(["crib reindex probe"])
    table = store.ensure_vector_space(key, int(probe.shape[1]))
    done = _embed_missing(memory, model, table, len(store.entries_without_vector(table)), on_progress)
    _embed_missing_cues(memory, model, key, int(probe.shape[1]))
    with store.transaction():
        store.set_embedder_name(model.name)
        store.clear_embedded_pending(table)
        if audit is not None:
            store.record_audit("reindex", None, authored({"embedder": key, "embedded": done, **audit}))
    refresh = getattr(store, "refresh_vector_index", None)  # a big store's side index (SQLite)
    if refresh is not None:
        for space_table, _dim in store.vector_spaces().values():
            refresh(space_table)
    return key, done


def _embed_missing(memory: Any, model: Any, table: str, total: int, on_progress: Callable[[int, int], None] | None) -> int:
    """Embed the entries without a vector in ``table``, batch by batch (each batch claimed, so a
    concurrent reindexer takes others, and committed); returns how many; ``total`` is for progress."""
    store = memory.store
    done, after = 0, 0
    queued = QueuedIds(store, model.name)  # entries written without their vector (deferred, or the model was down)
    refresh = getattr(store, "refresh_vector_index", None)  # a big store's side index (SQLite)
    if on_progress is not None:
        on_progress(0, total)
    while True:
        with store.claim_without_vector(table, EMBED_BATCH, after) as ids:
            if not ids:
                return done
            entries = store.get_entries(ids)
            ids = [i for i in ids if i in entries]  # one forgotten since it was claimed
            previous = [previous_of(memory, entries[i]) for i in ids]
            notes: list[str] = []
            vectors = memory.embed_texts([entries[i].content for i in ids], previous, notes)
            if vectors is None:
                raise ModelError(notes[0])
            blobs = {entry_id: to_blob(vector) for entry_id, vector in zip(ids, vectors)}
            with store.transaction():
                for entry_id, blob in blobs.items():
                    store.put_vector(table, entry_id, blob)
                    store.clear_pending(entry_id, model.name)
                complete_supersession(store, table, entries, blobs, queued.among(ids))
        if refresh is not None:
            refresh(table)
        done, after = done + len(ids), ids[-1]
        if on_progress is not None:
            on_progress(done, max(total, done))


def _embed_missing_cues(memory: Any, model: Any, key: str, dim: int) -> None:
    """Embed the recall cue of every entry that has one but no cue vector for this embedder (an
    entry written while the model was down, or a switch of embedder)."""
    store = memory.store
    if store.vector_space(cue_space_key(key)) is None and not store.count_with_metadata(CUE_KEY):
        return  # no cue anywhere: no cue space (and no second k-NN per prompt)
    cue_table = store.ensure_vector_space(cue_space_key(key), dim)
    after = 0
    while True:
        with store.claim_without_vector(cue_table, EMBED_BATCH, after, with_metadata=CUE_KEY) as ids:
            if not ids:
                return
            entries = store.get_entries(ids)
            cues = {entry_id: cue_of(e.metadata) for entry_id, e in entries.items()}
            notes: list[str] = []
            vectors = embed_cues(memory, list(cues.values()), notes)
            if vectors is None:
                raise ModelError(notes[0])
            with store.transaction():
                for entry_id, vector in zip(cues, vectors):
                    if vector is not None:
                        store.put_vector(cue_table, entry_id, to_blob(vector))
        after = ids[-1]


def previous_of(memory: Any, entry: Entry) -> str | None:
    """The content of the entry before ``entry`` in its thread, or ``None`` (embedding context)."""
    thread = thread_of(entry.metadata)
    if thread is None:
        return None
    before = memory.store.thread_neighbours(thread, entry.id)[0]
    found = memory.store.get_entry(before) if before is not None else None
    return found.content if found else None


#: The note on the report of a record that was not imported because the user forgot that memory.
FORGOTTEN = "forgotten"


def import_records(
    memory: Any, records: Iterable[dict[str, Any]], on_progress: Callable[[int, int], None] | None = None,
    on_embed_progress: Callable[[int, int], None] | None = None, *, include_forgotten: bool = False,
) -> list[WriteReport]:
    """Import JSON objects (``content`` required; ``type``, ``created_at``, ``metadata``).

    All records are validated before anything is written, so a bad line loses nothing and
    writes nothing. Then two phases (:mod:`crib_plugin.write.deferred`): the entries, their full
    text, facts and audit are written in batches that each commit, their vectors queued (a kill
    keeps every batch before it; a rerun skips what is stored), ``on_progress(done, total)``
    following it; then the queued vectors are embedded (:func:`embed_pending`,
    ``on_embed_progress``). A model that fails in the second phase leaves the vectors queued for
    ``crib reindex``, said in ``memory.warnings``: the entries are kept.

    A record whose text the user forgot (``crib forget``: the audit keeps its content hash, never
    its text) is not brought back — re-importing a ``CLAUDE.md`` would otherwise undo every forget —
    unless ``include_forgotten``; its report is a duplicate noted :data:`FORGOTTEN`.
    """
    items: list[NewEntry] = []
    for number, record in enumerate(records, start=1):
        if not isinstance(record, dict):
            raise InputError(f"record {number}: expected a JSON object")
        content = record.get("content")
        if not isinstance(content, str) or not content.strip():
            raise InputError(f"record {number}: 'content' must be a non-empty string")
        metadata = record.get("metadata") or {}
        try:
            check_entry(content)
            check_metadata(metadata)
            entry_type = validate_type(str(record.get("type") or "note"), memory.registry.types or None)
            created = created_at_iso(record.get("created_at"))
        except InputError as exc:
            raise InputError(f"record {number}: {exc}") from exc
        items.append(NewEntry(content, entry_type, created, metadata))
    forgotten = set() if include_forgotten else memory.store.forgotten_hashes()
    skipped = [content_hash(clean_content(item.content)) in forgotten for item in items] if forgotten else [False] * len(items)
    written = iter(memory.write_many([item for item, skip in zip(items, skipped) if not skip], on_progress=on_progress, audit=None,
                                     defer_vectors=True))
    reports = [WriteReport(0, duplicate=True, notes=[FORGOTTEN]) if skip else next(written) for skip in skipped]
    new = [r.entry_id for r in reports if not r.duplicate]
    with memory.store.transaction():
        memory.store.record_audit("import", None, authored({"entries": len(new), "duplicates": len(reports) - len(new) - sum(skipped),
                                                   "forgotten": sum(skipped),
                                                   "first_id": min(new, default=None), "last_id": max(new, default=None)}))
    # A rerun after a kill in the embedding phase stores nothing new, yet the first run's entries
    # wait for their vectors: a rerun that met entries already present finishes them too.
    if new or memory.store.pending():
        try:
            embed_pending(memory, on_embed_progress)
        except (ModelError, ConfigError) as exc:
            memory.warnings.append(f"vectors not stored (queued for `crib reindex`): {exc}")
    return reports
