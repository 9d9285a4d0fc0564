"""Build (or reuse from the cache) the coding set's store, with the clock fixed to the set's "now".

Split from :mod:`crib_eval.coding`, which re-exports these names.
"""

from __future__ import annotations

import hashlib
import json
import time
from collections.abc import Sequence
from pathlib import Path
from typing import ContextManager

from .coding_data import (
    BUILD_VERSION,
    DATA_DIR,
    CodingDataError,
    CodingMemory,
    CodingSet,
    Progress,
    fingerprint,
)


def fixed_now(now: str | None) -> ContextManager[None]:
    """``CRIB_NOW`` set to ``now`` for the duration (restored after), so relative time is reproducible."""
    from crib_plugin.core.config import overriding

    return overriding("CRIB_NOW", now)


def build_store(db: Path, memories: Sequence[CodingMemory]) -> dict[str, int]:
    """Import the memories into a new store at ``db`` (``Memory.import_records``); key → entry id."""
    from crib_plugin.core.records import ENTRY_TYPES

    from .noanswer_inject import open_memory

    for suffix in ("", "-wal", "-shm"):
        Path(str(db) + suffix).unlink(missing_ok=True)
    db.parent.mkdir(parents=True, exist_ok=True)
    with open_memory(db, create=True) as memory:
        reports = memory.import_records([m.record(ENTRY_TYPES) for m in memories])
    if len(reports) != len(memories) or len({r.entry_id for r in reports}) != len(memories):
        raise CodingDataError("import merged memories: two memories are identical")
    return {m.key: r.entry_id for m, r in zip(memories, reports)}


def prepare_store(
    data: CodingSet, cache_dir: Path, *, data_dir: Path = DATA_DIR, rebuild: bool = False, progress: Progress | None = None,
    tag: str = "",
) -> tuple[Path, dict[str, int]]:
    """Build (or reuse) the store for ``data``; cached by data + embedder + schema + crib source
    (+ ``tag``: what else the build depends on, such as the model that wrote the cues)."""
    from crib_plugin.core.config import load_settings
    from crib_plugin.store.schema import latest_version

    embedder = load_settings().embedder or "minilm"
    subset = hashlib.sha256("\n".join(f"{m.key}\t{m.when or ''}" for m in data.memories).encode()).hexdigest()[:6]
    suffix = "-" + "".join(c if c.isalnum() or c in "-_." else "_" for c in tag) if tag else ""
    folder = cache_dir / "coding" / f"{fingerprint(data_dir)}-{subset}-{embedder}-s{latest_version()}-b{BUILD_VERSION}{suffix}"
    db, ids_path = folder / "coding.db", folder / "ids.json"
    if rebuild or not ids_path.exists():
        started = time.perf_counter()
        with fixed_now(data.now):
            ids = build_store(db, data.memories)
        ids_path.write_text(json.dumps(ids), encoding="utf-8")
        if progress:
            progress(f"coding store: {len(ids)} memories in {time.perf_counter() - started:.1f}s ({folder})")
    return db, json.loads(ids_path.read_text(encoding="utf-8"))
