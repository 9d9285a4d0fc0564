"""Which backend opens a store: chosen by the locator alone — a ``postgresql://`` URL (or a
:class:`~crib_plugin.dburl.ServerURL`) is a PostgreSQL store, anything else a SQLite file.

The one place above the backends that knows both; ``crib_plugin.store.open_store`` is this module's
:func:`open_store`. The PostgreSQL backend (and psycopg) is imported only when a URL is opened.
"""

from __future__ import annotations

from pathlib import Path
from typing import TYPE_CHECKING

from ..core.dburl import ServerURL, is_server_url

if TYPE_CHECKING:  # pragma: no cover
    from .base import Store


def server_url(target: object) -> str | None:
    """The real URL when ``target`` names a server store, else ``None``."""
    if isinstance(target, ServerURL):
        return target.url
    if isinstance(target, str) and is_server_url(target):
        return target.strip()
    return None


def open_store(target: Path | str | ServerURL, *, create: bool = True, migrate: bool = True, readonly: bool = False) -> Store:
    """Open (by default create and migrate) the store ``target`` names, on its backend."""
    url = server_url(target)
    if url is not None:
        from .postgres import open_postgres

        return open_postgres(url, create=create, migrate=migrate, readonly=readonly)
    from .sqlite import open_store as open_sqlite

    return open_sqlite(target, create=create, migrate=migrate, readonly=readonly)  # type: ignore[arg-type]


def open_upgraded(target: Path | str | ServerURL) -> Store:
    """Read-only, migrating an older schema first (for the hooks; see ``sqlite.open_upgraded``)."""
    url = server_url(target)
    if url is not None:
        from .postgres import open_postgres_upgraded

        return open_postgres_upgraded(url)
    from .sqlite import open_upgraded as open_sqlite_upgraded

    return open_sqlite_upgraded(target)  # type: ignore[arg-type]
