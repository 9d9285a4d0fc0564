"""Storage backends behind one contract (:class:`~crib_plugin.store.base.Store`). SQLite (one
file per project) is the default; a ``postgresql://`` URL opens the PostgreSQL backend
(:mod:`.postgres`). The facade opens a store through :func:`open_store` and never imports a backend
itself: :mod:`.factory` chooses by the locator. Every SQL statement crib runs lives in this package.
"""

from __future__ import annotations

from .factory import BACKENDS, open_store, open_upgraded, scheme_of

# ``Store`` is imported from ``.base`` by whoever needs it: opening a store (the per-prompt hook)
# does not load the protocol modules.
__all__ = ["BACKENDS", "open_store", "open_upgraded", "scheme_of"]
