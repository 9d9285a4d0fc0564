"""Selection across two stores: the project's selection merged with the global store's.

Each store is recalled and selected on its own — its own relevance gate, floors, reranker and
vectors — and the two selections are merged by fused score (the project's first on ties), then cut
to the budget again. Each memory of a merged block carries its scope (``project``/``global``); a
selection from one store alone is left exactly as :func:`~crib_plugin.read.pipeline.read` made it.

Entry ids are per store, so where one set must hold memories of both stores (a session's
"already injected" list) a global entry's key is its id negated: :func:`scope_key`.

The caller opens the other store (``hosts.scoped.global_memory``) and passes it in: this module
only reads through :class:`~crib_plugin.plugins.contracts.MemoryLike`.
"""

from __future__ import annotations

import dataclasses
from typing import TYPE_CHECKING, Iterable, Sequence

from ..core.faillog import log_failure
from ..core.records import Hit, Retrieval, fresh
from .fusion import DEFAULT_MAX_FACTS, DEFAULT_MAX_ITEMS, fit_budget, item_cost
from .pipeline import read

if TYPE_CHECKING:  # pragma: no cover
    from ..plugins.contracts import MemoryLike


def scope_key(scope: str, item_id: int) -> int:
    """A key unique across both stores: the id for the project store, minus the id for the global one."""
    return -item_id if scope == "global" else item_id


def split_exclude(exclude: Iterable[int]) -> tuple[set[int], set[int]]:
    """Session keys → (project ids, global ids)."""
    project: set[int] = set()
    other: set[int] = set()
    for key in exclude:
        (other if key < 0 else project).add(abs(key))
    return project, other


def tag_scope(retrieval: Retrieval, scope: str) -> Retrieval:
    """A new retrieval whose hits' and pointers' entries carry ``scope``; a global fact gets a
    negative id (see :func:`scope_key`)."""
    facts = [dataclasses.replace(f, id=scope_key(scope, f.id)) for f in retrieval.facts] if scope == "global" else list(retrieval.facts)
    return dataclasses.replace(
        fresh(retrieval), facts=facts,
        hits=[Hit(dataclasses.replace(h.entry, scope=scope), h.score, h.channels) for h in retrieval.hits],
        pointers=[Hit(dataclasses.replace(h.entry, scope=scope), h.score, h.channels) for h in retrieval.pointers],
    )


def select_across(
    primary: MemoryLike,
    prompt: str,
    *,
    other: MemoryLike | None = None,
    budget: int | None = None,
    exclude: Iterable[int] = (),
    max_items: int | None = None,
    channels: Sequence[str] | None = None,
    primary_scope: str = "project",
    pointed: Iterable[int] = (),
) -> Retrieval:
    """The read pipeline for ``prompt`` on ``primary`` (:func:`crib_plugin.read.pipeline.read`), merged
    with ``other``'s own when given.

    ``exclude`` (entries) and ``pointed`` (pointers, :mod:`crib_plugin.read.pointers`) hold
    :func:`scope_key` keys of what the session was already given. Returns a :class:`Retrieval` whose hits' entries
    carry ``scope`` (left empty when only one store contributed, so the block is unchanged).
    A failing ``other`` store never breaks the primary's retrieval.
    """
    max_items = max_items or DEFAULT_MAX_ITEMS
    mine, theirs = split_exclude(exclude)
    my_pointers, their_pointers = split_exclude(pointed)
    if primary_scope == "global":
        mine, my_pointers = theirs, their_pointers
    retrieval = read(primary, prompt, channels=channels, budget=budget, exclude=mine, max_items=max_items, pointed=my_pointers)
    if other is None:
        return tag_scope(retrieval, "global") if primary_scope == "global" else retrieval
    try:
        extra = read(other, prompt, channels=channels, budget=budget, exclude=theirs, max_items=max_items, pointed=their_pointers)
    except Exception as exc:  # the global store must never break the project's retrieval
        log_failure("global store", exc)
        extra = Retrieval(query=retrieval.query)
    if extra.empty:
        return retrieval
    return merge(retrieval, extra, budget or primary.settings.budget, max_items)


def merge(project: Retrieval, other: Retrieval, budget: int, max_items: int) -> Retrieval:
    """The two selections as one (a new retrieval): hits by score (project first on ties), cut to the budget again."""
    project, other = tag_scope(project, "project"), tag_scope(other, "global")
    hits = sorted(project.hits + other.hits, key=lambda h: -h.score)  # stable: project first on ties
    facts = (project.facts + other.facts)[:DEFAULT_MAX_FACTS]
    fact_cost = sum(len(f.subject) + len(f.predicate) + len(f.object) + 30 for f in facts)
    kept, dropped = fit_budget([h.entry.content for h in hits], budget, overhead=300 + fact_cost, max_items=max_items)
    merged = dataclasses.replace(
        project, hits=[hits[i] for i in kept], facts=facts,
        dropped=project.dropped + [(hits[i].entry.id, f"budget ({hits[i].entry.scope})") for i in dropped],
        channels=project.channels + [dataclasses.replace(c, channel=f"global:{c.channel}") for c in other.channels],
    )
    # deferred: imported after the prefetch fork, overlapping the prompt's embedding (157 ms)
    from .pointers import merge_pointers

    used = 300 + fact_cost + sum(item_cost(h.entry.content) for h in merged.hits)
    return dataclasses.replace(merged, pointers=merge_pointers(merged.hits, project.pointers + other.pointers, budget, used))
