"""How crib behaves on big stores: 10⁴, 10⁵ and 10⁶ memories on one machine.

    python bench/scale.py [--sizes 10000,100000,1000000] [--runs 10] [--cache /work/scale-stores]
                          [--base 4096] [--recall 300] [--writes 3] [--import-entries 0] [--cues]

**How a big store is made quickly and reproducibly.** Embedding a million texts with the offline
MiniLM would take hours on two cores, so the store is grown from a small embedded corpus:

1. ``--base`` memories from ``bench/ingest.py``'s seeded generator (60 words each, four types) are
   embedded once with the configured embedder and cached (``base-<n>-<embedder>.npy``).
2. Memory ``i`` of the store is base memory ``i mod base``; past the first ``base`` it is a
   *replica*: its last twelve words are those of the generator's memory ``i`` (so full text sees a
   vocabulary as varied as a real store's, with unique identifiers), and its vector is the base
   vector plus seeded Gaussian noise (norm ≈ :data:`NOISE`), normalised — a cloud of near
   neighbours around every base memory, as a real store of many similar notes has. Dates spread
   over two years.
3. Rows go straight through the store's own methods (``insert_entry`` + ``put_vector``, the ones the
   write path uses, so every index and trigger is maintained) in transactions of
   :data:`BUILD_TX` entries; no facts are extracted (``extract=False``), no supersession runs. Each
   size is a separate file ``scale-<n>-….db`` under ``--cache`` (keep it outside the repository:
   10⁶ is ≈ 2.3 GB), reused until ``--rebuild``.
4. ``--cues``: every memory also has a recall cue (in its metadata, so the cues' word index holds
   it) and a cue vector (another base memory's, with its own noise), as when the agent writes a
   cue with each memory; such stores are files of their own (``…-cues-…``).

**What it prints** per size (fresh processes, round-robin with ``python -c "import numpy"`` as the
yardstick so machine load hits all alike; one untimed warm-up each):

* the issue's table — cold ``crib retrieve`` median and its ratio to ``import numpy``; ``crib hook
  user-prompt-submit`` (its injected share); ``crib search --limit 10``; the file size;
* ``crib write`` latency by type on that store (``--writes`` per type; each write is then deleted
  again so the store stays the size it says);
* ``--recall N``: recall@10 of the vector search as crib runs it (the side index above its size
  threshold, :mod:`crib_plugin.store.vector_index`) against exact k-NN, over N seeded queries;
* ``--import-entries N``: the real import path (``Memory.import_records``, as ``crib import`` runs
  it: extraction, supersession, audit, vectors queued) into an empty store, entries/s per slice of
  ``min(10000, N/5)``; then the rate of its second phase, the embedding of the queued vectors,
  over the first ``--import-embed`` of them.

No threshold is asserted; ``tests/test_scale_bench.py`` only runs it end to end at 10³.
"""

from __future__ import annotations

import argparse
import os
import shutil
import statistics
import subprocess
import sys
import time
from pathlib import Path
from typing import Any, Sequence

sys.path.insert(0, str(Path(__file__).resolve().parent))
from ingest import crib_command, load_note, synthetic_entries, synthetic_entry  # noqa: E402
from latency import PROMPTS, Command, hook_inputs  # noqa: E402

from crib_plugin.core.cues import CUE_KEY, cue_space_key  # noqa: E402

BUILD_VERSION = "1"  # bump when the build below changes (stores are keyed on it)
BUILD_TX = 10_000
NOISE = 0.35
TYPES = ("note", "decision", "error", "correction", "preference")


def _settings(db: Path) -> Any:
    from dataclasses import replace

    from crib_plugin.core.config import load_settings

    return replace(load_settings(), db=db)


def embedder_name() -> str:
    from crib_plugin.core.config import load_settings

    return load_settings().embedder or "minilm"


def base_vectors(cache: Path, base: int) -> Any:
    """The ``base`` generator memories embedded once (cached as .npy)."""
    import numpy as np

    path = cache / f"base-{base}-{embedder_name()}-b{BUILD_VERSION}.npy"
    if path.exists():
        return np.load(path)
    from crib_plugin.memory import Memory

    with Memory(cache / "embed-only.db", settings=_settings(cache / "embed-only.db")) as memory:
        embedder = memory.embedder()
        texts = [text for _kind, text in synthetic_entries(base)]
        started = time.perf_counter()
        vectors = np.concatenate([np.asarray(embedder.embed_documents(texts[i:i + 256]), dtype="<f4")
                                  for i in range(0, len(texts), 256)])
        print(f"embedded {base} base memories in {time.perf_counter() - started:.0f}s", file=sys.stderr)
    for suffix in ("", "-wal", "-shm"):
        Path(str(cache / "embed-only.db") + suffix).unlink(missing_ok=True)
    np.save(path, vectors)
    return vectors


def replica(index: int, base: int) -> tuple[str, str]:
    """Memory ``index`` of a scale store as ``(type, text)`` (see the module docstring)."""
    kind, text = synthetic_entry(index % base)
    if index < base:
        return kind, text
    tail = synthetic_entry(index)[1].split()[-12:]
    return kind, " ".join(text.split()[:-12] + tail)


def store_path(cache: Path, size: int, base: int, cues: bool = False) -> Path:
    from crib_plugin.store.schema import latest_version

    tag = "-cues" if cues else ""
    return cache / f"scale-{size}-{embedder_name()}-base{base}{tag}-s{latest_version()}-b{BUILD_VERSION}.db"


CUE_ACTS = ("writing", "debugging", "reviewing", "deploying", "changing", "adding", "fixing", "testing")


def cue_text(index: int) -> str:
    """A recall cue in the shape agents write them: general words most cues share and a rarer one."""
    words = synthetic_entry(index)[1].split()
    return f"when {CUE_ACTS[index % len(CUE_ACTS)]} {words[3].strip('.,;:')} or {words[-1].strip('.,;:')} code"


def build_store(db: Path, size: int, base: int, vectors: Any, cues: bool = False) -> float:
    """Write ``size`` memories straight through the store (see the module docstring); seconds.

    ``cues``: every memory also gets a recall cue (:func:`cue_text`, in its metadata, so the cues'
    word index holds it) and a cue vector — another base memory's vector with its own noise — in
    the cue space, as a store whose agent writes a cue with every memory has."""
    import numpy as np

    from crib_plugin.memory import Memory

    for suffix in ("", "-wal", "-shm"):
        Path(str(db) + suffix).unlink(missing_ok=True)
    shutil.rmtree(Path(str(db) + "-vecindex"), ignore_errors=True)
    rng = np.random.default_rng(20261125)
    started = time.perf_counter()
    with Memory(db, settings=_settings(db)) as memory:
        store = memory.store
        table = store.ensure_vector_space(memory.embedder_key(), int(vectors.shape[1]))
        cue_table = store.ensure_vector_space(cue_space_key(memory.embedder_key()), int(vectors.shape[1])) if cues else ""
        for offset in range(0, size, BUILD_TX):
            count = min(BUILD_TX, size - offset)
            rows = np.arange(offset, offset + count)
            block = _noisy(vectors, rows, rows >= base, rng)
            cue_block = _noisy(vectors, rows * 7 + 3, rows >= 0, rng) if cues else block
            with store.transaction():
                for k, index in enumerate(rows.tolist()):
                    kind, text = replica(index, base)
                    day = index % 730
                    created = f"{2025 + day // 365}-{1 + (day % 365) // 31:02d}-{1 + day % 28:02d}T{index % 24:02d}:00:00+00:00"
                    entry_id = store.insert_entry(kind, text, created, {CUE_KEY: cue_text(index)} if cues else {})
                    store.put_vector(table, entry_id, block[k].tobytes())
                    if cues:
                        store.put_vector(cue_table, entry_id, cue_block[k].tobytes())
            done = offset + count
            if done % 100_000 == 0 or done == size:
                print(f"built {done}/{size} ({time.perf_counter() - started:.0f}s)", file=sys.stderr)
        store.execute("PRAGMA wal_checkpoint(TRUNCATE)")
    _refresh_index(db)
    return time.perf_counter() - started


def _noisy(vectors: Any, rows: Any, noisy: Any, rng: Any) -> Any:
    """Base vectors ``rows mod base``, those marked ``noisy`` moved by seeded noise and normalised."""
    import numpy as np

    block = vectors[rows % len(vectors)].astype("<f4")
    if noisy.any():
        noise = rng.standard_normal((int(noisy.sum()), block.shape[1])).astype("<f4")
        block[noisy] += noise * (NOISE / np.sqrt(block.shape[1]))
        block /= np.linalg.norm(block, axis=1, keepdims=True)
    return block


def _refresh_index(db: Path) -> None:
    """Build the side vector index the way crib keeps it (a no-op below its size threshold)."""
    from crib_plugin.memory import Memory

    with Memory(db, settings=_settings(db)) as memory:
        from crib_plugin.store import vector_index_build

        for _key, (table, _dim) in memory.store.vector_spaces().items():
            vector_index_build.refresh(memory.store, table)


def ensure_store(cache: Path, size: int, base: int, rebuild: bool, cues: bool = False) -> tuple[Path, str]:
    db = store_path(cache, size, base, cues)
    done = db.with_suffix(".done")
    if rebuild or not done.exists():
        seconds = build_store(db, size, base, base_vectors(cache, base), cues)
        done.write_text(f"{seconds:.1f}\n")
        return db, f"built now in {seconds:.0f}s ({size / seconds:.0f} entries/s)"
    return db, f"cached (built in {float(done.read_text() or 0):.0f}s)"


def file_size(db: Path) -> str:
    total = sum(p.stat().st_size for p in [db, Path(str(db) + "-wal")] if p.exists())
    index = Path(str(db) + "-vecindex")
    side = sum(p.stat().st_size for p in index.glob("*")) if index.exists() else 0
    mb = total / 1e6
    text = f"{mb / 1000:.1f} GB" if mb >= 1000 else f"{mb:.0f} MB"
    return text + (f" (+{side / 1e6:.0f} MB index)" if side else "")


def time_commands(db: Path, runs: int) -> dict[str, Command]:
    env = dict(os.environ, CRIB_DB=str(db.resolve()))
    python = sys.executable
    commands = {
        "retrieve": Command("retrieve", [*crib_command(), "retrieve"], PROMPTS, env),
        "hook": Command("hook", [*crib_command(), "hook", "user-prompt-submit"], hook_inputs(runs + 1), env),
        "search": Command("search", [*crib_command(), "search", "--limit", "10"], None, env),
        "numpy": Command("numpy", [python, "-c", "import numpy"]),
    }
    search = commands["search"]
    for command in commands.values():
        command.run(0)
        command.injected, command.failures, command.cpu = 0, [], []
    for index in range(runs):
        for name, command in commands.items():
            if name == "search":
                search.argv = [*crib_command(), "search", "--limit", "10", PROMPTS[index % len(PROMPTS)]]
            command.times.append(command.run(index))
    return commands


def time_writes(db: Path, per_type: int, vectors: str = "auto", settle: bool = False) -> dict[str, list[float]]:
    """Wall time of ``crib write --type T`` as fresh processes (``CRIB_WRITE_VECTORS=vectors``);
    each written entry is deleted after (once a background embedder is done with it). ``settle``
    starts each timed write only once the previous write's background embedder has finished, as
    an agent's single write finds the machine; without it the writes run back to back and each
    shares the two cores with the embedder the one before started."""
    env = dict(os.environ, CRIB_DB=str(db.resolve()), CRIB_WRITE_VECTORS=vectors)
    out: dict[str, list[float]] = {}
    for kind in TYPES:
        for n in range(per_type):
            _k, text = synthetic_entry(10_000_000 + n * 7 + TYPES.index(kind))
            if kind == "decision":
                text = "Decided to move the release runner from fish to zsh; " + text
            if settle:
                _wait_for_worker(db)
            started = time.perf_counter()
            result = subprocess.run([*crib_command(), "write", "--type", kind, text], env=env, capture_output=True, text=True)
            out.setdefault(kind, []).append(time.perf_counter() - started)
            started = time.perf_counter()  # the yardstick, interleaved: the load changes during a run
            subprocess.run([sys.executable, "-c", "import numpy"], check=False)
            out.setdefault("numpy", []).append(time.perf_counter() - started)
            if result.returncode != 0:
                print(f"crib write --type {kind} failed: {result.stderr.strip()[:200]}", file=sys.stderr)
    _wait_for_embedder(db)
    _drop_written(db)
    return out


def _wait_for_embedder(db: Path, timeout: float = 300.0) -> None:
    """Until nothing is queued for an embedding (``CRIB_WRITE_VECTORS=background``'s worker)."""
    from crib_plugin.memory import Memory

    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        with Memory(db, settings=_settings(db)) as memory:
            if not memory.store.pending():
                return
        time.sleep(1)


def _wait_for_worker(db: Path, timeout: float = 300.0) -> None:
    """Until no background embedder runs for ``db``: its lock (``<db>-embedder.lock``) is free and
    the queue is empty (the worker looks at the queue again after releasing the lock)."""
    import fcntl

    from crib_plugin.hosts.embed_worker import lock_path

    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        with open(lock_path(db), "a+") as lock:
            try:
                fcntl.flock(lock, fcntl.LOCK_EX | fcntl.LOCK_NB)
            except OSError:
                time.sleep(0.2)
                continue
            fcntl.flock(lock, fcntl.LOCK_UN)
        _wait_for_embedder(db)
        time.sleep(0.5)  # the worker's process exits after it releases the lock
        return


def _drop_written(db: Path) -> None:
    """Delete what :func:`time_writes` added (entries past the built size) and bring the index back."""
    from crib_plugin.memory import Memory

    size = int(db.name.split("-")[1])
    with Memory(db, settings=_settings(db)) as memory:
        store = memory.store
        extra = [int(r[0]) for r in store.execute("SELECT id FROM entries WHERE id > ?", (size,))]
        with store.transaction():
            store.execute("UPDATE entries SET superseded_by = NULL WHERE superseded_by > ?", (size,))
            for entry_id in extra:
                store.delete_entry(entry_id)
    _refresh_index(db)


def recall_at_10(db: Path, queries: int) -> tuple[float, float, float, int]:
    """Recall@10 of crib's vector search against exact k-NN over ``queries`` seeded prompts:
    ``(recall, exact ms, crib ms, queries)``."""
    import numpy as np

    from crib_plugin.memory import Memory
    from crib_plugin.store import vector_index

    with Memory(db, settings=_settings(db)) as memory:
        store = memory.store
        table, _dim = store.vector_space(memory.embedder_key()) or ("", 0)
        embedder = memory.embedder()
        rng = np.random.default_rng(7)
        picks = rng.integers(0, 10_000_000, size=queries)
        texts = [" ".join(synthetic_entry(int(i))[1].split()[:10]) for i in picks]
        vectors = np.asarray(embedder.embed_documents(texts), dtype="<f4")
        hits, exact_t, fast_t = 0, 0.0, 0.0
        for vector in vectors:
            blob = vector.tobytes()
            t0 = time.perf_counter()
            exact = {i for i, _ in store.exact_vector_search(table, blob, 10)}
            t1 = time.perf_counter()
            fast = {i for i, _ in vector_index.search(store, table, blob, 10)}
            t2 = time.perf_counter()
            hits += len(exact & fast)
            exact_t += t1 - t0
            fast_t += t2 - t1
        return hits / (10 * queries), 1000 * exact_t / queries, 1000 * fast_t / queries, queries


class _Enough(Exception):
    """Stops the timed second phase of :func:`import_rate`."""


def import_rate(cache: Path, entries: int, embed: int) -> tuple[list[tuple[int, float, float]], float, int]:
    """The real import path (:meth:`Memory.import_records`: extraction, supersession, audit; vectors
    queued and embedded in a second phase) into an empty store: entries/s per slice of
    ``min(10000, N/5)`` for the first phase, then the embedding rate of the second phase over the
    first ``embed`` queued entries (all when ``embed`` ≥ N; 0: not run). Each slice also gives its
    rate per CPU-second of this process (what an idle machine would see, on one core)."""
    from crib_plugin.memory import Memory
    from crib_plugin.write import maintenance

    db = cache / f"import-{entries}.db"
    for suffix in ("", "-wal", "-shm"):
        Path(str(db) + suffix).unlink(missing_ok=True)
    slice_size = max(1, min(10_000, entries // 5))
    rates: list[tuple[int, float, float]] = []
    embed_rate, embedded = 0.0, 0
    with Memory(db, settings=_settings(db)) as memory:
        real = maintenance.embed_pending
        maintenance.embed_pending = lambda *_a, **_k: ("", 0)  # type: ignore[assignment]  # phase 2 timed below, once
        try:
            for offset in range(0, entries, slice_size):
                records = [{"type": kind, "content": text}
                           for kind, text in synthetic_entries(min(slice_size, entries - offset), start=offset)]
                started, cpu = time.perf_counter(), time.process_time()
                memory.import_records(records)
                rates.append((offset + len(records), len(records) / (time.perf_counter() - started),
                              len(records) / max(time.process_time() - cpu, 1e-9)))
                print(f"imported {offset + len(records)}/{entries}", file=sys.stderr)
        finally:
            maintenance.embed_pending = real  # type: ignore[assignment]
        if embed:
            memory.embedder()  # the model loaded before the clock starts, as the import's second phase has it
            stop = {"at": min(embed, entries)}

            def progress(done: int, _total: int) -> None:
                if done >= stop["at"]:
                    raise _Enough  # enough measured: the rest stays queued (the store is deleted below)

            started = time.perf_counter()
            try:
                _key, embedded = real(memory, progress)
            except _Enough:
                embedded = stop["at"]
            embed_rate = embedded / (time.perf_counter() - started)
    for suffix in ("", "-wal", "-shm"):
        Path(str(db) + suffix).unlink(missing_ok=True)
    return rates, embed_rate, embedded


def warm_page_cache(db: Path) -> None:
    """Read the store and its side index once, so the timed processes find them in the page cache
    (what the figures are of). A cache the OS reclaimed since the last run (this project's sandbox
    does) otherwise makes the first processes read gigabytes from disk: 0.8-1.8 s retrieves at 10^6
    where the cached store answers in 0.4 s."""
    files = [Path(str(db) + suffix) for suffix in ("", "-wal")]
    index = Path(str(db) + "-vecindex")
    files += sorted(index.iterdir()) if index.is_dir() else []
    for path in files:
        try:
            with path.open("rb") as handle:
                while handle.read(1 << 24):
                    pass
        except OSError:  # a file gone meanwhile: nothing to warm
            continue


def _ms(values: Sequence[float]) -> str:
    return f"{1000 * statistics.median(values):.0f}"


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--sizes", default="10000,100000,1000000", help="comma-separated store sizes")
    parser.add_argument("--runs", type=int, default=10, help="timed fresh processes per command and size")
    parser.add_argument("--cache", type=Path, default=Path("/work/scale-stores") if Path("/work").is_dir() else Path(".state/scale"),
                        help="where stores are built and kept (outside the repository)")
    parser.add_argument("--base", type=int, default=4096, help="memories embedded for real; the rest are replicas")
    parser.add_argument("--rebuild", action="store_true")
    parser.add_argument("--cues", action="store_true", help="every memory with a recall cue and a cue vector (a store of its own)")
    parser.add_argument("--writes", type=int, default=3, help="`crib write` runs per type and size (0: skip)")
    parser.add_argument("--write-vectors", default="auto",
                        help="CRIB_WRITE_VECTORS for the timed writes: auto (crib's default), inline or background; a comma list runs each")
    parser.add_argument("--settle", action="store_true",
                        help="start each timed write once the previous write's background embedder is done")
    parser.add_argument("--recall", type=int, default=300, help="queries for recall@10 against exact k-NN (0: skip)")
    parser.add_argument("--import-entries", type=int, default=0, help="also time the import path on this many entries")
    parser.add_argument("--import-embed", type=int, default=2000,
                        help="entries of the import's second phase (embedding) to time (0: skip)")
    args = parser.parse_args(argv)
    args.cache.mkdir(parents=True, exist_ok=True)
    sizes = [int(s) for s in args.sizes.split(",") if s.strip()]

    from crib_plugin.hosts.bytecode import compile_package

    compile_package()
    rows, extras = [], []
    for size in sizes:
        db, note = ensure_store(args.cache, size, min(args.base, size), args.rebuild, args.cues)
        warm_page_cache(db)
        commands = time_commands(db, args.runs)
        numpy_ms = statistics.median(commands["numpy"].times)
        r, h, s = commands["retrieve"], commands["hook"], commands["search"]
        failed = sum(len(c.failures) for c in commands.values())
        rows.append(f"| {size:,} | {_ms(r.times)} ms | {statistics.median(r.times) / numpy_ms:.1f} | {_ms(h.times)} ms "
                    f"({h.injected}/{len(h.times)} injected) | {_ms(s.times)} ms | {file_size(db)} | {1000 * numpy_ms:.0f} ms | "
                    f"{load_note()}{f'; {failed} failed runs' if failed else ''} |")
        extras.append(f"{size:,}: store {note}")
        for mode in [m.strip() for m in args.write_vectors.split(",") if m.strip()] if args.writes else []:
            writes = time_writes(db, args.writes, mode, args.settle)
            yardstick = statistics.median(writes.pop("numpy"))
            extras.append(f"{size:,}: `crib write` ({mode}{', settled' if args.settle else ''}) median ms by type — " + ", ".join(f"{k} {_ms(v)}" for k, v in writes.items())
                          + f"; `import numpy` interleaved {1000 * yardstick:.0f} ms: ×{max(statistics.median(v) for v in writes.values()) / yardstick:.1f} at most")
        if args.recall:
            recall, exact_ms, fast_ms, n = recall_at_10(db, args.recall)
            extras.append(f"{size:,}: vector recall@10 vs exact {100 * recall:.1f} % over {n} queries "
                          f"(exact {exact_ms:.1f} ms/query, crib's search {fast_ms:.1f} ms/query, in-process)")
    print(f"Scale, {args.runs} fresh processes per command, {os.cpu_count()} CPUs, {load_note()} at the end")
    print()
    print("| store | `crib retrieve` | ×numpy | hook | `search --limit 10` | file | `import numpy` | load |")
    print("|---|---|---|---|---|---|---|---|")
    for row in rows:
        print(row)
    print()
    for line in extras:
        print(f"- {line}")
    if args.import_entries:
        rates, embed_rate, embedded = import_rate(args.cache, args.import_entries, args.import_embed)
        first, last = rates[0][1], rates[-1][1]
        print(f"- import ({args.import_entries:,} entries, `import_records`: entries, full text, facts, supersession "
              "and audit; vectors queued), entries/s (per CPU-second): " + ", ".join(f"≤{n:,}: {rate:.0f} ({cpu:.0f})" for n, rate, cpu in rates)
              + f"; last slice {100 * (last / first - 1):+.0f} % against the first (CPU: {100 * (rates[-1][2] / rates[0][2] - 1):+.0f} %)")
        if embedded:
            print(f"- import, second phase (the queued vectors embedded, first {embedded:,}): {embed_rate:.0f} entries/s")
    return 0


if __name__ == "__main__":
    sys.exit(main())
