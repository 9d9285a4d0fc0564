"""Reading the project store, then the global one, as one retrieval whose memories say where they live.

Each store is recalled and selected on its own — its own relevance gate, floors, reranker and
vectors — and the two selections are merged by fused score (the project's first on ties), then cut
to the budget again. Each memory of a merged block carries its scope (``project``/``global``); a
block from the project store alone is rendered exactly as before. When no global store exists
(the usual case) this costs one ``stat``.

Entry ids are per store, so where one set must hold memories of both stores (a session's
"already injected" list) a global entry's key is its id negated: :func:`scope_key`.

A memory a correction superseded is never shown alone: its successor is put directly above it.
"""

from __future__ import annotations

import dataclasses
from pathlib import Path
from typing import TYPE_CHECKING, Any, Iterable, Sequence

from ..core.records import Entry, Fact, Hit, Retrieval

if TYPE_CHECKING:  # pragma: no cover
    from ..memory import Memory

MAX_FACTS = 10


def scope_key(scope: str, item_id: int) -> int:
    """A key unique across both stores: the id for the project store, minus the id for the global one."""
    return -item_id if scope == "global" else item_id


def _same_file(a: Path, b: Path) -> bool:
    try:
        return a.resolve() == b.resolve()
    except OSError:
        return False


def global_memory(primary: "Memory") -> "Memory | None":
    """A Memory on the global store when it exists and is not ``primary``'s own file.

    It shares ``primary``'s settings, plugin manager and — when both stores use the same embedder
    — its embedder instance, so a prompt prefetched (or embedded) once serves both stores.
    """
    from ..memory import Memory
    from ..scopes import global_db

    path = global_db()
    if not path.exists() or _same_file(path, Path(primary.path)):
        return None
    settings = dataclasses.replace(primary.settings, db=path)
    other = Memory(path, settings=settings, pm=primary.pm, create=False, readonly=True, upgrade=primary._upgrade)
    try:
        if primary._embedder is not None and other.embedder_name() == primary.embedder_name():
            other._embedder = primary._embedder
    except Exception:  # an unreadable global store: the project's retrieval goes on without it
        other.close()
        return None
    return other


def _close_shared(primary: "Memory", other: "Memory") -> None:
    if other._embedder is primary._embedder:
        other._embedder = None  # the primary owns (and closes) it
    other.close()


def _tag(retrieval: Retrieval, scope: str) -> None:
    """Mark every hit's entry with its scope; a global fact gets a negative id (see :func:`scope_key`)."""
    retrieval.hits = [Hit(dataclasses.replace(h.entry, scope=scope), h.score, h.channels) for h in retrieval.hits]
    retrieval.pointers = [Hit(dataclasses.replace(h.entry, scope=scope), h.score, h.channels) for h in retrieval.pointers]
    if scope == "global":
        retrieval.facts = [dataclasses.replace(f, id=scope_key(scope, f.id)) for f in retrieval.facts]


def split_exclude(exclude: Iterable[int]) -> tuple[set[int], set[int]]:
    """Session keys → (project ids, global ids)."""
    project: set[int] = set()
    other: set[int] = set()
    for key in exclude:
        (other if key < 0 else project).add(abs(key))
    return project, other


def select_scoped(
    primary: "Memory",
    prompt: str,
    *,
    budget: int | None = None,
    exclude: Iterable[int] = (),
    max_items: int | None = None,
    channels: Sequence[str] | None = None,
    primary_scope: str = "project",
    pointed: Iterable[int] = (),
) -> Retrieval:
    """``primary.select(primary.recall(prompt))`` merged with the global store's own selection.

    ``exclude`` (entries) and ``pointed`` (pointers, :mod:`crib_plugin.read.pointers`) hold
    :func:`scope_key` keys of what the session was already given. Returns a :class:`Retrieval` whose hits' entries
    carry ``scope`` (left empty when only one store contributed, so the block is unchanged).
    """
    from ..memory import DEFAULT_MAX_ITEMS

    max_items = max_items or DEFAULT_MAX_ITEMS
    mine, theirs = split_exclude(exclude)
    my_pointers, their_pointers = split_exclude(pointed)
    if primary_scope == "global":
        mine, my_pointers = theirs, their_pointers
    retrieval = primary.select(primary.recall(prompt, channels=channels), budget=budget, exclude=mine, max_items=max_items,
                               pointed=my_pointers)
    other = global_memory(primary) if primary_scope == "project" else None
    if other is None:
        if primary_scope == "global":
            _tag(retrieval, "global")
        add_successors(primary, retrieval)
        return retrieval
    try:
        extra = other.select(other.recall(prompt, channels=channels), budget=budget, exclude=theirs, max_items=max_items,
                             pointed=their_pointers)
        add_successors(other, extra)
    except Exception as exc:  # the global store must never break the project's retrieval
        from ..core.faillog import log_failure

        log_failure("global store", exc)
        extra = Retrieval(query=retrieval.query)
    finally:
        _close_shared(primary, other)
    add_successors(primary, retrieval)
    if extra.empty:
        return retrieval
    return merge(retrieval, extra, budget or primary.settings.budget, max_items)


def merge(project: Retrieval, other: Retrieval, budget: int, max_items: int) -> Retrieval:
    """The two selections as one: hits by score (project first on ties), cut to the budget again."""
    from ..read.fusion import fit_budget

    _tag(project, "project")
    _tag(other, "global")
    hits = sorted(project.hits + other.hits, key=lambda h: -h.score)  # stable: project first on ties
    facts = (project.facts + other.facts)[:MAX_FACTS]
    fact_cost = sum(len(f.subject) + len(f.predicate) + len(f.object) + 30 for f in facts)
    kept, dropped = fit_budget([h.entry.content for h in hits], budget, overhead=300 + fact_cost, max_items=max_items)
    project.hits = [hits[i] for i in kept]
    project.dropped.extend((hits[i].entry.id, f"budget ({hits[i].entry.scope})") for i in dropped)
    project.facts = facts
    project.channels = project.channels + [dataclasses.replace(c, channel=f"global:{c.channel}") for c in other.channels]
    from ..read.fusion import item_cost
    from ..read.pointers import merge_pointers

    used = 300 + fact_cost + sum(item_cost(h.entry.content) for h in project.hits)
    project.pointers = merge_pointers(project.hits, project.pointers + other.pointers, budget, used)
    return project


def add_successors(memory: "Memory", retrieval: Retrieval) -> None:
    """Put the newest version of every superseded hit directly above it (a correction first)."""
    ids = [h.entry.id for h in retrieval.hits]
    if not ids:
        return
    try:
        superseded = memory.store.superseded_among(ids)
    except Exception:  # a store before migration 4 has no superseded_by
        return
    if not superseded:
        return
    present = set(ids)
    out: list[Hit] = []
    for hit in retrieval.hits:
        if hit.entry.id in superseded:
            newest = memory.store.successor_of(hit.entry.id)
            entry = memory.store.get_entry(newest) if newest is not None else None
            if entry is not None and newest is not None and newest not in present:
                out.append(Hit(dataclasses.replace(entry, scope=hit.entry.scope), hit.score, {}))
                present.add(newest)
                retrieval.notes.append((newest, f"corrects {hit.entry.id}"))
        out.append(hit)
    retrieval.hits = out


def recall_scopes(
    query: str,
    *,
    scope: str = "all",
    channels: Sequence[str] | None = None,
    limit: int = 10,
    cwd: Path | None = None,
    warn: Any = None,
) -> tuple[list[Hit], list[tuple[str, Retrieval]]]:
    """Each existing store's recall for ``query`` (floors, no budget) and the best ``limit`` hits of
    all of them by fused score, project first on ties; every hit's entry carries its ``scope``.

    :class:`~crib_plugin.errors.StoreError` when none of the stores asked for exists.
    """
    from ..core.errors import StoreError
    from ..scopes import SCOPES, open_scope, scope_path

    names = SCOPES if scope == "all" else (scope,)
    existing = [n for n in names if scope_path(n, cwd).exists()]
    if not existing:
        raise StoreError(f"no crib database at {scope_path(names[0], cwd)}")
    found: list[tuple[float, int, Hit]] = []
    retrievals: list[tuple[str, Retrieval]] = []
    for order, name in enumerate(existing):
        with open_scope(name, create=False, cwd=cwd, readonly=True) as memory:
            retrieval = memory.recall(query, channels=channels)
            _tag(retrieval, name)
            retrievals.append((name, retrieval))
            found.extend((-h.score, order, h) for h in retrieval.hits[:limit])
            for note in memory.warnings:
                if warn is not None:
                    warn(note)
    found.sort(key=lambda t: (t[0], t[1]))
    return [hit for _score, _order, hit in found[:limit]], retrievals


def search(query: str, *, limit: int = 10, scope: str = "all", cwd: Path | None = None) -> list[dict[str, Any]]:
    """Ranked hits for ``query`` from one scope or both: ``Hit.to_json()`` with ``scope``.

    Missing stores are skipped (an empty list when there is none); project first on ties.
    """
    from ..core.errors import StoreError

    try:
        hits, _ = recall_scopes(query, scope=scope, limit=limit, cwd=cwd)
    except StoreError:
        return []
    return [hit.to_json() for hit in hits]


def open_reading(settings: Any) -> "tuple[Memory, str] | None":
    """The store a read starts from: the project's when it exists, else the global one, else None."""
    from ..memory import Memory
    from ..scopes import global_db

    if settings.db.exists():
        return Memory(create=False, settings=settings, readonly=True), "project"
    path = global_db()
    if path.exists():
        return Memory(path, create=False, settings=dataclasses.replace(settings, db=path), readonly=True), "global"
    return None


def retrieve(
    prompt: str,
    *,
    template: str | None = None,
    budget: int | None = None,
    exclude: Iterable[int] = (),
    cwd: Path | None = None,
) -> str:
    """The rendered block over the project store then the global one; ``""`` when nothing is relevant."""
    from ..core.config import load_settings
    from ..output.render import CLASSIC
    from ..scopes import project_db

    settings = load_settings()
    settings.db = project_db(cwd)
    opened = open_reading(settings)
    if opened is None:
        return ""
    memory, scope = opened
    with memory:
        retrieval = select_scoped(memory, prompt, budget=budget, exclude=exclude, primary_scope=scope)
        return memory.render(retrieval, template=template or CLASSIC)


__all__ = ["scope_key", "global_memory", "select_scoped", "merge", "search", "retrieve", "open_reading", "Entry", "Fact"]
