"""A model's share of a write — its facts and its recall cue — done after the write, in the background.

Why: a write must not wait on a model. On a CPU a small local model takes seconds per call (the
first after an idle unload pays its load too), and a write with model extraction and a cue model
used to wait out both, one after the other, then store neither when they overran their budgets.
So when a single write (``crib write``, the MCP tool: what an agent waits on) would ask a model
(``CRIB_EXTRACTOR`` resolving to ``ollama``, or ``CRIB_CUE_MODEL`` set), the entry, its full text and its vector are stored at once and its model
work is queued in the entry's own transaction (the extraction queue,
:data:`~crib_plugin.store.sqlite_rows.EXTRACT_QUEUE`, reason :data:`~crib_plugin.write.deferred.MODEL_LATER`;
the choice is :func:`~crib_plugin.write.deferred.models_in_background`); the detached
worker that already embeds (:mod:`crib_plugin.hosts.embed_worker`) then writes the cue and the
facts (:func:`drain_model_work`). The queue survives a kill: the next write's worker or
``crib reindex`` finishes it, and ``crib doctor`` counts it (``queue.extraction``).

A bulk write (an import, an evaluation's store) asks the models itself, within ten times the
budgets, as before. ``CRIB_WRITE_MODELS=inline`` keeps that behaviour for single writes too (the write asks the models within
``CRIB_EXTRACT_BUDGET``); so does a store the worker cannot open (PostgreSQL) or a platform without
``fcntl``.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any, Callable

from ..core.config import get_settings
from ..core.cues import cue_of
from ..core.errors import CribError
from ..store.sqlite_rows import EXTRACT_QUEUE
from .cue_model import cue_writer
from .deferred import MODEL_LATER, models_in_background
from .manage import set_cue
from .path import drain_extractions

if TYPE_CHECKING:  # pragma: no cover
    from ..plugins.contracts import MemoryLike

BACKGROUND_TIMEOUT = 300.0
"""Seconds one model request may take when nobody waits on it (the worker, ``crib reindex``),
unless ``CRIB_OLLAMA_TIMEOUT`` says otherwise. The write path's 30 s is too short on a busy CPU: a
1.5B model's extraction prompt (its few-shot examples) took over 30 s at load 18 on two cores."""


def patient(model: Any) -> Any:
    """``model`` (an Ollama model: its ``timeout``) allowed :data:`BACKGROUND_TIMEOUT` per request."""
    if get_settings().ollama_timeout is None and isinstance(getattr(model, "timeout", None), float):
        model.timeout = max(model.timeout, BACKGROUND_TIMEOUT)
        close = getattr(model, "close", None)
        if callable(close):
            close()  # the client is rebuilt with the new timeout on the next request
    return model


def write_queued_cues(memory: "MemoryLike", ids: list[int], notes: list[str]) -> int:
    """Let the cue model write the cue of each of ``ids`` stored without one; how many it wrote.
    The first failure stops (noted in ``notes``): the entries keep their facts and are never lost."""
    model = get_settings().cue_model
    if not model or not ids:
        return 0
    writer = None
    written = 0
    for entry_id, entry in sorted(memory.store.get_entries(ids).items()):
        if cue_of(entry.metadata):
            continue
        try:
            writer = writer or patient(cue_writer(model))
            set_cue(memory, entry_id, writer.write_cue(entry.content, entry.type), by=model)
            written += 1
        except CribError as exc:
            notes.append(f"no recall cue written for entry {entry_id} and later ones: {exc}")
            break
    return written


def drain_model_work(memory: "MemoryLike", on_progress: Callable[[int, int], None] | None = None) -> dict[str, Any]:
    """Write the cue (``CRIB_CUE_MODEL``) and then the facts of every entry in the extraction queue.
    ``{"cues_written", "facts_extracted", "notes"}``; an extractor failure raises
    :class:`~crib_plugin.core.errors.ModelError` with the rest left queued (as
    :func:`~crib_plugin.write.path.drain_extractions`)."""
    notes: list[str] = []
    queued = memory.store.pending(EXTRACT_QUEUE)
    if queued:
        patient(memory.extractor())
    cues = write_queued_cues(memory, memory.store.pending(EXTRACT_QUEUE), notes)
    extracted = drain_extractions(memory, on_progress)
    return {"cues_written": cues, "facts_extracted": extracted, "notes": notes}


__all__ = ["MODEL_LATER", "models_in_background", "drain_model_work", "write_queued_cues"]
