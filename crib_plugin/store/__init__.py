"""Storage backends behind one contract (:class:`~crib_plugin.store.base.Store`). SQLite (one
file per project) is the default; a ``postgresql://`` URL opens the PostgreSQL backend
(:mod:`.postgres`). :func:`open_store` chooses by the locator (:mod:`.factory`). Every SQL
statement crib runs lives in this package."""

from __future__ import annotations

from .factory import open_store, open_upgraded
from .sqlite import SQLiteStore

# ``Store`` is imported from ``.base`` by whoever needs it: opening a store (the per-prompt hook)
# does not load the protocol modules.
__all__ = ["SQLiteStore", "open_store", "open_upgraded"]
