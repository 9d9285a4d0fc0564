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


class ExtensionError(StoreError):
    """sqlite-vec (or FTS5) cannot be loaded into the SQLite binding in use."""


class ModelError(CribError):
    """A model (embedder, extractor, reranker) failed or gave output crib rejects."""


class ModelUnavailable(ModelError):
    """A model cannot be reached or its weights cannot be fetched (no network, no Ollama)."""


class EmbedderMismatch(StoreError):
    """The store's vectors were made by another embedder than the one asked for; run `crib reindex`."""
