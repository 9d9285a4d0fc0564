"""The small exception tree crib raises, so the CLI can turn each into one clean line.

Everything crib raises on purpose derives from :class:`CribError`; anything else is a bug.
"""

from __future__ import annotations


class CribError(Exception):
    """Base of every error crib raises on purpose. ``exit_code`` is what the CLI exits with."""

    exit_code = 1


class InputError(CribError):
    """The caller gave crib something it cannot use (empty text, bad JSON line, unknown type)."""


class ConfigError(CribError):
    """An environment variable or setting names something that does not exist."""


class StoreError(CribError):
    """The database cannot be opened, migrated, read or written."""


class StoreMissing(StoreError):
    """No store there yet (a server database crib has not written to): reads find nothing in it."""


class ExtensionError(StoreError):
    """sqlite-vec (or FTS5) cannot be loaded into the SQLite binding in use."""


class ModelError(CribError):
    """A model (embedder, extractor, reranker) failed or gave output crib rejects."""


class ModelUnavailable(ModelError):
    """A model cannot be reached or its weights cannot be fetched (no network, no Ollama)."""


class EmbedderMismatch(StoreError):
    """The store's vectors were made by another embedder than the one asked for; run `crib reindex`."""


class StoreBusy(StoreError):
    """Another process held the database's write lock for longer than the busy timeout."""


class StoreCorrupt(StoreError):
    """The database file is damaged: truncated, overwritten or otherwise malformed."""


class NotACribStore(StoreError):
    """The file is empty, not a SQLite database, or a SQLite database that crib did not create."""


class StoreTooNew(StoreError):
    """The store was written by a newer crib (its schema version is above what this crib knows)."""


class StoreOutdated(StoreError):
    """An older schema that could not be upgraded where it was read (a read-only store); ``crib init`` upgrades it."""


class StoreFull(StoreError):
    """The disk (or the database's page limit) is full: the write was rolled back, nothing stored."""


class StoreReadOnly(StoreError):
    """The database (or its directory) cannot be written by this process."""


class StoreUnavailable(StoreError):
    """A server store that stopped answering mid-operation (a dropped connection: a restart).
    Worth one retry on a fresh connection; never read as "nothing stored"."""


class StoreUnreachable(StoreUnavailable):
    """A server store that cannot be reached or logged in to now (down, wrong host, wrong password).
    Not retried: it failed within ``connect_timeout``, and another try would fail the same way."""
