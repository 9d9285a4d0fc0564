"""Vectors stored after their entries: an import's second phase (issue 23).

Why: embedding with the offline MiniLM runs ≈ 55 entries/s on two cores, so an import that embeds
inline cannot go faster than that however its transactions are batched. With ``defer_vectors``
(:func:`~crib_plugin.write.path.write_prepared`) the write path stores each entry, its full-text
rows, facts, audit and the supersession steps that need no vector (a named old value, closed facts)
in the batch's transaction, and queues its embedding with the reason :data:`DEFERRED`. Then
:func:`complete_supersession`, called by the embedding drain
(:func:`crib_plugin.write.maintenance.reindex`, which ``crib import`` runs as its second phase and
``crib reindex`` runs for whatever a killed import left), stores the vectors and runs the
remaining supersession steps (:func:`~crib_plugin.write.supersede.supersede_by_resemblance`) for
the queued decisions and corrections, in the order an inline write runs them.

Nothing is lost: the queue row is written in the entry's own transaction, so a kill between the
two phases leaves the entry queued (``crib doctor`` counts it; ``crib reindex`` embeds it). Until
its vector is stored the entry is found by full text and facts, not by the vector channel.
"""

from __future__ import annotations

import subprocess
import sys
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any

try:
    import fcntl  # the background embedder's lock (POSIX)
except ImportError:  # pragma: no cover - Windows: writes embed inline
    fcntl = None  # type: ignore[assignment]

from ..core.config import get_settings, write_vectors_mode
from ..store import vector_index
from .supersede import SUPERSEDING_TYPES, supersede_by_resemblance

DEFERRED = "deferred: embedded after the write (second phase of the import, or `crib reindex`)"
"""The queue reason of an entry written without its vector on purpose."""


def complete_supersession(store: Any, table: str, entries: Mapping[int, Any], blobs: Mapping[int, bytes], queued: set[int]) -> list[int]:
    """For each of ``entries`` that was queued (``queued``: its id was in the embedding queue when
    the drain took it) and is a decision or correction that superseded nothing when it was written,
    run the vector steps of supersession now that ``blobs`` holds its vector. Call inside the
    transaction that stores the vectors; returns the ids of the entries that now supersede one."""
    done: list[int] = []
    for entry_id in sorted(entries):
        entry = entries[entry_id]
        if entry_id not in queued or entry.type not in SUPERSEDING_TYPES or entry_id not in blobs:
            continue
        if store.superseded_by_entry(entry_id):  # a named value or closed fact already decided it
            continue
        if supersede_by_resemblance(store, entry_id, entry.type, entry.content, entry.created_at,
                                    table=table, vector=blobs[entry_id]):
            done.append(entry_id)
    return done


MODEL_LATER = "model work: facts (and the recall cue) written by the background worker after the write"
"""The extraction queue's reason for an entry whose model work was left to the worker on purpose."""


def models_in_background(memory: Any, extract: bool) -> bool:
    """Whether this write leaves its model work to the background worker (:mod:`crib_plugin.write.model_work`)."""
    settings = get_settings()
    if not extract or str(getattr(settings, "write_models", "background")) != "background":
        return False
    if fcntl is None or not isinstance(getattr(memory.store, "path", None), Path):
        return False
    if settings.cue_model:
        return True
    try:
        return memory.extractor_name() == "ollama"
    except Exception:  # noqa: BLE001 - an unknown extractor fails at extraction, as before
        return False


class QueuedIds:
    """The ids queued for an embedding in one space, read once and again only when the drain meets
    an id above the highest one read (an entry queued since: a concurrent writer)."""

    def __init__(self, store: Any, space: str) -> None:
        self.store, self.space = store, space
        self.ids = set(store.pending(space))
        self.top = max(self.ids, default=0)

    def among(self, ids: Sequence[int]) -> set[int]:
        if ids and max(ids) > self.top:
            self.ids = set(self.store.pending(self.space))
            self.top = max([self.top, *self.ids])
        return self.ids.intersection(ids)


WORKER_MODULE = "crib_plugin.hosts.embed_worker"
"""What :func:`start_background_embedder` runs (a module name, not an import: the worker is a host)."""


def in_background(store: Any, count: int, *, model_loaded: bool = False) -> bool:
    """Whether a write of ``count`` entries leaves its vectors to a background embedder: a single
    entry, a SQLite store (a file the worker can open), a platform with ``fcntl`` (the worker's
    lock), and ``CRIB_WRITE_VECTORS=background`` — or ``auto`` (the default) when this process has
    not loaded the model (``model_loaded``: a warm MCP server embeds one entry in milliseconds) and
    the store holds at least :data:`~crib_plugin.store.vector_index.MIN_VECTORS` entries: there a
    cold ``crib write`` spends most of its time loading the model and searching the store for
    what the entry supersedes (``bench/scale.py``: ≈ 410 ms inline against ≈ 210 ms at 10⁶)."""
    if count != 1 or fcntl is None or not isinstance(getattr(store, "path", None), Path):
        return False
    mode = write_vectors_mode()
    if mode == "auto":
        return not model_loaded and store.count_entries() >= vector_index.MIN_VECTORS
    return mode == "background"


def start_background_embedder(db: Any, reports: list[Any], *, models: bool = False) -> list[Any]:
    """When one of ``reports`` (the write's) stored an entry without its vector — or, with
    ``models``, left its facts and cue to a model (:mod:`crib_plugin.write.model_work`) — start a
    detached ``python -m`` :data:`WORKER_MODULE` for the store ``db``; it does the queued work and
    exits (one at a time per store: a file lock). A failure to start leaves the entry queued for the
    next one or ``crib reindex``: the write never fails for it. Returns ``reports``."""
    left = [r for r in reports if not r.duplicate and not r.embedded]
    if not left and not (models and any(not r.duplicate for r in reports)):
        return reports
    for report in left:
        report.background = True
    try:
        subprocess.Popen([sys.executable, "-m", WORKER_MODULE, str(db)], stdin=subprocess.DEVNULL,
                         stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, start_new_session=True, close_fds=True)
    except OSError:
        pass
    return reports
