"""The recall-cue search on a big store: the full expression against the one the channel searches.

    python bench/cue_scale.py --size 100000 [--pg] [--runs 5]

Builds a synthetic store of ``--size`` entries in a temporary folder, every entry with a recall cue
in the shape agents write them ("when writing billing code …": a few words most cues share, one of
3,000 rarer ones), on SQLite and, with ``--pg``, on a throw-away PostgreSQL server (``pgserver``).
Then, for a few prompts, the median time of the cue search with the prompt's whole expression
(every word, as before :func:`crib_plugin.text.common_terms.cue_expression`) and with the
expression the full-text channel searches (the words most cues hold left out above
``BIG_STORE`` entries), the counting included, and how many entries each finds.
"""

from __future__ import annotations

import argparse
import json
import shutil
import statistics
import sys
import tempfile
import time
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from crib_plugin.read.query import prepare  # noqa: E402
from crib_plugin.text.common_terms import cue_expression  # noqa: E402

TOPICS = ["deploy", "billing", "invoice", "cluster", "terraform", "logsift", "filter", "regex", "release", "notes",
          "migration", "database", "schema", "index", "query", "cache", "timeout", "retry", "webhook", "stripe", "pdf",
          "export", "render", "memory", "queue", "worker", "secret", "vault", "ingress", "certificate", "dns", "email"]
ACTS = ["writing", "debugging", "reviewing", "deploying", "changing", "adding", "fixing", "testing"]
RARE = 3000
PROMPTS = ["fix the billing code we were writing for zq17", "writing code when debugging zq2999", "deploy the vault secrets"]


def rows(size: int) -> Iterator[tuple[str, str, str, str, str]]:
    """``size`` synthetic entries as (type, content, created_at, metadata, content hash)."""
    for i in range(size):
        content = f"note {i} about {TOPICS[i % 32]} and {TOPICS[(i // 32) % 32]}"
        cue = f"when {ACTS[i % 8]} {TOPICS[(i // 8) % 32]} code zq{i % RARE}"
        yield "note", content, "2026-01-01T00:00:00Z", json.dumps({"when": cue}), f"h{i}"


def sqlite_store(folder: Path, size: int) -> Any:
    from crib_plugin.store import open_store

    store = open_store(folder / "cues.db")
    store.execute("BEGIN")
    for row in rows(size):
        store.execute("INSERT INTO entries(type, content, created_at, metadata, content_hash) VALUES (?,?,?,?,?)", row)
    store.execute("COMMIT")
    return store


@contextmanager
def postgres_store(folder: Path, size: int) -> Iterator[Any]:
    import pgserver
    import psycopg

    from crib_plugin.store.postgres import open_postgres

    server = pgserver.get_server(str(folder / "pg"), cleanup_mode="delete")
    url = server.get_uri()
    store = open_postgres(url)
    with psycopg.connect(url, autocommit=True) as conn, conn.cursor().copy(
        "COPY entries(type, content, created_at, metadata, content_hash, project) FROM STDIN"
    ) as copy:
        for row in rows(size):
            copy.write_row((*row, ""))
    with psycopg.connect(url, autocommit=True) as conn:
        conn.execute("ANALYZE entries")
    try:
        yield store
    finally:
        store.close()


def median_ms(call: Callable[[], Any], runs: int) -> tuple[float, Any]:
    times, result = [], None
    for _ in range(runs):
        started = time.perf_counter()
        result = call()
        times.append(time.perf_counter() - started)
    return 1000 * statistics.median(times), result


def channel_search(store: Any, text: str, expression: str) -> list[tuple[int, float]]:
    """The cue search as the full-text channel runs it: the words most cues hold left out first."""
    kept = cue_expression(store, text, expression)
    return store.cue_search(kept, 50) if kept else []


def measure(name: str, store: Any, runs: int) -> None:
    for text in PROMPTS:
        expression = prepare(text).fts_expression
        whole, found = median_ms(lambda e=expression: store.cue_search(e, 50), runs)
        kept, got = median_ms(lambda t=text, e=expression: channel_search(store, t, e), runs)
        print(f"{name}: {text!r}: every word {whole:.1f} ms ({len(found)} found); "
              f"as the channel searches {cue_expression(store, text, expression)!r} {kept:.1f} ms ({len(got)} found)", flush=True)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--size", type=int, default=100_000)
    parser.add_argument("--runs", type=int, default=5)
    parser.add_argument("--pg", action="store_true", help="also on a throw-away PostgreSQL server (pgserver)")
    args = parser.parse_args()
    folder = Path(tempfile.mkdtemp(prefix="crib-cues-"))
    try:
        started = time.perf_counter()
        store = sqlite_store(folder, args.size)
        print(f"sqlite: {args.size} entries in {time.perf_counter() - started:.0f} s", flush=True)
        measure("sqlite", store, args.runs)
        store.close()
        if args.pg:
            started = time.perf_counter()
            with postgres_store(folder, args.size) as pg:
                print(f"postgres: {args.size} entries in {time.perf_counter() - started:.0f} s", flush=True)
                measure("postgres", pg, args.runs)
    finally:
        shutil.rmtree(folder, ignore_errors=True)


if __name__ == "__main__":
    main()
