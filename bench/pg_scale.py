"""A 10⁶-entry PostgreSQL store, and a retrieve's server-side time beside SQLite's.

    python bench/pg_scale.py load    --sqlite /work/scale-stores/scale-1000000-….db --pg URL
    python bench/pg_scale.py index   --pg URL [--memory 4GB]
    python bench/pg_scale.py measure --sqlite /work/scale-stores/scale-1000000-….db --pg URL [--runs 5]

``load`` copies a store that ``bench/scale.py`` built (opened read-only: ``immutable=1``) into an
empty database with ``COPY``: crib's own migrations first (``open_postgres``), then the entries —
their generated ``tsvector`` computed by the server as rows arrive — and every vector as pgvector
(binary ``COPY``), the small tables (facts, settings, audit) row by row, with the word, trigram and
HNSW indexes dropped for the copy. ``crib migrate`` gives the same rows (``tests/test_migrate.py``)
but inserts one row per statement: hours at 10⁶ on two cores.

``index`` builds those indexes again, one at a time, and prints each one's build time (the HNSW one
with ``maintenance_work_mem`` = ``--memory`` so its graph fits in memory; the building backend is
reniced to 19 where this process may do so, because the machine is shared).

``measure`` runs, in this process, the retrieval a ``crib retrieve`` runs (:func:`crib_plugin.read.
retrieve`), for :data:`latency.PROMPTS`, on each store; every SQL call the store makes is timed
around its round trip (``Store.execute`` and the vector search), so the printed *store* time is what
the database spent answering — PostgreSQL's server time plus a local socket's round trips —
beside the whole retrieve's wall time. The query embedding is computed once per prompt before
timing, outside both. Medians over ``--runs`` rounds, the stores alternating so machine load hits
both alike.
"""

from __future__ import annotations

import argparse
import os
import statistics
import struct
import sys
import time
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import apsw
import numpy as np
import psycopg
import sqlite_vec

sys.path.insert(0, str(Path(__file__).resolve().parent))
from latency import PROMPTS  # noqa: E402

from crib_plugin.memory import Memory  # noqa: E402
from crib_plugin.store import cjk, open_store  # noqa: E402
from crib_plugin.store.base import Store  # noqa: E402
from crib_plugin.store.postgres import open_postgres  # noqa: E402
from crib_plugin.store.sqlite_rows import ENTRY_ROW  # noqa: E402
from crib_plugin.store.transfer import TABLES  # noqa: E402

# dropped for the bulk copy and built again by ``index`` (name -> statement; {vec} is the vector table)
INDEXES = {
    "entries_content_hash": "CREATE INDEX entries_content_hash ON entries(content_hash)",
    "entries_created_at": "CREATE INDEX entries_created_at ON entries(created_at)",
    "entries_fts": "CREATE INDEX entries_fts ON entries USING gin (fts)",
    "entries_trigram": "CREATE INDEX entries_trigram ON entries USING gin (content gin_trgm_ops)",
    "{vec}_hnsw": "CREATE INDEX {vec}_hnsw ON {vec} USING hnsw (embedding vector_cosine_ops)",
}
PGCOPY_HEADER = b"PGCOPY\n\xff\r\n\x00" + struct.pack("!ii", 0, 0)


def open_sqlite(path: str) -> apsw.Connection:
    """The SQLite store, read-only and immutable (no lock, no WAL, nothing written beside it)."""
    conn = apsw.Connection(f"file:{path}?immutable=1", flags=apsw.SQLITE_OPEN_READONLY | apsw.SQLITE_OPEN_URI)
    conn.enable_load_extension(True)
    conn.load_extension(sqlite_vec.loadable_path())
    return conn


def vector_rows(conn: apsw.Connection, table: str, dim: int, batch: int = 20_000) -> Iterator[bytes]:
    """The vector table as binary COPY data (``bigint``, pgvector's ``vector``), ``batch`` rows at a time."""
    record = np.dtype([("n", ">i2"), ("l1", ">i4"), ("id", ">i8"), ("l2", ">i4"), ("dim", ">i2"), ("unused", ">i2"), ("v", ">f4", (dim,))])
    rows: list[tuple[int, bytes]] = []

    def flush() -> bytes:
        out = np.zeros(len(rows), dtype=record)
        out["n"], out["l1"], out["l2"], out["dim"] = 2, 8, 4 + 4 * dim, dim
        out["id"] = [r[0] for r in rows]
        out["v"] = np.frombuffer(b"".join(r[1] for r in rows), dtype="<f4").reshape(len(rows), dim)
        rows.clear()
        return out.tobytes()

    for entry_id, blob in conn.execute(f"SELECT rowid, embedding FROM {table}"):
        rows.append((int(entry_id), bytes(blob)))
        if len(rows) >= batch:
            yield flush()
    if rows:
        yield flush()


def timed(label: str, action: Callable[[], Any]) -> Any:
    """Run ``action``, printing how long it took."""
    started = time.perf_counter()
    result = action()
    print(f"{label}: {time.perf_counter() - started:.1f} s", flush=True)
    return result


def load(sqlite_path: str, url: str) -> None:
    src = open_sqlite(sqlite_path)
    store = open_postgres(url)
    spaces = {str(k): (str(t), int(d)) for k, t, d in src.execute("SELECT key, table_name, dim FROM vector_spaces")}
    tables = {key: (store.ensure_vector_space(key, dim), src_table, dim) for key, (src_table, dim) in spaces.items()}
    store.close()
    with psycopg.connect(url, autocommit=True) as conn:
        for name in INDEXES:
            for vec, _src, _dim in tables.values():
                conn.execute(f"DROP INDEX IF EXISTS {name.format(vec=vec)}")
        have = {str(r[1]) for r in src.execute("PRAGMA table_info(entries)")}
        columns = ", ".join(c for c in ENTRY_ROW.split(", ") if c in have)  # a store of an older schema lacks some
        with conn.transaction():
            with conn.cursor().copy(f"COPY entries({columns}, cjk_grams) FROM STDIN") as copy:
                started, n = time.perf_counter(), 0
                for row in src.execute(f"SELECT {columns} FROM entries ORDER BY id"):
                    copy.write_row([*row, cjk.document_grams(str(row[2]))])
                    n += 1
                    if n % 100_000 == 0:
                        print(f"entries: {n} in {time.perf_counter() - started:.0f} s", flush=True)
        for vec, src_table, dim in tables.values():
            with conn.transaction():
                with conn.cursor().copy(f"COPY {vec}(entry_id, embedding) FROM STDIN WITH (FORMAT binary)") as copy:
                    copy.write(PGCOPY_HEADER)
                    started = time.perf_counter()
                    for chunk in vector_rows(src, src_table, dim):
                        copy.write(chunk)
                    print(f"{src_table}: {time.perf_counter() - started:.1f} s", flush=True)
                    copy.write(struct.pack("!h", -1))
            print(f"{vec}: {conn.execute(f'SELECT count(*) FROM {vec}').fetchone()[0]} vectors", flush=True)
    store = open_postgres(url)
    with store.transaction():
        for table, columns, _key in TABLES:
            if table == "settings":
                continue  # the target's own settings (schema state) stay; the source's embedder row follows
            names = columns.replace("NULL", "superseded_by")
            for row in src.execute(f"SELECT {columns} FROM {table}"):  # relations: successors below
                marks = ",".join("?" * len(row))
                store.execute(f"INSERT INTO {table}({names}) VALUES ({marks}) ON CONFLICT DO NOTHING", list(row))
        for relation_id, successor in src.execute("SELECT id, superseded_by FROM relations WHERE superseded_by IS NOT NULL"):
            store.execute("UPDATE relations SET superseded_by = ? WHERE id = ?", (int(successor), int(relation_id)))
        for key, value in src.execute("SELECT key, value FROM settings"):
            store.execute("INSERT INTO settings(key, value) VALUES (?, ?) ON CONFLICT (key) DO UPDATE SET value = excluded.value", (key, value))
        store.after_copy()
    store.close()


def index(url: str, memory: str, only: set[str] | None = None, nice: int = 19) -> None:
    """Build the dropped indexes (``only``: those whose name ends with one of these, e.g. ``hnsw``:
    two processes can build the HNSW graph and the rest at the same time)."""
    with psycopg.connect(url, autocommit=True) as conn:
        vecs = [str(r[0]) for r in conn.execute("SELECT table_name FROM vector_spaces")]
        pid = conn.execute("SELECT pg_backend_pid()").fetchone()[0]
        try:
            os.setpriority(os.PRIO_PROCESS, int(pid), nice)
        except OSError as exc:
            print(f"(could not renice the server backend {pid}: {exc})")
        conn.execute(f"SET maintenance_work_mem = '{memory}'")
        conn.execute("SET max_parallel_maintenance_workers = 1")
        has_trgm = conn.execute("SELECT 1 FROM pg_extension WHERE extname = 'pg_trgm'").fetchone() is not None
        for name, sql in INDEXES.items():
            if (name == "entries_trigram" and not has_trgm) or (only is not None and not any(name.endswith(o) for o in only)):
                continue
            for vec in vecs:
                statement = sql.format(vec=vec)
                if conn.execute("SELECT 1 FROM pg_indexes WHERE indexname = %s", (name.format(vec=vec),)).fetchone():
                    print(f"{name.format(vec=vec)}: exists")
                    continue
                started = time.perf_counter()
                conn.execute(statement)
                print(f"{statement}: {time.perf_counter() - started:.1f} s", flush=True)
        conn.execute("VACUUM ANALYZE")
        print("size:", conn.execute("SELECT pg_size_pretty(pg_database_size(current_database()))").fetchone()[0])


class StoreClock:
    """Wraps a store's methods to add up the time spent inside them (the outermost call only: a
    search method's own ``execute`` calls are not counted twice)."""

    def __init__(self, store: Store) -> None:
        self.seconds = 0.0
        self.calls = 0
        self.by_method: dict[str, float] = {}
        self._depth = 0
        for name in dir(type(store)):
            attribute = getattr(store, name, None)
            if not name.startswith("_") and callable(attribute) and name not in ("transaction", "close"):
                setattr(store, name, self._wrap(name, attribute))

    def _wrap(self, name: str, method: Callable[..., Any]) -> Callable[..., Any]:
        def timed_call(*args: Any, **kwargs: Any) -> Any:
            self._depth += 1
            started = time.perf_counter()
            try:
                return method(*args, **kwargs)
            finally:
                self._depth -= 1
                if self._depth == 0:
                    spent = time.perf_counter() - started
                    self.seconds += spent
                    self.calls += 1
                    self.by_method[name] = self.by_method.get(name, 0.0) + spent

        return timed_call


class FixedQueries:
    """The configured embedder, with each prompt's vector computed once, before any timing."""

    def __init__(self, embedder: Any, prompts: list[str]) -> None:
        self.inner = embedder
        self.name, self.model, self.dim = embedder.name, embedder.model, embedder.dim
        self.vectors = {p: embedder.embed_query(p) for p in prompts}

    def embed_query(self, text: str) -> Any:
        return self.vectors[text] if text in self.vectors else self.inner.embed_query(text)

    def embed_documents(self, texts: Any) -> Any:
        return self.inner.embed_documents(texts)


BY_METHOD: dict[tuple[str, str], float] = {}  # (store, method) -> seconds over every timed retrieve


def one_retrieve(target: str, prompt: str, embedder: FixedQueries) -> tuple[float, float, float, int, int]:
    """(open ms, store ms, retrieve wall ms, store calls, bytes of the block) for one retrieve on a
    freshly opened store (a new connection, as each prompt's hook process has)."""
    started = time.perf_counter()
    store = open_store(target, readonly=True)
    opened = time.perf_counter()
    clock = StoreClock(store)
    memory = Memory(target, readonly=True, embedder=embedder, create=False)
    memory._store = store  # noqa: SLF001 - the clocked store, already open
    block = memory.retrieve(prompt)
    done = time.perf_counter()
    memory.close()
    for name, spent in clock.by_method.items():
        BY_METHOD[(target, name)] = BY_METHOD.get((target, name), 0.0) + spent
    return 1000 * (opened - started), 1000 * clock.seconds, 1000 * (done - opened), clock.calls, len(block)


def measure(sqlite_path: str, url: str, prompts: list[str], runs: int) -> None:
    """Median per prompt over ``runs`` alternating rounds, after one untimed warm-up round."""
    probe = Memory(url, readonly=True, create=False)
    embedder = FixedQueries(probe.embedder(), prompts)
    probe.close()
    stores = {"SQLite": sqlite_path, "PostgreSQL": url}
    times: dict[tuple[str, str], list[tuple[float, float, float, int, int]]] = {}
    for round_ in range(runs + 1):
        for prompt in prompts:
            for label, target in stores.items():
                result = one_retrieve(target, prompt, embedder)
                if round_:
                    times.setdefault((label, prompt), []).append(result)
        print(f"round {round_} done", file=sys.stderr, flush=True)
    print(f"| prompt | {' | '.join(f'{label} store ms | {label} retrieve ms' for label in stores)} |")
    print("|---|" + "---|---|" * len(stores))
    totals: dict[str, list[float]] = {}
    for prompt in prompts:
        cells = []
        for label in stores:
            rows = times[(label, prompt)]
            store_ms = statistics.median(r[1] for r in rows)
            totals.setdefault(label, []).append(store_ms)
            cells.append(f"{store_ms:.0f} ({rows[0][3]} calls) | {statistics.median(r[2] for r in rows):.0f}")
        print(f"| {prompt[:48]} | {' | '.join(cells)} |")
    for label, values in totals.items():
        opens = statistics.median(r[0] for (lab, _p), rows in times.items() if lab == label for r in rows)
        print(f"{label}: median store time over prompts {statistics.median(values):.0f} ms; open {opens:.0f} ms")
        spent = sorted(((v, m) for (t, m), v in BY_METHOD.items() if t == stores[label]), reverse=True)[:4]
        print("  most of it (all rounds, warm-up included): " + ", ".join(f"{m} {1000 * v:.0f} ms" for v, m in spent))
    print(f"load average {os.getloadavg()[0]:.1f}")


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("step", choices=("load", "index", "measure"))
    parser.add_argument("--sqlite", help="the SQLite store bench/scale.py built")
    parser.add_argument("--pg", required=True, help="postgresql:// URL of the (empty, for load) database")
    parser.add_argument("--memory", default="4GB", help="maintenance_work_mem for the index builds")
    parser.add_argument("--runs", type=int, default=5)
    parser.add_argument("--nice", type=int, default=19, help="index: niceness of the building server process")
    parser.add_argument("--only", default=None, help="index: a comma list of index-name endings to build (e.g. hnsw)")
    args = parser.parse_args(argv)
    if args.step == "load":
        timed("load", lambda: load(args.sqlite, args.pg))
    elif args.step == "index":
        index(args.pg, args.memory, None if args.only is None else set(args.only.split(",")), args.nice)
    else:
        measure(args.sqlite, args.pg, PROMPTS, args.runs)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
