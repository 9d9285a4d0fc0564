"""Two ``crib reindex`` runs at once on one PostgreSQL store embed each entry exactly once.

Each reindexer claims its batch ``FOR UPDATE SKIP LOCKED`` (``PostgresStore.claim_without_vector``).
The fake embedder of each process records the texts it embeds, and on its first batch waits at a
barrier for the other process's first batch: both reindexers must hold a claim at the same moment.
Without ``SKIP LOCKED`` the second would wait on the first one's rows and the barrier breaks; without
the lock both would claim the same batch and embed it twice.
"""

from __future__ import annotations

import multiprocessing
from typing import Any

from pg import new_database

from crib_plugin.core.write_types import EMBED_BATCH
from crib_plugin.store import open_store

PROBE = "crib reindex probe"
ENTRIES = 4 * EMBED_BATCH + 5


def _stock(url: str) -> None:
    """``ENTRIES`` entries without a vector (written while no embedder was around)."""
    store = open_store(url)
    with store.transaction():
        for n in range(ENTRIES):
            store.insert_entry("note", f"Fact number {n} about service {n % 7} and its port {8000 + n}.", "2026-01-01T00:00:00Z", {})
    store.close()


def _reindex(url: str, barrier: Any, texts: Any) -> None:
    """One reindexer; its embedder reports every text and meets the other at its first batch."""
    from fake_embedder import FakeEmbedder

    from crib_plugin import Memory

    embed = FakeEmbedder.embed_documents
    first = [True]

    def counted(self: FakeEmbedder, batch: Any) -> Any:
        real = [t for t in batch if t != PROBE]
        if real and first[0]:
            first[0] = False
            barrier.wait(60)  # generous: a loaded CI machine; only a broken claim waits it out
        for text in real:
            texts.put(text)
        return embed(self, batch)

    FakeEmbedder.embed_documents = counted  # type: ignore[method-assign]
    try:
        with Memory(url) as memory:
            memory.reindex()
    finally:
        FakeEmbedder.embed_documents = embed  # type: ignore[method-assign]


def _vectors(url: str) -> list[tuple[int, bytes]]:
    store = open_store(url, readonly=True)
    try:
        (table, _dim), = store.vector_spaces().values()
        return store.all_vectors(table)
    finally:
        store.close()


def test_two_reindexers_embed_each_entry_once(pg_server: str, fake_embedder: type) -> None:  # noqa: F811
    together, alone = new_database(pg_server), new_database(pg_server)
    _stock(together)
    _stock(alone)
    context = multiprocessing.get_context("fork")
    barrier, texts = context.Barrier(2), context.Queue()
    workers = [context.Process(target=_reindex, args=(together, barrier, texts)) for _ in range(2)]
    for worker in workers:
        worker.start()
    embedded = []
    while len(embedded) < ENTRIES and any(w.is_alive() for w in workers):
        try:
            embedded.append(texts.get(timeout=1))
        except Exception:
            pass
    for worker in workers:
        worker.join(120)
    assert [w.exitcode for w in workers] == [0, 0]
    while not texts.empty():
        embedded.append(texts.get(timeout=1))
    assert len(embedded) == ENTRIES and len(set(embedded)) == ENTRIES  # each entry once

    _reindex(alone, context.Barrier(1), context.Queue())
    assert _vectors(together) == _vectors(alone) and len(_vectors(alone)) == ENTRIES
