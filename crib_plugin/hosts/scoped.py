"""Reading the project store, then the global one: opening the stores for a read.

The selection across both (:mod:`crib_plugin.read.across`) and the block
(:mod:`crib_plugin.output.block`) live below; this module opens the global store beside the
project's (:func:`global_memory`, sharing the embedder), and offers the scoped reads the hosts use:
:func:`select_scoped`, :func:`retrieve`, :func:`recall_scopes`, :func:`search`. When no global
store exists (the usual case) this costs one ``stat``.
"""

from __future__ import annotations

import contextlib
import dataclasses
from pathlib import Path
from typing import TYPE_CHECKING, Any, Iterable, Iterator, Sequence

from ..core.config import load_settings
from ..core.errors import StoreMissing
from ..core.records import Hit, Retrieval
from ..memory import Memory
from ..output.block import produce_block
from ..output.render import CLASSIC
from ..read.across import select_across, tag_scope
from ..scopes import SCOPES, global_db, open_scope, project_db, scope_path

if TYPE_CHECKING:  # pragma: no cover
    from ..memory import Memory


def _same_file(a: Any, b: Any) -> bool:
    if not (isinstance(a, Path) and isinstance(b, Path)):  # a server store's URL: the same URL
        return a == b
    try:
        return a.resolve() == b.resolve()
    except OSError:
        return False


def global_memory(primary: "Memory") -> "Memory | None":
    """A Memory on the global store when it exists and is not ``primary``'s own file.

    It shares ``primary``'s settings, plugin manager and — when both stores use the same embedder
    — its embedder instance, so a prompt prefetched (or embedded) once serves both stores.
    """
    path = global_db()
    if not path.exists() or _same_file(path, primary.path):
        return None
    settings = dataclasses.replace(primary.settings, db=path)
    other = Memory(path, settings=settings, pm=primary.pm, create=False, readonly=True)
    try:
        if primary._embedder is not None and other.embedder_name() == primary.embedder_name():
            other._embedder = primary._embedder
    except Exception:  # an unreadable global store: the project's retrieval goes on without it
        other.close()
        return None
    return other


def close_shared(primary: "Memory", other: "Memory") -> None:
    if other._embedder is primary._embedder:
        other._embedder = None  # the primary owns (and closes) it
    other.close()


@contextlib.contextmanager
def global_beside(primary: "Memory", scope: str = "project") -> Iterator["Memory | None"]:
    """The global store opened beside ``primary`` for one read when ``primary`` is the project's
    (``None`` when there is none), closed after without closing what it shares."""
    other = global_memory(primary) if scope == "project" else None
    try:
        yield other
    finally:
        if other is not None:
            close_shared(primary, other)


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
    """:func:`~crib_plugin.read.across.select_across` over ``primary`` and, when ``primary`` is the
    project's, the global store (opened here and closed after)."""
    with global_beside(primary, primary_scope) as other:
        return select_across(primary, prompt, other=other, budget=budget, exclude=exclude, max_items=max_items,
                             channels=channels, primary_scope=primary_scope, pointed=pointed)


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

    :class:`~crib_plugin.core.errors.StoreMissing` when none of the stores asked for exists; any other
    :class:`~crib_plugin.core.errors.StoreError` (a server that does not answer, a damaged file) as raised.
    """
    names = SCOPES if scope == "all" else (scope,)
    existing = [n for n in names if scope_path(n, cwd).exists()]
    if not existing:
        raise StoreMissing(f"no crib database at {scope_path(names[0], cwd)}")
    found: list[tuple[float, int, Hit]] = []
    retrievals: list[tuple[str, Retrieval]] = []
    for order, name in enumerate(existing):
        with open_scope(name, create=False, cwd=cwd, readonly=True) as memory:
            retrieval = tag_scope(memory.recall(query, channels=channels), name)
            retrievals.append((name, retrieval))
            found.extend((-h.score, order, h) for h in retrieval.hits[:limit])
            for note in memory.warnings:
                if warn is not None:
                    warn(note)
    found.sort(key=lambda t: (t[0], t[1]))
    return [hit for _score, _order, hit in found[:limit]], retrievals


def search(query: str, *, limit: int = 10, scope: str = "all", cwd: Path | None = None) -> list[dict[str, Any]]:
    """Ranked hits for ``query`` from one scope or both: ``Hit.to_json()`` with ``scope``.

    Missing stores are skipped (an empty list when there is none); project first on ties. A store
    that exists but cannot be read raises its :class:`~crib_plugin.core.errors.StoreError`: a failure is
    never an empty answer.
    """
    try:
        hits, _ = recall_scopes(query, scope=scope, limit=limit, cwd=cwd)
    except StoreMissing:
        return []
    return [hit.to_json() for hit in hits]


def open_reading(settings: Any) -> "tuple[Memory, str] | None":
    """The store a read starts from: the project's when it exists, else the global one, else None."""
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
    settings = load_settings()
    settings.db = project_db(cwd)
    opened = open_reading(settings)
    if opened is None:
        return ""
    memory, scope = opened
    with memory:
        with global_beside(memory, scope) as other:
            block, _ = produce_block(memory, prompt, other=other, template=template or CLASSIC, budget=budget,
                                     exclude=exclude, scope=scope)
        return block


__all__ = ["global_memory", "close_shared", "global_beside", "select_scoped", "search", "retrieve", "open_reading", "recall_scopes"]
