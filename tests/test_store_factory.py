"""``store.open_store``: the one way the facade opens a store — a path is a SQLite file, a URL
names its backend by scheme (``store.BACKENDS``)."""

from __future__ import annotations

from pathlib import Path

import pytest

from crib_plugin.core.errors import StoreError
from crib_plugin.store import BACKENDS, open_store, scheme_of
from crib_plugin.store.sqlite import SQLiteStore


def test_a_path_opens_the_sqlite_file(tmp_path: Path) -> None:
    store = open_store(tmp_path / "crib.db")
    try:
        assert isinstance(store, SQLiteStore) and (tmp_path / "crib.db").exists()
    finally:
        store.close()
    assert scheme_of(tmp_path / "crib.db") == "" and scheme_of("postgresql://h/db") == "postgresql"


def test_an_unknown_scheme_is_a_clear_store_error() -> None:
    with pytest.raises(StoreError, match="no crib store backend for mysql://"):
        open_store("mysql://localhost/crib")


def test_a_url_goes_to_its_backend_module(monkeypatch: pytest.MonkeyPatch) -> None:
    import sys
    import types

    seen: list[tuple[str, bool]] = []
    fake = types.ModuleType("crib_fake_backend")
    fake.open_store = lambda url, *, create, migrate, readonly: seen.append((url, readonly)) or "a store"  # type: ignore[attr-defined]
    monkeypatch.setitem(sys.modules, "crib_fake_backend", fake)
    monkeypatch.setitem(BACKENDS, "fake", "crib_fake_backend")
    assert open_store("fake://somewhere/db", readonly=True) == "a store"
    assert seen == [("fake://somewhere/db", True)]
    monkeypatch.setitem(BACKENDS, "gone", "crib_no_such_backend_module")
    with pytest.raises(StoreError, match="gone store backend is not available"):
        open_store("gone://x")
