"""The ``Store`` contract suite (``tests/store_contract.py``) run on the SQLite backend."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest
from store_contract import Opener, StoreContract

from crib_plugin.store import open_store
from crib_plugin.store.base import Store
from crib_plugin.store.sqlite import SQLiteStore


class TestSQLiteStoreContract(StoreContract):
    @pytest.fixture
    def open_backend(self, tmp_path: Path) -> Opener:
        def opener(readonly: bool = False) -> Store:
            return open_store(tmp_path / "contract.db", readonly=readonly)

        return opener


def test_sqlite_store_is_a_store_for_mypy(tmp_path: Path) -> None:
    """``isinstance`` holds at run time; the annotated assignment is what mypy checks."""
    store: Store = open_store(tmp_path / "a.db")
    assert isinstance(store, SQLiteStore) and isinstance(store, Store)
    store.close()


def test_a_store_missing_a_method_is_not_a_store() -> None:
    class Partial:
        backend = "partial"

        def __getattr__(self, name: str) -> Any:
            raise AttributeError(name)

    assert not isinstance(Partial(), Store)
