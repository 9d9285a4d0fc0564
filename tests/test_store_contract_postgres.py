"""The ``Store`` contract suite (``tests/store_contract.py``) run on the PostgreSQL backend, against
the session's server (``tests/pg.py``), plus what only a server store has to show."""

from __future__ import annotations

import pytest
from store_contract import Opener, StoreContract

from crib_plugin.store import open_store
from crib_plugin.store.base import Store


class TestPostgresStoreContract(StoreContract):
    @pytest.fixture
    def open_backend(self, pg_url: str) -> Opener:  # noqa: F811
        def opener(readonly: bool = False) -> Store:
            return open_store(pg_url, readonly=readonly)

        return opener
