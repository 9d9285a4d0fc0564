"""The one producer of a memory block: select a prompt's memories, render them within a cap.

Every host gets its block here — ``Memory.retrieve`` (the Python API), the built-in ``on_prompt``
hook (which ``crib retrieve``, the Claude Code prompt hook and agent loops call), and
``hosts.scoped.retrieve`` (the MCP server's ``retrieve`` tool) — so they cannot drift apart. The
caller opens the stores; ``other`` is the global store when there is one besides ``memory``.
"""

from __future__ import annotations

from dataclasses import replace
from typing import TYPE_CHECKING, Iterable, Sequence

from ..core.records import Retrieval, fresh
from ..read.across import select_across
from .render import CLASSIC, render_retrieval

if TYPE_CHECKING:  # pragma: no cover
    from ..plugins.contracts import MemoryLike


def render_within(memory: MemoryLike, retrieval: Retrieval, template: str, cap: int | None) -> tuple[str, Retrieval]:
    """The *rendered* stage within a ``cap``: the block, and what it shows — the pointers dropped
    first, then the lowest-ranked hits (then facts) until it fits. ``retrieval`` is not changed."""
    shown = fresh(retrieval)
    while True:
        block = render_retrieval(memory, shown, template=template)
        if cap is None or len(block) <= cap:
            return block, shown
        if shown.pointers:
            shown.pointers.pop()
        elif shown.hits:
            shown.hits.pop()
        elif shown.facts:
            shown.facts.pop()
        else:
            return "", shown


def produce_block(
    memory: MemoryLike,
    prompt: str,
    *,
    other: MemoryLike | None = None,
    template: str = CLASSIC,
    budget: int | None = None,
    exclude: Iterable[int] = (),
    channels: Sequence[str] | None = None,
    cap: int | None = None,
    scope: str = "project",
    exclude_facts: Iterable[int] = (),
    pointed: Iterable[int] = (),
) -> tuple[str, Retrieval]:
    """The rendered block for ``prompt`` (``""`` when nothing is relevant) and the selection behind it.

    ``exclude`` holds scope keys (:func:`~crib_plugin.read.across.scope_key`) of entries already
    shown, ``exclude_facts`` the ids of facts already shown, ``pointed`` the scope keys of entries
    already given as pointers (:mod:`crib_plugin.read.pointers`); ``cap`` bounds the block's length.
    """
    retrieval = select_across(memory, prompt, other=other, budget=budget, exclude=exclude, channels=channels, primary_scope=scope,
                              pointed=pointed)
    skip = set(exclude_facts)
    if skip:
        retrieval = replace(retrieval, facts=[f for f in retrieval.facts if f.id not in skip])
    return render_within(memory, retrieval, template, cap)
