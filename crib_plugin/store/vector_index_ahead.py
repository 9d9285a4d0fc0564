"""The side-index search run by the prefetch worker, so a cold retrieve's main process never imports numpy.

Why: a cold ``crib retrieve`` on a big store forks a worker that imports numpy and embeds the
prompt (:mod:`crib_plugin.read.prefetch`) while the main process loads the rest. The main process
used to import numpy too (100-250 ms on the loaded 2-core machine, ≈ 60 ms idle), to run the
side index's Hamming pass and rescoring (:mod:`.vector_index`) once the vector arrived — and on
two cores it, not the worker, was the critical path. Now the worker runs that search with the
numpy it already has, and the main process only checks and uses the answer:

1. :func:`plan` (main process, while the worker embeds; no numpy): the index's header read from its
   files, checked against the database (dimension, table, the space's generation), and the
   *tail*'s ids and vectors read from the database — what the worker needs, picklable.
2. :func:`search_in_worker` (worker, once it has the vector): opens the index, checks it is the
   planned one (same header), and ranks the candidates and the tail exactly as
   :func:`.vector_index.search` does (:meth:`.vector_codes.Index.rank`), with no database access;
   it answers with the ranking and the candidate count it used.
3. :func:`take` (main process, in ``vector_search``): uses the worker's ranking only if nothing
   moved since the plan — the same header, generation and tail, and a ``k`` that needs no more
   candidates than were ranked — then drops entries deleted since
   (:func:`.vector_index.nearest_alive`, the database's say).
   Otherwise, or when the worker did not answer, the search runs here as before: slower, never
   different.
"""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path
from typing import Any, Callable

from . import vector_index as vi
from .vector_index_file import index_path, read_header

Ranked = list[tuple[int, float]]
Searched = dict[str, Any]
"""The worker's answer for one table: ``{"count": records taken by Hamming distance, "ranked": Ranked}``."""


def plan(store: "vi.SQLiteStore", table: str) -> dict[str, Any] | None:
    """What the worker needs to search ``table``'s side index; None when the store has no
    current index for it (a small store, a stale or damaged one, a tail too long: searched exactly)."""
    dim = store.execute("SELECT dim FROM vector_spaces WHERE table_name = ?", (table,))
    path = index_path(store.path, table)
    header = read_header(path) if dim else None
    if header is None or int(header["dim"]) != int(dim[0][0]) or int(header["dim"]) % 8 or header.get("table") != table:
        return None
    if int(header["generation"]) != vi.generation(store, table):
        return None
    tail = vi.tail_ids(store, table, int(header["max_rowid"]), vi.TAIL_MAX + 1)
    if len(tail) > vi.TAIL_MAX:
        return None
    blobs = store.point_vectors(table, tail) if tail else {}
    return {
        "table": table,
        "codes": str(path),
        "header": header,
        "tail_ids": tail,
        "tail": {i: blobs[i] for i in tail if i in blobs},
        "run": search_in_worker,  # what the worker calls (pickled by reference)
    }


def search_in_worker(plans: Sequence[dict[str, Any]], vector: bytes) -> dict[str, Searched | None]:
    """In the prefetch worker: each planned table's ranked candidates for ``vector`` and how many
    records were taken by Hamming distance (None for a table whose index is no longer the planned one)."""
    out: dict[str, Searched | None] = {}
    for planned in plans:
        index = vi.open_index(Path(planned["codes"]))
        if index is None or index.header != planned["header"]:
            out[planned["table"]] = None
            continue
        ranked, _fresh = index.rank(vector, 0, list(planned["tail"]), planned["tail"])
        out[planned["table"]] = {"count": index.candidate_count(0), "ranked": ranked}
    return out


def take(store: "vi.SQLiteStore", table: str, vector: bytes, k: int, planned: dict[str, Any], fetch: Callable[[bytes], Any]) -> Ranked | None:
    """The ``k`` nearest of ``table`` from the worker's ranking, or None to search here instead."""
    if len(vector) != 4 * int(planned["header"]["dim"]):
        return None
    if read_header(Path(planned["codes"])) != planned["header"]:
        return None  # appended to or rebuilt since
    if int(planned["header"]["generation"]) != vi.generation(store, table):
        return None
    if vi.tail_ids(store, table, int(planned["header"]["max_rowid"]), vi.TAIL_MAX + 1) != planned["tail_ids"]:
        return None  # written since
    found = fetch(vector)
    if not isinstance(found, dict) or 4 * k > int(found["count"]):
        return None  # no answer, or a k this large takes more candidates than were ranked
    return vi.nearest_alive(store, table, found["ranked"], set(planned["tail"]), k)
