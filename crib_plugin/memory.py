"""The facade every host uses: ``Memory.write / search / retrieve / forget / reindex``.

One ``Memory`` wraps one store (a SQLite file by default), the plugin manager's registry of
channels and models, and the settings read from the environment. Models are created lazily, so
a process that only writes text never loads an embedder it does not need, and a retrieval that
runs only the full-text channel never imports numpy's model code.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any, Callable, Iterable, Iterator, Sequence

from .config import Settings, load_settings
from .errors import ConfigError, CribError, InputError, ModelError
from .fusion import fit_budget
from .plugins import get_plugin_manager, registry
from .records import Entry, Hit, Retrieval, Triple
from .render import CLASSIC, render_block
from .timeutil import normalise_iso

if TYPE_CHECKING:  # pragma: no cover
    from .store.base import Store

DEFAULT_MAX_ITEMS = 10
DEFAULT_MAX_FACTS = 10
EMBED_BATCH = 32



@dataclass
class WriteReport:
    """What the last write did: the entry id and which parts of the write path ran."""

    entry_id: int
    duplicate: bool = False
    embedded: bool = False
    facts: int = 0
    notes: list[str] = field(default_factory=list)


@dataclass
class NewEntry:
    """One entry to write (the import and bulk-write unit)."""

    content: str
    type: str = "note"
    created_at: str | None = None
    metadata: dict[str, Any] = field(default_factory=dict)


class Memory:
    """Persistent memory for one project: a store plus the channels and models that serve it."""

    def __init__(
        self,
        path: str | Path | None = None,
        *,
        settings: Settings | None = None,
        pm: Any = None,
        create: bool = True,
        embedder: Any = None,
        extractor: Any = None,
        readonly: bool = False,
    ) -> None:
        self.settings = settings or load_settings()
        self.path = Path(path) if path is not None else self.settings.db
        self.pm = pm or get_plugin_manager()
        self._create = create
        self._readonly = readonly  # read commands: opened read-only, never created or migrated
        self._store: Store | None = None
        self._embedder = embedder
        self._extractor = extractor
        self.warnings: list[str] = []
        self.last_write: WriteReport | None = None

    @property
    def registry(self) -> Any:
        """The plugin manager's registry, current: a plugin registered later is seen at once."""
        return registry(self.pm)

    # -- lifecycle -------------------------------------------------------------------------

    @property
    def store(self) -> Store:
        """The open store (opened on first use; never created when ``create=False``)."""
        if self._store is None:
            from .store import open_store

            self._store = open_store(self.path, create=self._create and not self._readonly, readonly=self._readonly)
        return self._store

    def close(self) -> None:
        if self._embedder is not None:
            from .prefetch import PrefetchedEmbedder

            if isinstance(self._embedder, PrefetchedEmbedder):
                self._embedder.close()  # a worker that was never asked is stopped and reaped
        if self._store is not None:
            self._store.close()
            self._store = None

    def __enter__(self) -> "Memory":
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    # -- models ----------------------------------------------------------------------------

    def embedder_name(self) -> str:
        """The store's embedder (recorded at first use); ``CRIB_EMBEDDER`` only picks it for a new store."""
        recorded = self.store.embedder_name()
        wanted = self.settings.embedder
        if recorded and wanted and wanted != recorded:
            note = (
                f"CRIB_EMBEDDER={wanted} ignored: this store's vectors were made by {recorded!r}; "
                f"run `crib reindex --embedder {wanted}` to switch"
            )
            if note not in self.warnings:
                self.warnings.append(note)
        return recorded or wanted or "minilm"

    def prefetch(self, text: str, *, worker: Any = None, give_up_at: float | None = None) -> bool:
        """Embed ``text`` in a forked worker while the rest of recall runs.

        For cold per-prompt processes (``crib retrieve``, the prompt hook): call it once the
        prompt is known and before :meth:`recall`; ``worker`` is one already forked by
        :func:`crib_plugin.prefetch.fork_for` before this Memory existed; ``give_up_at`` (a
        ``time.perf_counter`` value) is when the vector channel stops waiting for it. Returns
        whether the worker is in use; when it is, :meth:`embedder` answers from it.
        """
        from . import prefetch

        if self._embedder is not None or not self._embedding_needed():
            if worker is not None:
                worker.cancel()
            return False
        if worker is None:
            self._embedder = prefetch.start(self, text, give_up_at=give_up_at)
        else:
            self._embedder = prefetch.attach(worker, self, give_up_at=give_up_at)
        return self._embedder is not None

    def _embedding_needed(self) -> bool:
        """Whether a selected channel asks for the prompt's embedding (``needs_embedding``)."""
        names = self.settings.channels or list(self.registry.channels)
        return any(getattr(self.registry.channels.get(n), "needs_embedding", False) for n in names)

    def while_embedding(self, entry_ids: Sequence[int], text: str) -> None:
        """Use the time a prefetch worker is still embedding the prompt: read ahead what the steps
        after fusion need and the vector does not decide — the relevance gate's term statistics,
        and the stored vectors of the hits found so far, which the reranker compares.

        Does nothing in a warm process (no worker) or once the worker has answered. The vector
        table is the store's only space for this embedder; with several (or none) there is
        nothing safe to read ahead, and the reranker reads what it needs itself.
        """
        from .prefetch import PrefetchedEmbedder

        if not (isinstance(self._embedder, PrefetchedEmbedder) and self._embedder.pending):
            return
        try:
            from . import rerank  # noqa: F401 - imported now rather than after the vector arrives
            from .relevance import term_weights

            term_weights(self, text)
            prefix = f"{self.embedder_name()}:"
            tables = [table for key, (table, _dim) in self.store.vector_spaces().items() if key.startswith(prefix)]
            if len(tables) == 1 and entry_ids:
                self.store.prefetch_vectors(tables[0], entry_ids)
        except CribError:  # reading ahead is an optimisation: the steps after fusion say what failed
            pass

    def embedder(self) -> Any:
        """The embedder instance (created once). Raises ConfigError / ModelError."""
        if self._embedder is None:
            self._embedder = self.registry.make("embedders", self.embedder_name())
        return self._embedder

    def embedder_key(self) -> str:
        from .models.base import embedder_key

        return embedder_key(self.embedder())

    def vector_floor(self) -> float:
        """Per-hit cosine floor: a calibrated value, else a fixed margin below the relevance gate."""
        from .relevance import floor_below_gate, vector_gate

        stored = self.store.vector_floor(self.embedder_key())
        if stored is not None:
            return stored
        return vector_gate(self) - floor_below_gate(self.embedder_key())

    def channel_weights(self) -> dict[str, float]:
        """Fusion weights: each channel's own ``weight`` (default 1.0), then the store's overrides."""
        weights = {name: float(getattr(ch, "weight", 1.0)) for name, ch in self.registry.channels.items()}
        return {**weights, **self.store.fusion_weights()}

    def extractor_name(self) -> str:
        """``CRIB_EXTRACTOR`` (rules, ollama, auto); auto = Ollama when it answers with the model, else rules."""
        wanted = self.settings.extractor
        if wanted != "auto":
            return wanted
        from .models.ollama_probe import ollama_has_model

        model = self.settings.extraction_model
        return "ollama" if ollama_has_model(model) else "rules"

    def extractor(self) -> Any:
        if self._extractor is None:
            self._extractor = self.registry.make("extractors", self.extractor_name())
        return self._extractor

    def _extract(self, content: str, notes: list[str]) -> list[Triple]:
        try:
            return list(self.extractor().extract(content))
        except Exception as exc:  # an extractor failure (or a plugin's bug) must not lose the entry
            notes.append(f"facts not extracted: {exc}")
            return []

    def _embed(self, contents: Sequence[str], previous: Sequence[str | None], notes: list[str]) -> list[Any] | None:
        """Document vectors for ``contents``; ``None`` (with a note) when the embedder fails.

        An entry that follows another in its thread is embedded *with* it: its vector is the
        normalised sum of the vector of its own text and that of the previous entry plus its own
        text. A short reply then lands near its topic (LoCoMo vector R@10 42.5 → 48.9, see
        ``bench/locomo.py``), while its own words still dominate.
        """
        try:
            embedder = self.embedder()
            with_context = [i for i, prev in enumerate(previous) if prev]
            texts = list(contents) + [f"{previous[i]}\n{contents[i]}" for i in with_context]
            vectors: list[Any] = []
            for start in range(0, len(texts), EMBED_BATCH):
                vectors.extend(embedder.embed_documents(texts[start:start + EMBED_BATCH]))
        except Exception as exc:  # model down or a plugin's bug: keep the entry, queue its vector
            notes.append(f"vector not stored (queued for `crib reindex`): {exc}")
            return None
        from .models.base import l2_normalise

        own = vectors[: len(contents)]
        for offset, index in enumerate(with_context):
            own[index] = l2_normalise(own[index] + vectors[len(contents) + offset])
        return own

    # -- write -----------------------------------------------------------------------------

    def write(
        self,
        text: str,
        type: str | None = None,
        created_at: str | None = None,
        metadata: dict[str, Any] | None = None,
        *,
        dedupe: bool = True,
        extract: bool = True,
    ) -> int:
        """Store one memory and return its id. ``type=WORD`` prefixes are honoured.

        One transaction writes the entry, its index rows, its vector (or a queue row when the
        embedder failed) and its consolidated facts. An identical entry (same type, content and
        metadata) is not stored twice: its id is returned.
        """
        from .write import parse_write

        parsed = parse_write(text, type, self.registry.types or None)
        meta = dict(metadata) if isinstance(metadata, dict) else (metadata or {})  # non-objects: refused below
        item = NewEntry(parsed.content, parsed.type, created_at, meta)
        reports = self.write_many([item], dedupe=dedupe, extract=extract, cleaned=True)
        self.last_write = reports[0]
        return reports[0].entry_id

    def write_many(
        self,
        items: Sequence[NewEntry],
        *,
        dedupe: bool = True,
        extract: bool = True,
        cleaned: bool = False,
        on_progress: Callable[[int, int], None] | None = None,
        audit: str | None = "write",
    ) -> list[WriteReport]:
        """Store several entries (the import and benchmark path): all validated first, then
        embedded and written batch by batch, one transaction each (:mod:`crib_plugin.writepath`).
        ``on_progress(done, total)`` is called after each batch. ``audit`` is the action recorded
        per new entry in the audit table (``None``: the caller records one row for the batch, as
        import does)."""
        from .limits import check_entry, check_metadata
        from .write import clean_content, validate_type
        from .writepath import write_prepared

        prepared: list[NewEntry] = []
        for item in items:
            if not cleaned:
                check_entry(item.content)  # before the cleaning regexes run over it
            content = item.content if cleaned else clean_content(item.content)
            if not content:
                raise InputError("nothing to write: the text is empty (after removing memory blocks)")
            check_entry(content)  # size, NUL, lone surrogates: one clear line, nothing stored
            check_metadata(item.metadata)
            known = self.registry.types or None
            prepared.append(NewEntry(content, validate_type(item.type, known), normalise_iso(item.created_at), item.metadata))
        return write_prepared(self, prepared, dedupe=dedupe, extract=extract, on_progress=on_progress, audit=audit)

    def _previous_in_thread(self, items: Sequence[NewEntry]) -> list[str | None]:
        """For each new entry, the text of the entry it follows in its thread (store, then batch)."""
        from .store.sqlite import thread_of

        last: dict[str, str | None] = {}
        previous: list[str | None] = []
        for item in items:
            thread = thread_of(item.metadata)
            if thread is None:
                previous.append(None)
                continue
            if thread not in last:
                entry = self.store.last_in_thread(thread)
                last[thread] = entry.content if entry else None
            previous.append(last[thread])
            last[thread] = item.content
        return previous

    # -- read ------------------------------------------------------------------------------

    def recall(self, text: str, *, channels: Sequence[str] | None = None) -> Retrieval:
        """Every channel's ranking fused into one list (floors applied, budget not yet)."""
        from .recall import recall

        return recall(self, text, channels=channels)

    def search(self, query: str, limit: int = 10, *, channels: Sequence[str] | None = None) -> list[Hit]:
        """The best ``limit`` hits for ``query``: entries with fused score and channels."""
        return self.recall(query, channels=channels).hits[:limit]

    def select(
        self,
        retrieval: Retrieval,
        *,
        budget: int | None = None,
        max_items: int = DEFAULT_MAX_ITEMS,
        exclude: Iterable[int] = (),
        per_entry: bool = True,
    ) -> Retrieval:
        """Cut a retrieval to what fits the character budget (best first); record what was dropped.

        ``per_entry=False`` skips the per-entry cut (:mod:`crib_plugin.evidence`): the evaluation
        uses it to measure what the cut changes.
        """
        from .relevance import close_if_irrelevant

        budget = budget or self.settings.budget
        decision = close_if_irrelevant(self, retrieval)
        if decision.open and per_entry:
            self._cut_per_entry(retrieval, decision)
        excluded = set(exclude)
        candidates = [h for h in retrieval.hits if h.entry.id not in excluded]
        for hit in retrieval.hits:
            if hit.entry.id in excluded:
                retrieval.dropped.append((hit.entry.id, "already injected this session"))
        facts = retrieval.facts[:DEFAULT_MAX_FACTS]
        fact_cost = sum(len(f.subject) + len(f.predicate) + len(f.object) + 30 for f in facts)
        from .rerank import rerank_candidates  # reorders only when the candidates do not all fit

        retrieval.hits = candidates
        candidates = rerank_candidates(self, retrieval, budget, max_items, overhead=300 + fact_cost)
        kept, dropped = fit_budget(
            [h.entry.content for h in candidates], budget, overhead=300 + fact_cost, max_items=max_items
        )
        for index in dropped:
            retrieval.dropped.append((candidates[index].entry.id, "budget"))
        retrieval.hits = [candidates[i] for i in kept]
        retrieval.facts = facts
        from .supersede import attach_successors

        attach_successors(self, retrieval)  # a superseded entry is never shown without its successor
        return retrieval

    def _cut_per_entry(self, retrieval: Retrieval, decision: Any) -> None:
        """Keep only the hits whose own evidence clears the cut (:mod:`crib_plugin.evidence`)."""
        from .evidence import judge
        from .relevance import FLOOR_BELOW_GATE

        gate = decision.vector_gate
        floor = None
        if gate is not None:
            try:
                floor = self.vector_floor()
            except CribError:
                floor = gate - FLOOR_BELOW_GATE
        kept, evidence, cut = judge(self, retrieval, gate=gate, floor=floor, time_only=decision.time_only)
        for ev in evidence:
            if not ev.kept:
                retrieval.dropped.append((ev.entry_id, f"per-entry cut: {ev.reason}"))
        retrieval.hits = kept
        retrieval.evidence = (evidence, cut)
        # A fact bears on the prompt when an entry that stated it was kept, or the facts channel
        # matched it on two counts (its source passed that channel's floor); the others are noise.
        bearing = {h.entry.id for h in kept} | {
            h.entry_id for c in retrieval.channels if c.channel == "facts" and c.ran for h in c.hits if h.passed_floor
        }
        for fact in retrieval.facts:
            if not bearing & set(fact.source_entry_ids):
                retrieval.notes.append((0, f"fact {fact.subject} → {fact.predicate} → {fact.object} dropped: no kept or strongly matched source"))
        retrieval.facts = [f for f in retrieval.facts if bearing & set(f.source_entry_ids)]

    def render(self, retrieval: Retrieval, *, template: str = CLASSIC) -> str:
        """The rendered block for a (selected) retrieval, or ``""`` when it is empty.

        With ``CRIB_LOG`` set, each render appends one JSON line describing the retrieval.
        """
        block = ""
        if not retrieval.empty:
            ran = [c.channel for c in retrieval.channels if c.ran]
            skipped = [f"{c.channel}: {c.note}" for c in retrieval.channels if not c.ran]
            block = render_block(
                [h.entry for h in retrieval.hits],
                retrieval.facts,
                template=template,
                user_dir=self.settings.templates,
                channels=ran,
                skipped=skipped,
                types=self.registry.types,
            )
        if self.settings.log_path is not None:
            from .retrieval_log import log_retrieval

            log_retrieval(self.settings.log_path, retrieval, block)
        return block

    def retrieve(
        self,
        prompt: str,
        *,
        template: str = CLASSIC,
        budget: int | None = None,
        exclude: Iterable[int] = (),
        channels: Sequence[str] | None = None,
    ) -> str:
        """The block to inject for ``prompt``: relevant memories within budget, or ``""``."""
        retrieval = self.select(self.recall(prompt, channels=channels), budget=budget, exclude=exclude)
        self.last_retrieval = retrieval
        return self.render(retrieval, template=template)

    # -- maintenance -----------------------------------------------------------------------

    def forget(self, entry_id: int) -> bool:
        """Delete an entry from every channel and index (:func:`crib_plugin.manage.forget`, audited).
        False if it did not exist."""
        from .manage import forget

        if not 0 < entry_id < 2**63:  # no SQLite rowid is outside this (and apsw would overflow)
            return False

        return bool(forget(self, [entry_id]))

    def reindex(self, embedder: str | None = None, on_progress: Callable[[int, int], None] | None = None) -> dict[str, Any]:
        """Drain the queues: extract the facts of entries whose extraction was deferred, then
        embed every entry that lacks a vector in the (new) active embedder's space.

        ``embedder`` switches the store to another embedder explicitly: its vectors go to their own
        table, and the store records the new choice only once every entry has been embedded.
        Each batch commits on its own (a kill keeps it; a rerun continues from the next);
        ``on_progress(done, total)`` follows the batches.
        """
        from .writepath import drain_extractions

        extracted = drain_extractions(self, on_progress)
        store = self.store
        if embedder:
            embedder = embedder.lower()
            if embedder not in self.registry.embedders:
                raise ConfigError(f"unknown embedder {embedder!r} (registered: {', '.join(sorted(self.registry.embedders))})")
            self._embedder = self.registry.make("embedders", embedder)
        model = self.embedder()
        from .channels.vectors import to_blob
        from .models.base import embedder_key

        key = embedder_key(model)
        probe = model.embed_documents(["crib reindex probe"])
        table = store.ensure_vector_space(key, int(probe.shape[1]))
        missing = store.entries_without_vector(table)
        done = 0
        if on_progress is not None:
            on_progress(0, len(missing))
        for start in range(0, len(missing), EMBED_BATCH):
            ids = missing[start:start + EMBED_BATCH]
            entries = store.get_entries(ids)
            previous = [self._previous_of(entries[i]) for i in ids]
            notes: list[str] = []
            vectors = self._embed([entries[i].content for i in ids], previous, notes)
            if vectors is None:
                raise ModelError(notes[0])
            with store.transaction():
                for entry_id, vector in zip(ids, vectors):
                    store.put_vector(table, entry_id, to_blob(vector))
                    store.clear_pending(entry_id, model.name)
            done += len(ids)
            if on_progress is not None:
                on_progress(done, len(missing))
        with store.transaction():
            store.set_embedder_name(model.name)
            store.clear_embedded_pending(table)
            from .manage import record_audit

            record_audit(store, "reindex", None, embedder=key, embedded=done, facts_extracted=extracted)
        return {"embedder": key, "embedded": done, "total": store.count_entries(), "pending": len(store.pending()), "facts_extracted": extracted}

    def _previous_of(self, entry: Entry) -> str | None:
        from .store.sqlite import thread_of

        thread = thread_of(entry.metadata)
        if thread is None:
            return None
        before = self.store.thread_neighbours(thread, entry.id)[0]
        found = self.store.get_entry(before) if before is not None else None
        return found.content if found else None

    def export(self) -> Iterator[dict[str, Any]]:
        """Every entry as a JSON-ready dict (``id``, ``type``, ``content``, ``created_at``, ``metadata``)."""
        for entry in self.store.iter_entries():
            yield entry.to_json()

    def import_records(
        self, records: Iterable[dict[str, Any]], on_progress: Callable[[int, int], None] | None = None
    ) -> list[WriteReport]:
        """Import JSON objects (``content`` required; ``type``, ``created_at``, ``metadata``).

        All records are validated before anything is written, so a bad line loses nothing and
        writes nothing. Then they are written in batches that each commit (a kill keeps every
        batch before it; a rerun skips what is stored); ``on_progress(done, total)`` follows it.
        """
        from .limits import check_entry, check_metadata
        from .write import validate_type

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
                entry_type = validate_type(str(record.get("type") or "note"), self.registry.types or None)
                created = normalise_iso(record.get("created_at"))
            except InputError as exc:
                raise InputError(f"record {number}: {exc}") from exc
            items.append(NewEntry(content, entry_type, created, metadata))
        reports = self.write_many(items, on_progress=on_progress, audit=None)
        new = [r.entry_id for r in reports if not r.duplicate]
        with self.store.transaction():
            from .manage import record_audit

            record_audit(self.store, "import", None, entries=len(new), duplicates=len(reports) - len(new),
                         first_id=min(new, default=None), last_id=max(new, default=None))
        return reports

    def entry(self, entry_id: int) -> Entry | None:
        return self.store.get_entry(entry_id)


__all__ = ["Memory", "NewEntry", "WriteReport", "ModelError"]
