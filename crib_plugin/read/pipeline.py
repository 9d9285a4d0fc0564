"""One prompt's read, top to bottom, in one place.

    query → channel candidates → fused → gated → selected → pointers      (then: rendered)

Each stage is a function that takes the value the stage before returned and returns a new one (a
:class:`~crib_plugin.core.records.Retrieval`, frozen: a stage builds its value with
``dataclasses.replace``); the value it was given is never changed, so the
pointer tier can still read the *fused* ranking after the gate cut it, and ``--explain`` and the
evaluation can look at any stage. The stages' bodies live where their subject does:

======================  ================================================================
stage                   function
======================  ================================================================
query                   :func:`crib_plugin.read.recall.query_stage`
channel candidates      :func:`crib_plugin.read.recall.candidates_stage`
fused                   :func:`crib_plugin.read.recall.fused_stage`
gated                   :func:`crib_plugin.read.selection.gated_stage`
selected                :func:`crib_plugin.read.selection.selected_stage`
pointers                :func:`crib_plugin.read.selection.pointers_stage`
rendered                :func:`crib_plugin.output.render.render_retrieval` (above this layer:
                        :func:`crib_plugin.output.block.produce_block` renders what :func:`read` returns)
======================  ================================================================

The ``Memory`` facade composes these (``Memory.recall`` is :func:`recall`, ``Memory.select`` is
:func:`select`); no stage calls back into it. This module is light: the stages load when first
run, after a cold process's prefetch fork (:mod:`crib_plugin.read.prefetch`).
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Iterable, Sequence

from ..core.records import Retrieval
from .fusion import DEFAULT_MAX_ITEMS

if TYPE_CHECKING:  # pragma: no cover
    from ..plugins.contracts import MemoryLike

STAGES = ("query", "candidates", "fused", "gated", "selected", "pointers", "rendered")


def recall(memory: MemoryLike, prompt: str, *, channels: Sequence[str] | None = None) -> Retrieval:
    """The first three stages: the prompt's *query*, each channel's *candidates*, *fused* into one ranking."""
    # deferred: the read stages (fusion, time, rerank: 147 ms), loaded after the prefetch fork, overlapping the embedding
    from . import recall as stages

    query = stages.query_stage(prompt)
    if not query.query.text:
        return query  # nothing to search for
    candidates = stages.candidates_stage(memory, query, channels)
    return stages.fused_stage(memory, candidates)


def select(memory: MemoryLike, fused: Retrieval, *, budget: int | None = None, max_items: int = DEFAULT_MAX_ITEMS,
           exclude: Iterable[int] = (), per_entry: bool = True, pointed: Iterable[int] = ()) -> Retrieval:
    """The next three stages: *gated*, *selected* (within ``budget`` characters and ``max_items``
    entries, none of ``exclude``), *pointers* (none to ``exclude`` or ``pointed``)."""
    # deferred: the gate, the per-entry cut, pointers (30 % of `import numpy` beside the SessionStart hook's
    # modules, which never select); `crib retrieve` loads them after the prefetch fork
    from . import selection as stages

    budget = budget or memory.settings.budget
    excluded = set(exclude)
    gated = stages.gated_stage(memory, fused, per_entry=per_entry)
    selected = stages.selected_stage(memory, gated, budget=budget, max_items=max_items, exclude=excluded)
    return stages.pointers_stage(memory, fused, selected, budget=budget, skip=excluded | set(pointed), per_entry=per_entry)


def read(memory: MemoryLike, prompt: str, *, channels: Sequence[str] | None = None, budget: int | None = None,
         max_items: int = DEFAULT_MAX_ITEMS, exclude: Iterable[int] = (), pointed: Iterable[int] = ()) -> Retrieval:
    """Every read stage for ``prompt``, in order: what one store gives a prompt's block."""
    return select(memory, recall(memory, prompt, channels=channels), budget=budget, max_items=max_items,
                  exclude=exclude, pointed=pointed)
