"""The facade every host uses: ``Memory.write / search / retrieve / forget / reindex``.

One ``Memory`` wraps one store (a SQLite file by default), the plugin manager's registry of
channels and models, and the settings from the environment. Models are created lazily: a process
that only writes text never loads an embedder, nor a full-text-only retrieval numpy's model code.
"""

from __future__ import annotations

from pathlib import Path
from typing import TYPE_CHECKING, Any, Callable, Iterable, Iterator, Sequence

from .core.config import Settings, load_settings
from .core.dburl import as_location
from .core.errors import ModelError
from .core.records import Entry, Hit, Retrieval, Triple
from .core.write_types import EMBED_BATCH, NewEntry, WriteReport  # noqa: F401 - the leaf; importable from here too
from .models.base import embedder_key, l2_normalise
from .output.block import produce_block
from .output.render import CLASSIC, render_retrieval
from .plugins.manager import get_plugin_manager, registry
from .read import pipeline, prefetch
from .read.fusion import DEFAULT_MAX_FACTS, DEFAULT_MAX_ITEMS  # noqa: F401 - DEFAULT_MAX_* importable from here too
from .read.prefetch import PrefetchedEmbedder
from .store import open_store, open_upgraded
from .store.records import thread_of

if TYPE_CHECKING:  # pragma: no cover
    from .store.base import Store


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
        self.path: Path = as_location(path) if path is not None else self.settings.db  # type: ignore[assignment]  # a file, or a server's ServerURL
        self.pm = pm or get_plugin_manager()
        self._create = create
        self._readonly = readonly  # read commands: opened read-only, never created; an older schema is upgraded (a copy kept)
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
            self._store = (open_upgraded(self.path) if self._readonly
                           else open_store(self.path, create=self._create and not self._readonly, readonly=self._readonly))
        return self._store

    def close(self) -> None:
        if self._embedder is not None:
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
        :func:`crib_plugin.read.prefetch.fork_for` before this Memory existed; ``give_up_at`` (a
        ``time.perf_counter`` value) is when the vector channel stops waiting for it. Returns
        whether the worker is in use; when it is, :meth:`embedder` answers from it."""
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

    @property
    def embedder_loaded(self) -> bool:  # whether this process holds an embedder (a warm server)
        return self._embedder is not None

    def embedder(self) -> Any:
        """The embedder instance (created once). Raises ConfigError / ModelError."""
        if self._embedder is None:
            self._embedder = self.registry.make("embedders", self.embedder_name())
        return self._embedder

    def embedder_key(self) -> str:
        return embedder_key(self.embedder())

    def channel_weights(self) -> dict[str, float]:
        """Fusion weights: each channel's own ``weight`` (default 1.0), then the store's overrides."""
        weights = {name: float(getattr(ch, "weight", 1.0)) for name, ch in self.registry.channels.items()}
        return {**weights, **self.store.fusion_weights()}

    def extractor_name(self) -> str:
        """``CRIB_EXTRACTOR`` (rules, ollama, auto); auto = Ollama when it answers with the model, else rules."""
        wanted = self.settings.extractor
        if wanted != "auto":
            return wanted
        # deferred: the probe (socket, ≈ 6 ms with -X importtime) is asked only by a write choosing its
        # extractor; the SessionStart hook and `crib retrieve`, which import this module, never ask
        from .models.ollama_probe import ollama_has_model
        model = self.settings.extraction_model
        return "ollama" if ollama_has_model(model) else "rules"

    def extractor(self) -> Any:
        if self._extractor is None:
            self._extractor = self.registry.make("extractors", self.extractor_name())
        return self._extractor

    def extract_facts(self, content: str, notes: list[str]) -> list[Triple]:
        try:
            return list(self.extractor().extract(content))
        except Exception as exc:  # an extractor failure (or a plugin's bug) must not lose the entry
            notes.append(f"facts not extracted: {exc}")
            return []

    def embed_texts(self, contents: Sequence[str], previous: Sequence[str | None], notes: list[str]) -> list[Any] | None:
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
        metadata) is not stored twice, nor the same text with another type or cue (its cue is
        updated): its id is returned and ``last_write.duplicate`` says so.
        """
        # deferred: the write path (write.operations: the cleaning rules, write.path, maintenance, 19 % of
        # `import numpy` in the SessionStart hook's process): the hooks and `crib retrieve` never write
        from .write import operations
        reports = operations.write(self, text, type, created_at, metadata, dedupe=dedupe, extract=extract)
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
        same_text: bool = False,
        defer_vectors: bool = False,
    ) -> list[WriteReport]:
        """Store several entries (the import and benchmark path): all validated first, then
        embedded and written batch by batch, one transaction each (:mod:`crib_plugin.write.path`).
        ``on_progress(done, total)`` is called after each batch. ``audit`` is the action recorded
        per new entry in the audit table (``None``: the caller records one row for the batch, as
        import does)."""
        # deferred: the write path, as in :meth:`write`
        from .write import operations
        return operations.write_many(self, items, dedupe=dedupe, extract=extract, cleaned=cleaned, on_progress=on_progress, audit=audit,
                                     same_text=same_text, defer_vectors=defer_vectors)

    def previous_in_thread(self, items: Sequence[NewEntry]) -> list[str | None]:
        """For each new entry, the text of the entry it follows in its thread (store, then batch)."""
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
        """Every channel's ranking fused into one list (floors applied, budget not yet):
        the pipeline's first stages (:func:`crib_plugin.read.pipeline.recall`)."""
        return pipeline.recall(self, text, channels=channels)

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
        pointed: Iterable[int] = (),
    ) -> Retrieval:
        """Cut a retrieval to what fits the budget, recording what was dropped: the pipeline's
        stages after fusion (:func:`crib_plugin.read.pipeline.select`)."""
        return pipeline.select(self, retrieval, budget=budget, max_items=max_items, exclude=exclude, per_entry=per_entry, pointed=pointed)

    def render(self, retrieval: Retrieval, *, template: str = CLASSIC) -> str:
        """The rendered block for a (selected) retrieval, or ``""`` when it is empty: the pipeline's
        last stage (:func:`crib_plugin.output.render.render_retrieval`)."""
        return render_retrieval(self, retrieval, template=template)

    def retrieve(
        self,
        prompt: str,
        *,
        template: str = CLASSIC,
        budget: int | None = None,
        exclude: Iterable[int] = (),
        channels: Sequence[str] | None = None,
    ) -> str:
        """The block for ``prompt`` (or ``""``): :func:`~crib_plugin.output.block.produce_block`, as every host."""
        block, self.last_retrieval = produce_block(self, prompt, template=template, budget=budget, exclude=exclude, channels=channels)
        return block

    # -- maintenance -----------------------------------------------------------------------

    def forget(self, entry_id: int) -> bool:
        """Delete an entry from every channel and index (:func:`crib_plugin.write.manage.forget`, audited).
        False if it did not exist."""
        # deferred: the write path, as in :meth:`write`
        from .write import operations
        return operations.forget(self, entry_id)

    def reindex(self, embedder: str | None = None, on_progress: Callable[[int, int], None] | None = None) -> dict[str, Any]:
        """Embed and extract what is pending, optionally switching ``embedder`` (:func:`crib_plugin.write.maintenance.reindex`)."""
        # deferred: the write path, as in :meth:`write`
        from .write import operations
        return operations.reindex(self, embedder, on_progress)

    def export(self) -> Iterator[dict[str, Any]]:
        """Every entry as a JSON-ready dict (``id``, ``type``, ``content``, ``created_at``, ``metadata``)."""
        for entry in self.store.iter_entries():
            yield entry.to_json()

    def import_records(
        self, records: Iterable[dict[str, Any]], on_progress: Callable[[int, int], None] | None = None,
        on_embed_progress: Callable[[int, int], None] | None = None, *, include_forgotten: bool = False,
    ) -> list[WriteReport]:
        """Validate every record, write them in batches, then embed them; a memory the user forgot is
        not brought back unless ``include_forgotten`` (:func:`crib_plugin.write.maintenance.import_records`)."""
        # deferred: the write path, as in :meth:`write`
        from .write import operations
        return operations.import_records(self, records, on_progress, on_embed_progress, include_forgotten=include_forgotten)

    def sync(self, path: Path, source: str = "markdown") -> Any:
        """Bring the memories that came from the memory file ``path`` (a host's ``CLAUDE.md``,
        ``AGENTS.md``…) in step with it: :func:`crib_plugin.write.sync.sync_file`."""
        # deferred: the write path, as in :meth:`write`
        from .write.sync import sync_file
        return sync_file(self, path, source)

    def entry(self, entry_id: int) -> Entry | None:
        return self.store.get_entry(entry_id)


__all__ = ["Memory", "NewEntry", "WriteReport", "ModelError"]
