"""The background worker: ``python -m crib_plugin.hosts.embed_worker DB``.

It also does a write's model work — the recall cue and the facts a local model writes
(:mod:`crib_plugin.write.model_work`) — before embedding, so a write never waits on a model.

Started detached by a write with ``CRIB_WRITE_VECTORS=background``
(:func:`crib_plugin.write.deferred.start_background_embedder`) after it committed its entry with
the embedding queued. It embeds every queued entry of the store, completes the supersession steps
that need a vector (:func:`crib_plugin.write.maintenance.embed_pending`), brings the side index up
to date, and exits. One worker per store at a time (``<db>-embedder.lock``): a second one exits at
once, and the running one looks at the queue again after releasing the lock, so an entry queued
while it worked is never left behind. A failure is logged (``crib.log``) and leaves the queue for
the next write's worker or ``crib reindex``.
"""

from __future__ import annotations

import sys
from pathlib import Path
from typing import Sequence

from ..core.faillog import log_failure
from ..memory import Memory
from ..store.sqlite_rows import EXTRACT_QUEUE
from ..write.deferred import fcntl
from ..write.maintenance import embed_pending
from ..write.model_work import drain_model_work

ROUNDS = 3
"""Looks at the queue at most this many times (an entry queued meanwhile starts another worker)."""


def lock_path(db: str | Path) -> str:
    """The file whose lock a running worker holds for the store ``db`` (benchmarks wait on it)."""
    return f"{db}-embedder.lock"


def run(db: Path) -> int:
    """Embed the queue of ``db`` under the store's lock; 0 when done or another worker holds it."""
    if fcntl is None or not db.exists():
        return 0
    models_failed = False  # a model that failed is not asked again by this worker (the queue waits)
    with open(lock_path(db), "a+") as lock:
        for _round in range(ROUNDS):
            try:
                fcntl.flock(lock, fcntl.LOCK_EX | fcntl.LOCK_NB)
            except OSError:
                return 0  # another worker embeds; it looks at the queue again once it lets go
            try:
                with Memory(db, create=False) as memory:
                    if not models_failed and memory.store.pending(EXTRACT_QUEUE):
                        try:  # first: a cue the model writes is embedded with the entry below
                            for note in drain_model_work(memory)["notes"]:
                                log_failure("background cue writing", RuntimeError(note))
                        except Exception as exc:  # logged; the embeddings still go ahead
                            models_failed = True
                            log_failure("background fact extraction", exc)
                    if memory.store.pending(memory.embedder_name()):
                        embed_pending(memory)
            except Exception as exc:  # logged, never raised: nobody reads a detached process's stderr
                log_failure("background embedding", exc)
                return 1
            finally:
                fcntl.flock(lock, fcntl.LOCK_UN)
            with Memory(db, create=False) as memory:
                models_left = not models_failed and memory.store.pending(EXTRACT_QUEUE)
                if not memory.store.pending(memory.embedder_name()) and not models_left:
                    return 0
    return 0


def main(argv: Sequence[str] | None = None) -> int:
    args = list(sys.argv[1:] if argv is None else argv)
    return run(Path(args[0])) if args else 2


if __name__ == "__main__":
    sys.exit(main())
