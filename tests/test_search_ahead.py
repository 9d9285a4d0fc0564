"""The side-index search handed to the prefetch worker (crib_plugin/store/vector_index_ahead.py):
the same answers as the search in-process, never a stale one, and no numpy in the main process."""

from __future__ import annotations

import os
import subprocess
import sys
import textwrap
from pathlib import Path
from typing import Any

import numpy as np
import pytest

from crib_plugin.core.cues import CUE_KEY, cue_space_key
from crib_plugin.store import open_store, vector_index, vector_index_ahead
from crib_plugin.store.vector_index_file import IndexFile

DIM = 64
KEY = "fake:ahead-test:64"
ENTRIES = 1_500  # with 512 candidates not every record is one: the ranking is the index's own


def _vectors(count: int, seed: int) -> np.ndarray:
    block = np.random.default_rng(seed).standard_normal((count, DIM)).astype("<f4")
    return block / np.linalg.norm(block, axis=1, keepdims=True)


def _put(store: Any, table: str, count: int, seed: int) -> list[int]:
    ids = []
    with store.transaction():
        for k, vector in enumerate(_vectors(count, seed)):
            entry_id = store.insert_entry("note", f"memory {seed}-{k}", "2026-11-25T00:00:00Z", {})
            store.put_vector(table, entry_id, vector.tobytes())
            ids.append(entry_id)
    return ids


@pytest.fixture
def indexed(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> tuple[Any, str]:
    monkeypatch.setattr(vector_index, "MIN_VECTORS", 100)
    store = open_store(tmp_path / "crib.db")
    table = store.ensure_vector_space(KEY, DIM)
    _put(store, table, ENTRIES, 1)
    assert store.refresh_vector_index(table) == "rebuild"
    return store, table


def _through_worker(store: Any, table: str, query: bytes, k: int) -> list[tuple[int, float]] | None:
    """plan (main process) -> search_in_worker (the worker, here in-process) -> take (main)."""
    planned = store.plan_search_ahead(table)
    assert planned is not None
    found = vector_index_ahead.search_in_worker([planned], query)[table]
    return vector_index_ahead.take(store, table, query, k, planned, lambda vector: found if vector == query else None)


def test_the_worker_s_ranking_is_the_in_process_search(indexed: tuple[Any, str]) -> None:
    store, table = indexed
    _put(store, table, 5, 2)  # a tail the index does not hold yet (no refresh)
    for query in _vectors(15, 9):
        blob = query.tobytes()
        assert _through_worker(store, table, blob, 10) == vector_index.search(store, table, blob, 10)


def test_store_search_takes_the_worker_s_ranking_once(indexed: tuple[Any, str]) -> None:
    store, table = indexed
    blob = _vectors(1, 4)[0].tobytes()
    planned = store.plan_search_ahead(table)
    calls: list[bytes] = []
    store.search_ahead(table, planned, lambda vector: calls.append(vector) or {"count": 512, "ranked": [(1, 0.5), (2, 0.25)]})
    assert store.vector_search(table, blob, 1) == [(1, 0.5)]  # what the worker said, as it ranked it
    assert calls == [blob]
    assert store.vector_search(table, blob, 10) == vector_index.search(store, table, blob, 10)  # used once


def test_a_stale_plan_is_never_used(indexed: tuple[Any, str]) -> None:
    store, table = indexed
    blob = _vectors(1, 5)[0].tobytes()
    never = lambda vector: {"count": 512, "ranked": [(1, 0.0)]}  # noqa: E731 - a ranking that must not be taken

    planned = store.plan_search_ahead(table)
    _put(store, table, 1, 6)  # written after the plan: the tail moved
    assert vector_index_ahead.take(store, table, blob, 10, planned, never) is None

    planned = store.plan_search_ahead(table)
    _put(store, table, 20, 7)
    assert store.refresh_vector_index(table) == "append"  # the files moved on
    assert vector_index_ahead.take(store, table, blob, 10, planned, never) is None

    planned = store.plan_search_ahead(table)
    assert vector_index_ahead.take(store, table, blob, 500, planned, never) is None  # more candidates than ranked
    assert vector_index_ahead.take(store, table, blob[:-4], 10, planned, never) is None  # another dimension
    assert vector_index_ahead.take(store, table, blob, 10, planned, lambda vector: None) is None  # no answer
    assert vector_index_ahead.take(store, table, blob, 10, planned, never) == [(1, 0.0)]


def test_an_entry_deleted_after_the_plan_drops_out(indexed: tuple[Any, str]) -> None:
    store, table = indexed
    blob = _vectors(1, 8)[0].tobytes()
    nearest = vector_index.search(store, table, blob, 3)
    planned = store.plan_search_ahead(table)
    found = vector_index_ahead.search_in_worker([planned], blob)[table]
    with store.transaction():
        store.delete_vector(table, nearest[0][0])
    taken = vector_index_ahead.take(store, table, blob, 3, planned, lambda vector: found)
    assert taken is not None and nearest[0][0] not in [i for i, _ in taken]
    assert taken[:2] == nearest[1:]


def test_no_plan_without_a_current_index(tmp_path: Path, indexed: tuple[Any, str]) -> None:
    store, table = indexed
    small = open_store(tmp_path / "small.db")
    small_table = small.ensure_vector_space(KEY, DIM)
    _put(small, small_table, 10, 3)
    assert small.plan_search_ahead(small_table) is None  # below MIN_VECTORS: no index
    with store.transaction():
        store.set_setting(vector_index.generation_key(table), "99")
    assert store.plan_search_ahead(table) is None  # another generation


def test_the_numpy_free_reader_reads_what_numpy_reads(indexed: tuple[Any, str]) -> None:
    store, table = indexed
    index = vector_index.usable_index(store, table, DIM)
    reader = IndexFile.open(vector_index.index_path(store.path, table))
    assert index is not None and reader is not None
    ids = [int(i) for i in index.records["id"][[0, 3, 700, ENTRIES - 1]]] + [10**9]
    assert reader.positions(ids) == index.positions(ids)
    assert reader.read_rows([0, 700]) == [index.floats[0].tobytes(), index.floats[700].tobytes()]
    reader.close()


def test_reading_stored_vectors_and_planning_import_no_numpy(indexed: tuple[Any, str]) -> None:
    """What the main process does while the worker embeds: the reranker's vectors read from the
    index and the search plan, in a fresh process — numpy stays out of it."""
    store, table = indexed
    ids = list(range(1, 40, 3))
    expected = store.point_vectors(table, ids)
    script = textwrap.dedent(
        f"""
        import sys
        from crib_plugin.store import open_store
        store = open_store({str(store.path)!r})
        store.prefetch_vectors({table!r}, {ids!r})
        blobs = store.stored_vectors({table!r}, {ids!r})
        assert store.plan_search_ahead({table!r}) is not None
        print(sorted(blobs) == {sorted(expected)!r}, "numpy" in sys.modules)
        sys.stdout.buffer.write(b"".join(blobs[i] for i in sorted(blobs)))
        """
    )
    done = subprocess.run([sys.executable, "-c", script], capture_output=True, timeout=60)
    first, _, rest = done.stdout.partition(b"\n")
    assert first.decode() == "True False", done.stderr.decode()
    assert rest == b"".join(expected[i] for i in sorted(expected))


MEMORIES = (
    ("type=decision Chose SQLite for storage. Zero dependencies.", "when choosing where to keep data"),
    ("type=error The task queue crashed with ERR_QUEUE_4412 on a duplicate job id.", "when the task queue fails"),
    ("type=correction Use the staging runner for backups, not the production one.", "when running backups"),
    ("The user wants answers in British English and short commit messages.", "when writing commit messages"),
)


@pytest.mark.skipif(not hasattr(os, "fork"), reason="the prefetch worker needs os.fork")
@pytest.mark.parametrize("cues", [False, True], ids=["content", "content-and-cues"])
def test_a_cold_retrieve_searches_the_index_in_the_worker(memory: Any, monkeypatch: pytest.MonkeyPatch, cues: bool) -> None:
    """End to end with real MiniLM vectors: the worker's search is taken — for the recall cues'
    space too, when the memories have cues — the main process never imports numpy, and the output
    is the in-process one."""
    monkeypatch.setattr(vector_index, "MIN_VECTORS", 3)
    for text, cue in MEMORIES:
        memory.write(text, metadata={CUE_KEY: cue} if cues else None)
    tables = [memory.store.vector_space(memory.embedder_key())[0]]
    if cues:
        tables.append(memory.store.vector_space(cue_space_key(memory.embedder_key()))[0])
    for table in tables:
        assert vector_index.usable_index(memory.store, table, 384) is not None
    memory.close()
    script = textwrap.dedent(
        """
        import sys
        from crib_plugin.store import vector_index_ahead
        taken = []
        real = vector_index_ahead.take
        vector_index_ahead.take = lambda *a: taken.append(real(*a)) or taken[-1]
        from crib_plugin.hosts.cli.retrieve import run_retrieve
        run_retrieve("which storage engine did we pick?")
        sys.stdout.flush()
        print("NUMPY" if "numpy" in sys.modules else "CLEAN", [t is not None for t in taken], file=sys.stderr)
        """
    )
    outputs = {}
    for parallel in ("1", "0"):
        env = dict(os.environ, CRIB_PARALLEL=parallel, CRIB_DB=str(memory.path))
        done = subprocess.run([sys.executable, "-c", script], capture_output=True, text=True, env=env, timeout=60)
        outputs[parallel] = [line for line in done.stdout.splitlines() if "context_time" not in line]
        if parallel == "1":
            assert done.stderr.strip().splitlines()[-1] == f"CLEAN {[True] * len(tables)}", done.stderr
    assert "Chose SQLite for storage" in "\n".join(outputs["1"])
    assert outputs["1"] == outputs["0"]
