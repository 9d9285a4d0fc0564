"""Which backend opens a store, chosen by the locator alone: a path is a SQLite file, a URL names its
backend by scheme (:data:`BACKENDS`; ``postgresql://`` and ``postgres://`` are the PostgreSQL store).

The one place above the backends that knows them; ``crib_plugin.store.open_store`` is this module's
:func:`open_store`. A backend module offers ``open_store(url, *, create, migrate, readonly)`` and
``open_upgraded(url)``, and is imported only when a URL of its scheme is opened (psycopg stays out
of a SQLite process).
"""

from __future__ import annotations

import importlib
from pathlib import Path
from types import ModuleType
from typing import TYPE_CHECKING

from ..core.dburl import ServerURL
from ..core.errors import StoreError

if TYPE_CHECKING:  # pragma: no cover
    from .base import Store

#: URL scheme → the module of the backend that opens it ("": a file path, the SQLite default).
BACKENDS: dict[str, str] = {
    "": "crib_plugin.store.sqlite",
    "postgresql": "crib_plugin.store.postgres",
    "postgres": "crib_plugin.store.postgres",
}


#: What to install when a backend's optional dependency is missing.
INSTALL_HINTS = {"postgresql": "pip install 'crib-plugin[postgres]'", "postgres": "pip install 'crib-plugin[postgres]'"}


def server_url(target: object) -> str | None:
    """The real URL when ``target`` names a store by URL (``scheme://…``), else ``None``."""
    if isinstance(target, ServerURL):
        return target.url
    if isinstance(target, str) and "://" in target:
        return target.strip()
    return None


def scheme_of(target: Path | str | ServerURL) -> str:
    """``postgresql`` for ``postgresql://…``; ``""`` for a path (the SQLite file)."""
    url = server_url(target)
    return url.partition("://")[0].lower() if url else ""


def _backend(scheme: str) -> ModuleType:
    module_name = BACKENDS.get(scheme)
    if module_name is None:
        raise StoreError(f"no crib store backend for {scheme}:// URLs (known: {', '.join(sorted(b for b in BACKENDS if b))})")
    try:
        # deferred: the store backend by URL: the SQLite default (apsw, sqlite-vec: 9 modules) is imported when a
        # store opens, after `crib retrieve` forks its prefetch worker's embedding; postgresql:// loads psycopg
        return importlib.import_module(module_name)
    except ImportError as exc:
        hint = INSTALL_HINTS.get(scheme)
        raise StoreError(f"the {scheme} store backend is not available: {exc}" + (f" ({hint})" if hint else "")) from exc


def open_store(target: Path | str | ServerURL, *, create: bool = True, migrate: bool = True, readonly: bool = False) -> Store:
    """Open (by default create and migrate) the store ``target`` names, on its backend."""
    url = server_url(target)
    store: Store = _backend(scheme_of(target)).open_store(target if url is None else url, create=create, migrate=migrate, readonly=readonly)
    return store


def open_upgraded(target: Path | str | ServerURL) -> Store:
    """For an unattended reader (the hooks): a store on an older schema is migrated first."""
    url = server_url(target)
    store: Store = _backend(scheme_of(target)).open_upgraded(target if url is None else url)
    return store
