"""The ``Store`` contract: everything crib needs from a storage backend, as named methods.

crib's code above ``store/`` talks to a :class:`Store` and never runs SQL (a test scans for it).
The SQLite backend (:class:`~crib_plugin.store.sqlite.SQLiteStore`) implements it; a PostgreSQL
backend implements the same methods and runs the same contract suite
(``tests/store_contract.py``). What crosses the contract is plain Python: ints, strings,
floats, little-endian float32 ``bytes`` for vectors, :class:`~crib_plugin.core.records.Entry` and the
rows of :mod:`.records` — no driver types, no backend-specific row shapes. Errors are
:class:`~crib_plugin.core.errors.StoreError` subclasses.

The contract is split by concern, one protocol per module, and composed here:

- :class:`~.base_entries.Lifecycle` — path, backend, readonly, transactions, schema, close;
- :class:`~.base_entries.Entries` — insert/read/dedupe/delete, threads, supersession, listing;
- :class:`~.base_entries.FullText` — word, trigram, CJK and literal search, term statistics;
- :class:`~.base_vectors.Vectors` — per-embedder vector spaces, cosine search;
- :class:`~.base_vectors.WorkQueue` — deferred embeddings and fact extraction;
- :class:`~.base_facts.Facts` — entities, relations with validity, their sources;
- :class:`~.base_admin.Settings` and :class:`~.base_admin.Audit` — named settings, audit, counts.
"""

from __future__ import annotations

from typing import Protocol, runtime_checkable

from .base_admin import Audit, Settings
from .base_entries import Entries, FullText, Lifecycle
from .base_facts import Facts
from .base_vectors import Vectors, WorkQueue

__all__ = ["Audit", "Entries", "Facts", "FullText", "Lifecycle", "Settings", "Store", "Vectors", "WorkQueue"]


@runtime_checkable
class Store(Lifecycle, Entries, FullText, Vectors, WorkQueue, Facts, Settings, Audit, Protocol):
    """A crib storage backend (see the module docstring). ``isinstance(x, Store)`` checks that
    every method exists; ``mypy`` checks their signatures."""
