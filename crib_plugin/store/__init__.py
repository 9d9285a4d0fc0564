"""Storage backends behind one contract. SQLite (one file per project) is the default."""

from __future__ import annotations

from .sqlite import SQLiteStore, open_store

__all__ = ["SQLiteStore", "open_store"]
