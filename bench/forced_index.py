"""Run a crib command with the side vector index forced onto every store, however small.

    python bench/forced_index.py eval --set coding          # search hit@5 through the index
    CRIB_CHANNEL=vector python bench/forced_index.py eval    # LoCoMo vector channel R@10

The evaluation stores are small (a LoCoMo conversation ≈ 600 turns, the coding set 243 memories),
so in normal use they never get an index (:data:`crib_plugin.store.vector_index.MIN_VECTORS`) and
their figures cannot move. Here the threshold is 1 and a store without a current index gets one
built on its first search, so every k-NN goes through binary codes and exact rescoring of
``--candidates`` of them (default: crib's :data:`~crib_plugin.store.vector_codes.CANDIDATES`, which
on a 600-row store means every row). ``--candidates 20`` shows what the approximation alone costs.
"""

from __future__ import annotations

import sys


def main(argv: list[str]) -> None:
    from crib_plugin.store import vector_codes, vector_index, vector_index_build

    if argv[:1] == ["--candidates"]:
        vector_codes.CANDIDATES = int(argv[1])  # read by Index.candidate_count
        argv = argv[2:]
    vector_index.MIN_VECTORS = 1
    search = vector_index.search

    def through_the_index(store, table, vector, k):  # type: ignore[no-untyped-def]
        dim = len(vector) // 4
        if vector_index.usable_index(store, table, dim) is None and not store.readonly:
            vector_index_build.refresh(store, table)
        if vector_index.usable_index(store, table, dim) is None:
            raise SystemExit(f"forced_index: no usable index for {table} ({store.path}, read-only={store.readonly})")
        return search(store, table, vector, k)

    vector_index.search = through_the_index  # type: ignore[assignment]
    from crib_plugin.hosts.cli.app import main as crib

    crib(argv)


if __name__ == "__main__":
    main(sys.argv[1:])
