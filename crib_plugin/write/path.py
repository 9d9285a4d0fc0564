"""The write path behind ``Memory.write_many``: compute first, then write in short transactions.

Why it is shaped like this (issue 10):

* **Slow work outside the lock.** Embedding (of the content and of its recall cue), fact
  extraction and, with ``CRIB_CUE_MODEL``, a model-written cue run before the write transaction
  starts, each within a budget (``CRIB_EMBED_BUDGET``, ``CRIB_EXTRACT_BUDGET``).
  Work that fails or overruns is queued in ``pending_embeddings`` (an embedding per space, an
  extraction under :data:`~crib_plugin.store.sqlite.EXTRACT_QUEUE`) and ``crib reindex`` does it
  later — the entry itself is always kept. An import (and ``CRIB_WRITE_VECTORS=background``) queues
  every vector on purpose and embeds it after the write (:mod:`crib_plugin.write.deferred`).
* **One transaction per batch.** The entries of a batch (:data:`WRITE_BATCH`), their index rows,
  vectors, queue rows and facts are written in one ``BEGIN IMMEDIATE`` transaction, so a kill
  keeps every batch committed before it and loses nothing half-written.
* **Resumable.** Duplicates (same type, content and metadata — already stored, or earlier in the
  same call) are skipped *before* anything is embedded, and checked again under the write lock,
  so a rerun after a kill neither stores twice nor redoes the embedding of what was kept.
"""

from __future__ import annotations

import json
from dataclasses import dataclass, field, replace
from typing import TYPE_CHECKING, Any, Callable, Sequence, TypeVar

from ..core.authorship import authored
from ..core.config import embed_budget, extract_budget, get_settings
from ..core.cues import cue_of, cue_space_key, embed_cues, with_cue
from ..core.deadline import Overrun, call_within
from ..core.errors import ModelError, ModelUnavailable
from ..core.records import Entry, Triple
from ..core.write_types import EMBED_BATCH, WriteReport
from ..plugins.trace import swallowed
from ..store import facts as facts_mod
from ..store.base_vectors import to_blob
from ..store.sqlite_rows import EXTRACT_QUEUE, content_hash
from .clean import clean_cue
from .cue_model import CueWriter, cue_writer
from .deferred import DEFERRED, MODEL_LATER, in_background, models_in_background, start_background_embedder
from .same_text import same_text_report
from .supersede import record_supersession

if TYPE_CHECKING:  # pragma: no cover
    from ..core.write_types import NewEntry, WriteReport
    from ..plugins.contracts import MemoryLike  # the protocol: no import of the facade above

T = TypeVar("T")
WRITE_BATCH = 64  # entries per transaction on the bulk paths (import, write_many)
# Bulk writes (more than one entry: import, evaluation stores) get budgets ten times longer: a
# budget is there to bound a hanging model, and a loaded machine must not leave a bulk import
# without vectors. A single `crib write` gets the configured budgets as they are.
BULK_BUDGET_SCALE = 10.0
Progress = Callable[[int, int], None]


def run_within(fn: Callable[[], T], budget: float, what: str) -> T:
    """``fn()`` within ``budget`` seconds (:func:`~crib_plugin.core.deadline.call_within`);
    :class:`ModelUnavailable` when the budget runs out (the thread is abandoned). Exceptions of
    ``fn`` are re-raised here."""
    try:
        return call_within(budget, fn, name=f"crib-{what}", what=what)
    except Overrun:
        raise ModelUnavailable(f"{what} took longer than its budget of {budget:g}s") from None


def index_entry(memory: "MemoryLike", entry: Entry, notes: list[str]) -> None:
    """Offer a newly stored ``entry`` to every registered channel that has an ``index`` method."""
    channels: dict[str, Any] = memory.registry.channels
    for name, channel in channels.items():
        index = getattr(channel, "index", None)
        if not callable(index):
            continue
        try:
            with memory.store.transaction():
                index(memory, entry)
        except Exception as exc:  # a plugin channel's bug must not lose the memory
            swallowed(f"channel {name!r} indexing entry {entry.id}", exc)
            notes.append(f"channel {name} could not index entry {entry.id}: {exc}")


@dataclass
class Budgets:
    """Per-call budgets and the memory of a model that already failed in this call (so a bulk
    import does not wait a full budget again for every batch once the model is known to be down)."""

    embed: float
    extract: float
    embed_down: str | None = None
    extract_down: str | None = None
    cue_down: str | None = None
    models_later: bool = False
    """The model work (facts, cue) is left to the background worker (:mod:`crib_plugin.write.model_work`)."""
    notes: list[str] = field(default_factory=list)


def _dedupe_key(item: "NewEntry") -> tuple[str, str, str]:
    return (item.type, content_hash(item.content), json.dumps(item.metadata, sort_keys=True, ensure_ascii=False))


def embed_batch(memory: "MemoryLike", items: Sequence["NewEntry"], budgets: Budgets) -> tuple[list[Any] | None, list[Any] | None, str]:
    """Vectors for ``items`` and for their recall cues (:mod:`crib_plugin.core.cues`; ``None`` at the
    positions without one), or ``None, None`` with the reason when the embedder failed or overran.

    Content and cues go through the same model in the same budget: either both are stored or the
    entry is queued, and ``crib reindex`` embeds both."""
    if budgets.embed_down is not None:
        return None, None, budgets.embed_down
    notes: list[str] = []
    previous = memory.previous_in_thread(items)

    cues = [cue_of(i.metadata) for i in items]
    budget = budgets.embed * max(1.0, len(items) / EMBED_BATCH) * (2.0 if any(cues) else 1.0)
    try:
        memory.embedder()  # made (and its modules imported) before the clock starts: the budget is the model's
    except Exception as exc:  # unknown or broken embedder: the entry is still kept, its vector queued
        budgets.embed_down = f"vector not stored (queued for `crib reindex`): {exc}"
        return None, None, budgets.embed_down

    def both() -> tuple[list[Any] | None, list[Any] | None]:
        vectors = memory.embed_texts([i.content for i in items], previous, notes)
        return vectors, (embed_cues(memory, cues, notes) if vectors is not None else None)

    try:
        vectors, cue_vectors = run_within(both, budget, "embedding")
    except ModelUnavailable as exc:
        vectors, cue_vectors, notes = None, None, [f"vector not stored (queued for `crib reindex`): {exc}"]
    if vectors is None or cue_vectors is None:
        budgets.embed_down = notes[0] if notes else "embedder unavailable"
        return None, None, budgets.embed_down
    return vectors, cue_vectors, ""


def with_model_cues(memory: "MemoryLike", items: Sequence["NewEntry"], budgets: Budgets) -> tuple[list["NewEntry"], str]:
    """``items``, those without a recall cue given one by the cue model (``CRIB_CUE_MODEL``,
    :mod:`crib_plugin.models.ollama.cue_writer`), and the reason when some could not get one.

    Opt-in: without the setting nothing is called. A cue the model writes is cleaned like the
    agent's and marked ``when_by: "<model>"``. Each call has the extraction budget; the first failure
    (model down, too slow, a bad reply) leaves this and every later item of the call without a cue,
    never without its memory."""
    model = get_settings().cue_model
    if not model:
        return list(items), ""

    def cued(item: NewEntry, writer: CueWriter) -> NewEntry:
        cue = clean_cue(run_within(lambda: writer.write_cue(item.content, item.type), budgets.extract, "cue writing"))
        return replace(item, metadata=with_cue(item.metadata, cue, model)) if cue else item

    out: list[NewEntry] = []
    writer: CueWriter | None = None  # one client for the call, made when first needed
    for item in items:
        if budgets.cue_down is None and not cue_of(item.metadata):
            try:
                writer = writer or cue_writer(model)
                item = cued(item, writer)
            except Exception as exc:  # the model's failure (or a plugin's bug) must not lose the entry
                budgets.cue_down = f"no recall cue written: {exc}"
        out.append(item)
    return out, budgets.cue_down or ""


def model_facts(memory: "MemoryLike", items: Sequence["NewEntry"], budgets: Budgets, extract: bool) -> list[tuple[Any, str]]:
    """Each item's ``(triples, note)``: extracted now, or ``(None, MODEL_LATER)`` when the worker
    will (the model's share of the write is left to it: :mod:`crib_plugin.write.model_work`)."""
    if budgets.models_later:  # nothing here waits on a model
        return [(None, MODEL_LATER)] * len(items)
    return [extract_one(memory, item.content, budgets) if extract else ([], "") for item in items]


def extract_one(memory: "MemoryLike", content: str, budgets: Budgets) -> tuple[list[Triple] | None, str]:
    """Triples for ``content``; ``None`` with the reason when extraction failed or overran."""
    if budgets.extract_down is not None:
        return None, budgets.extract_down
    try:
        memory.extractor()  # chosen (an `auto` probe has its own short timeout) and made before the clock starts
        triples = run_within(lambda: list(memory.extractor().extract(content)), budgets.extract, "fact extraction")
    except Exception as exc:  # an extractor failure (or a plugin's bug) must not lose the entry
        budgets.extract_down = f"facts not extracted (queued for `crib reindex`): {exc}"
        return None, budgets.extract_down
    return triples, ""


def write_prepared(
    memory: "MemoryLike",
    prepared: Sequence["NewEntry"],
    *,
    dedupe: bool = True,
    extract: bool = True,
    batch: int | None = None,
    on_progress: Progress | None = None,
    audit: str | None = "write",
    same_text: bool = False,
    defer_vectors: bool = False,
) -> list["WriteReport"]:
    """Write validated entries batch by batch (see the module docstring); one report per item.

    ``audit`` names the action recorded in the audit table for each new entry (``None``: none).
    ``same_text`` (``Memory.write``) also counts the same text as a duplicate (:mod:`.same_text`);
    ``defer_vectors`` queues every vector, embedded later (:mod:`crib_plugin.write.deferred`)."""
    scale = 1.0 if len(prepared) <= 1 else BULK_BUDGET_SCALE
    budgets = Budgets(embed=embed_budget() * scale, extract=extract_budget() * scale)
    budgets.models_later = len(prepared) == 1 and models_in_background(memory, extract)  # a bulk write keeps its 10x budgets
    reports: list[WriteReport | None] = [None] * len(prepared)
    seen: dict[tuple[str, str, str], int] = {}  # dedupe key → index of its first item in this call
    batch = WRITE_BATCH if batch is None else batch  # read at call time (tests shrink it)
    background = not defer_vectors and in_background(memory.store, len(prepared), model_loaded=memory.embedder_loaded)
    for start in range(0, len(prepared), max(1, batch)):
        indexes = range(start, min(start + max(1, batch), len(prepared)))
        todo: list[int] = []
        for index in indexes:
            item = prepared[index]
            if dedupe and same_text:
                same = same_text_report(memory, item)
                if same is not None:
                    reports[index] = same
                    continue
            if dedupe:
                key = _dedupe_key(item)
                dup = memory.store.find_duplicate(item.type, item.content, item.metadata)
                if dup is not None:
                    reports[index] = WriteReport(dup, duplicate=True)
                    continue
                if key in seen:
                    reports[index] = None  # filled once its first copy is written
                    continue
                seen[key] = index
            todo.append(index)
        _write_batch(memory, prepared, todo, reports, budgets, extract=extract, dedupe=dedupe, audit=audit, defer=defer_vectors or background)
        if dedupe:  # later copies of an item written in this call point at it
            for index in indexes:
                if reports[index] is None:
                    first = reports[seen[_dedupe_key(prepared[index])]]
                    assert first is not None
                    reports[index] = WriteReport(first.entry_id, duplicate=True)
        if on_progress is not None:
            on_progress(indexes.stop, len(prepared))
    done = [r for r in reports if r is not None]
    if background or budgets.models_later:
        return start_background_embedder(memory.store.path, done, models=budgets.models_later)
    return done


def _write_batch(
    memory: "MemoryLike",
    prepared: Sequence["NewEntry"],
    todo: Sequence[int],
    reports: list[Any],
    budgets: Budgets,
    *,
    extract: bool,
    dedupe: bool,
    audit: str | None = None,
    defer: bool = False,
) -> None:
    """Compute the batch's cues (when a cue model is set), vectors and facts, then write it in one
    IMMEDIATE transaction."""
    if not todo:
        return

    store = memory.store
    items, cue_note = ([prepared[i] for i in todo], "") if budgets.models_later else with_model_cues(memory, [prepared[i] for i in todo], budgets)
    vectors, cue_vectors, embed_note = (None, None, DEFERRED) if defer else embed_batch(memory, items, budgets)
    key = memory.embedder_key() if vectors else None
    extracted = model_facts(memory, items, budgets, extract)
    space = memory.embedder_name()
    with store.transaction():
        table = store.ensure_vector_space(key, len(vectors[0])) if vectors and key else None
        cue_table = cue_space(store, key, cue_vectors)
        for position, index in enumerate(todo):
            item = items[position]
            if dedupe:  # another writer may have stored it while this batch was being computed
                dup = store.find_duplicate(item.type, item.content, item.metadata)
                if dup is not None:
                    reports[index] = WriteReport(dup, duplicate=True)
                    continue
            vector = vectors[position] if vectors is not None and table is not None else None
            reports[index] = _insert_item(
                memory, item, vector, table, space, embed_note, extracted[position], audit=audit,
                cue=(cue_table, cue_vectors[position]) if cue_table and cue_vectors and cue_vectors[position] is not None else None,
            )
            if cue_note and not cue_of(item.metadata):
                reports[index].notes.append(cue_note)
        if vectors and store.embedder_name() is None:
            store.set_embedder_name(space)
    refresh = getattr(store, "refresh_vector_index", None)  # a big store's side index (SQLite)
    for written in (table, cue_table):
        if refresh is not None and written:
            refresh(written)


def cue_space(store: Any, key: str | None, cue_vectors: Sequence[Any] | None) -> str | None:
    """The cue space's table for the embedder ``key`` (created once), when this batch has cues."""
    found = [v for v in cue_vectors or () if v is not None]
    if not key or not found:
        return None

    return str(store.ensure_vector_space(cue_space_key(key), len(found[0])))


def _insert_item(
    memory: "MemoryLike",
    item: "NewEntry",
    vector: Any,
    table: str | None,
    space: str,
    embed_note: str,
    extracted: tuple[Any, str],
    *,
    audit: str | None,
    cue: tuple[str, Any] | None = None,
) -> Any:
    """Write one prepared entry inside the batch's transaction: the row, its vector (or a queued
    embedding) and its cue's vector, its facts (or a queued extraction), supersession, channel
    indexes and audit. Returns its :class:`WriteReport`."""
    store = memory.store
    notes: list[str] = []
    created_at = item.created_at or ""  # Memory.prepare always fills it (normalise_iso)
    entry_id = store.insert_entry(item.type, item.content, created_at, item.metadata)
    if vector is not None and table is not None:
        store.put_vector(table, entry_id, to_blob(vector))
        if cue is not None:
            store.put_vector(cue[0], entry_id, to_blob(cue[1]))
    else:
        store.queue_embedding(entry_id, space, embed_note or "embedder unavailable")
        notes.append(embed_note if embed_note != DEFERRED else "")
    triples, extract_note = extracted
    if triples is None:
        store.queue_embedding(entry_id, EXTRACT_QUEUE, extract_note)
        notes.append(extract_note if extract_note != MODEL_LATER else "")
        triples = []
    fact_ids = facts_mod.record_facts(store, entry_id, triples, valid_from=created_at, entry_type=item.type)
    record_supersession(
        store, entry_id, item.type, item.content, created_at, fact_ids, table=table,
        vector=to_blob(vector) if vector is not None and table is not None else None, deferred=embed_note == DEFERRED,
    )
    index_entry(memory, Entry(entry_id, item.type, item.content, created_at, item.metadata), notes)
    if audit:
        store.record_audit(audit, entry_id, authored({"type": item.type}))
    return WriteReport(entry_id, embedded=table is not None, facts=len(fact_ids), notes=[n for n in notes if n])


def drain_extractions(memory: "MemoryLike", on_progress: Progress | None = None, batch: int = WRITE_BATCH) -> int:
    """Extract the facts of every entry queued under ``EXTRACT_QUEUE``; returns how many.

    Maintenance (``crib reindex``): no budget beyond the extractor's own timeouts. Each batch is
    extracted first and then written in one transaction that records the facts and clears the
    queue rows; an extractor failure stops the drain with a :class:`ModelError`, leaving the rest
    queued.
    """
    store = memory.store
    queued = store.pending(EXTRACT_QUEUE)
    done = 0
    for start in range(0, len(queued), batch):
        entries = store.get_entries(queued[start:start + batch])
        found: list[tuple[int, list[Triple]]] = []
        for entry_id, entry in sorted(entries.items()):
            try:
                found.append((entry_id, list(memory.extractor().extract(entry.content))))
            except Exception as exc:  # report it; what was extracted so far is still written
                _record_extractions(store, facts_mod, entries, found, queued[start:start + batch], EXTRACT_QUEUE)
                raise ModelError(f"fact extraction failed after {done + len(found)} queued entries: {exc}") from exc
        _record_extractions(store, facts_mod, entries, found, queued[start:start + batch], EXTRACT_QUEUE)
        done += len(found)
        if on_progress is not None:
            on_progress(done, len(queued))
    return done


def _record_extractions(store: Any, facts_mod: Any, entries: dict[int, Any], found: Sequence[tuple[int, list[Triple]]],
                        ids: Sequence[int], queue: str) -> None:
    with store.transaction():
        for entry_id, triples in found:
            entry = entries[entry_id]
            facts_mod.record_facts(store, entry_id, triples, valid_from=entry.created_at, entry_type=entry.type)
            store.clear_pending(entry_id, queue)
        for entry_id in ids:  # queue rows of entries forgotten meanwhile
            if entry_id not in entries:
                store.clear_pending(entry_id, queue)
