"""Storage backends behind one contract (:class:`~crib_plugin.store.base.Store`). SQLite (one
file per project) is the default; every SQL statement crib runs lives in this package.

The facade opens a store through :func:`open_store` and never imports a backend itself: a path
opens the SQLite file, a URL the backend its scheme names in :data:`BACKENDS` (each backend module
offers ``open_store(url, *, create, migrate, readonly)`` returning a ``Store``).
"""

from __future__ import annotations

import importlib
from pathlib import Path
from typing import TYPE_CHECKING

from ..core.errors import StoreError

if TYPE_CHECKING:  # pragma: no cover
    from .base import Store

#: URL scheme → the module of the backend that opens it.
BACKENDS: dict[str, str] = {
    "postgresql": "crib_plugin.store.postgres",
    "postgres": "crib_plugin.store.postgres",
}


def scheme_of(target: Path | str) -> str:
    """``postgresql`` for ``postgresql://…``; ``""`` for a path (the SQLite file)."""
    text = str(target)
    return text.partition("://")[0].lower() if "://" in text else ""


def open_store(target: Path | str, *, create: bool = True, migrate: bool = True, readonly: bool = False) -> Store:
    """Open the store at ``target``: a SQLite file path, or a URL of a backend in :data:`BACKENDS`.

    A URL whose backend is unknown or not installed is a :class:`StoreError` naming it.
    """
    scheme = scheme_of(target)
    if not scheme:
        from .sqlite import open_store as open_sqlite  # the default backend, loaded when a store opens

        return open_sqlite(target, create=create, migrate=migrate, readonly=readonly)
    module_name = BACKENDS.get(scheme)
    if module_name is None:
        raise StoreError(f"no crib store backend for {scheme}:// URLs (known: {', '.join(sorted(BACKENDS))})")
    try:
        module = importlib.import_module(module_name)
    except ImportError as exc:
        raise StoreError(f"the {scheme} store backend is not available: {exc}") from exc
    store: Store = module.open_store(str(target), create=create, migrate=migrate, readonly=readonly)
    return store


def open_upgraded(target: Path | str) -> Store:
    """Open ``target`` for an unattended reader (the hooks): a SQLite store on an older schema is
    migrated first (:func:`crib_plugin.store.sqlite.open_upgraded`); another backend opens read-only."""
    if scheme_of(target):
        return open_store(target, create=False, readonly=True)
    from .sqlite import open_upgraded as open_sqlite_upgraded

    return open_sqlite_upgraded(target)


__all__ = ["BACKENDS", "open_store", "open_upgraded", "scheme_of"]
