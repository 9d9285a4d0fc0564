"""The side vector index (crib_plugin/store/vector_index.py) is never trusted stale: a missing,
truncated, corrupt or outdated file is bypassed (exact search) and rebuilt by the next writer, and
entries written behind its back (another process, no refresh) are still found."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path
from typing import Any

import numpy as np
import pytest

from crib_plugin.store import open_store, vector_codes, vector_index

DIM = 64
KEY = "fake:index-test:64"


def _vectors(count: int, seed: int) -> np.ndarray:
    rng = np.random.default_rng(seed)
    block = rng.standard_normal((count, DIM)).astype("<f4")
    return block / np.linalg.norm(block, axis=1, keepdims=True)


def _fill(db: Path, count: int, seed: int = 1) -> str:
    store = open_store(db)
    table = store.ensure_vector_space(KEY, DIM)
    with store.transaction():
        for k, vector in enumerate(_vectors(count, seed)):
            entry_id = store.insert_entry("note", f"memory {seed}-{k}", "2026-11-25T00:00:00Z", {})
            store.put_vector(table, entry_id, vector.tobytes())
    store.close()
    return table


@pytest.fixture
def small_index(monkeypatch: pytest.MonkeyPatch) -> None:
    """A store of a few hundred vectors counts as big, and every record is a candidate, so the
    indexed search must return exactly what the exact scan returns."""
    monkeypatch.setattr(vector_index, "MIN_VECTORS", 100)
    monkeypatch.setattr(vector_codes, "CANDIDATES", 10_000)
    monkeypatch.setattr(vector_index, "APPEND_AT", 8)


def _same_as_exact(store, table: str, queries: np.ndarray, k: int = 10) -> None:  # type: ignore[no-untyped-def]
    for query in queries:
        blob = query.astype("<f4").tobytes()
        fast, exact = store.vector_search(table, blob, k), store.exact_vector_search(table, blob, k)
        assert [i for i, _ in fast] == [i for i, _ in exact]
        assert [d for _, d in fast] == pytest.approx([d for _, d in exact], abs=1e-5)



def _indexed(tmp_path: Path, entries: int = 300) -> tuple[Path, str, Any]:
    """A store of ``entries`` seeded vectors with its side index built: (path, vector table, store)."""
    db = tmp_path / "crib.db"
    table = _fill(db, entries)
    store = open_store(db)
    store.refresh_vector_index(table)
    return db, table, store

def test_a_big_store_gets_an_index_that_answers_as_exact_search(tmp_path: Path, small_index: None) -> None:
    db = tmp_path / "crib.db"
    table = _fill(db, 400)
    store = open_store(db)
    assert vector_index.usable_index(store, table, DIM) is None  # nothing written it yet
    assert store.refresh_vector_index(table) == "rebuild"
    index = vector_index.usable_index(store, table, DIM)
    assert index is not None and len(index.records) == 400
    _same_as_exact(store, table, _vectors(20, 99))
    assert store.refresh_vector_index(table) == "none"  # current: nothing to do


def test_a_small_store_keeps_no_index(tmp_path: Path, small_index: None) -> None:
    db = tmp_path / "crib.db"
    table = _fill(db, 50)
    store = open_store(db)
    assert store.refresh_vector_index(table) == "small"
    assert not vector_index.index_path(db, table).exists()


@pytest.mark.parametrize("damage", ["delete", "truncate", "garbage", "other-table", "vectors-lost", "vectors-of-another-build"])
def test_a_lost_or_damaged_index_is_bypassed_then_rebuilt(tmp_path: Path, small_index: None, damage: str) -> None:
    db, table, store = _indexed(tmp_path)
    path = vector_index.index_path(db, table)
    if damage == "delete":
        path.unlink()
    elif damage == "truncate":
        with open(path, "r+b") as handle:
            handle.truncate(vector_codes.HEADER + 100)
    elif damage == "garbage":
        path.write_bytes(b"\x00\xff not an index" * 50)
    elif damage == "vectors-lost":
        vector_codes.floats_path(path).unlink()
    elif damage == "vectors-of-another-build":
        floats = vector_codes.floats_path(path)
        floats.write_bytes(b"1-2".ljust(vector_codes.HEADER, b" ") + floats.read_bytes()[vector_codes.HEADER:])
    else:  # a valid index of another space copied over this one
        data = path.read_bytes().replace(table.encode(), b"vec_other_space_table"[: len(table)].ljust(len(table), b"x"))
        path.write_bytes(data)
    assert vector_index.usable_index(store, table, DIM) is None
    _same_as_exact(store, table, _vectors(10, 7))
    assert store.refresh_vector_index(table) == "rebuild"
    assert vector_index.usable_index(store, table, DIM) is not None
    _same_as_exact(store, table, _vectors(10, 8))


def test_entries_added_behind_its_back_are_found(tmp_path: Path, small_index: None) -> None:
    db, table, store = _indexed(tmp_path)
    newcomer = _vectors(1, 12345)[0]
    script = (
        "import sys, numpy as np\n"
        "from crib_plugin.store import open_store\n"
        f"s = open_store({str(db)!r}); t = s.ensure_vector_space({KEY!r}, {DIM})\n"
        "v = np.frombuffer(bytes.fromhex(sys.argv[1]), dtype='<f4')\n"
        "with s.transaction():\n"
        "    for k in range(3):\n"
        "        i = s.insert_entry('note', f'late {k}', '2026-11-25T00:00:00Z', {})\n"
        "        s.put_vector(t, i, (v if k == 2 else -v).astype('<f4').tobytes())\n"
    )
    subprocess.run([sys.executable, "-c", script, newcomer.astype("<f4").tobytes().hex()], check=True)
    index = vector_index.usable_index(store, table, DIM)
    assert index is not None and len(index.records) == 300  # the file did not change: a tail of 3
    hits = store.vector_search(table, newcomer.tobytes(), 5)
    assert hits[0][0] == 303 and hits[0][1] == pytest.approx(0.0, abs=1e-5)
    _same_as_exact(store, table, np.vstack([newcomer, _vectors(10, 5)]))


def test_a_replaced_vector_makes_the_index_stale(tmp_path: Path, small_index: None) -> None:
    db, table, store = _indexed(tmp_path)
    target = _vectors(1, 4242)[0]
    with store.transaction():
        store.put_vector(table, 17, target.tobytes())  # `crib reindex` or an edit re-embedding entry 17
    assert vector_index.usable_index(store, table, DIM) is None
    assert store.vector_search(table, target.tobytes(), 1)[0][0] == 17
    assert store.refresh_vector_index(table) == "rebuild"
    assert vector_index.usable_index(store, table, DIM) is not None
    assert store.vector_search(table, target.tobytes(), 1)[0][0] == 17


def test_a_deleted_entry_is_never_returned(tmp_path: Path, small_index: None) -> None:
    db, table, store = _indexed(tmp_path)
    query = _vectors(300, 1)[41]  # entry 42's own vector
    assert store.vector_search(table, query.tobytes(), 1)[0][0] == 42
    with store.transaction():
        store.delete_entry(42)
    assert vector_index.usable_index(store, table, DIM) is not None  # a delete needs no rebuild
    assert 42 not in [i for i, _ in store.vector_search(table, query.tobytes(), 10)]
    _same_as_exact(store, table, np.vstack([query, _vectors(5, 3)]))


def test_writers_append_the_tail(tmp_path: Path, small_index: None) -> None:
    db, table, store = _indexed(tmp_path)
    _fill(db, 20, seed=2)
    assert store.refresh_vector_index(table) == "append"
    index = vector_index.usable_index(store, table, DIM)
    assert index is not None and len(index.records) == 320 and index.max_rowid == 320
    _same_as_exact(store, table, _vectors(10, 2)[:10])


def test_a_read_only_store_never_writes_the_index(tmp_path: Path, small_index: None) -> None:
    db = tmp_path / "crib.db"
    table = _fill(db, 300)
    reader = open_store(db, readonly=True)
    assert reader.refresh_vector_index(table) == "unwritable"
    assert not vector_index.index_path(db, table).exists()
    _same_as_exact(reader, table, _vectors(5, 6))


def test_with_few_candidates_the_nearest_is_still_found(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """The approximation itself: with 64 candidates out of 2,000, a slightly moved copy of a stored
    vector still finds it first."""
    monkeypatch.setattr(vector_index, "MIN_VECTORS", 100)
    monkeypatch.setattr(vector_codes, "CANDIDATES", 64)
    db = tmp_path / "crib.db"
    table = _fill(db, 2000)
    store = open_store(db)
    store.refresh_vector_index(table)
    stored = _vectors(2000, 1)
    noise = _vectors(50, 77) * 0.1
    for k in range(50):
        query = stored[k * 40] + noise[k]
        assert store.vector_search(table, query.astype("<f4").tobytes(), 1)[0][0] == k * 40 + 1


def test_stored_vectors_read_through_the_index_are_the_stored_ones(tmp_path: Path, small_index: None) -> None:
    db = tmp_path / "crib.db"
    table = _fill(db, 300)
    store = open_store(db)
    ids = list(range(1, 301, 7))
    direct = store.point_vectors(table, ids)
    store.refresh_vector_index(table)
    assert vector_index.read_vectors(store, table, ids) == direct
    assert store.stored_vectors(table, ids) == direct


def test_the_histogram_selection_takes_the_count_smallest_distances() -> None:
    import numpy as np

    from crib_plugin.store.vector_codes import nearest_by_histogram

    rng = np.random.default_rng(3)
    for count in (1, 7, 500, 4_999):
        distance = rng.integers(100, 260, size=5_000).astype(np.uint16)
        picked = nearest_by_histogram(distance, count)
        assert len(picked) == len(set(picked.tolist())) == count
        assert np.array_equal(np.sort(distance[picked]), np.sort(distance)[:count])


def test_reading_ahead_opens_the_index_the_search_then_uses(tmp_path: Path, small_index: None, monkeypatch: pytest.MonkeyPatch) -> None:
    """While the prefetch worker embeds, ``prefetch_vectors`` (even with no hits to read) opens
    the side index — numpy's import and the mapping — so the search after the vector arrives
    does not; a store without an index opens nothing."""
    db, table, store = _indexed(tmp_path)
    monkeypatch.setattr(vector_index, "_opened", {})  # as in a fresh process
    opened: list[Path] = []
    real = vector_codes.Index.open
    monkeypatch.setattr(vector_codes.Index, "open", lambda path: opened.append(path) or real(path))
    store.prefetch_vectors(table, [])
    assert opened == [vector_index.index_path(db, table)]
    query = _vectors(1, 7)[0].tobytes()
    assert store.vector_search(table, query, 5) == vector_index.search(store, table, query, 5)
    assert len(opened) == 1  # the search used the index opened ahead

    small = tmp_path / "small.db"
    small_table = _fill(small, 50)
    small_store = open_store(small)
    small_store.refresh_vector_index(small_table)
    small_store.prefetch_vectors(small_table, [])
    assert len(opened) == 1


def test_rows_read_by_pread_are_the_mapped_rows(tmp_path: Path, small_index: None) -> None:
    db, table, store = _indexed(tmp_path)
    index = vector_index.usable_index(store, table, DIM)
    assert index is not None
    positions = [0, 5, 6, 150, 299]
    assert index.read_rows(positions) == np.asarray(index.floats[positions]).tobytes()
    assert index.read_rows([]) == b""
