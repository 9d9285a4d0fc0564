"""Concurrency stress: W writer processes × N `crib write` each, R readers running `crib retrieve`.

    python bench/stress.py                                  # 8 writers × 500 writes, 4 readers
    python bench/stress.py --writers 4 --writes 25 --readers 2
    python bench/stress.py --db postgresql://user:pw@host/crib_stress    # a PostgreSQL store

Every write is its own CLI process (``python -m crib_plugin write TEXT``), as an agent's hook or
a subagent would run it, against one store that does not exist yet — so the first writes also race
to create and migrate it. Readers run ``crib retrieve`` in a loop until the writers finish.

Printed: writes attempted / acknowledged (exit 0 with "stored entry N") / stored (found in the
database afterwards, by their unique text) / lost (acknowledged but not stored) / failed (non-zero
exit), readers' runs and errors (a "failed open" or "did not run" line, a traceback, or a non-zero
exit), write latency percentiles, and PRAGMA integrity_check. Target: 0 failed, 0 lost, 0 reader
errors. Exit status 1 when any of those is not 0.
"""

from __future__ import annotations

import argparse
import os
import subprocess
import sys
import tempfile
import threading
import time
from dataclasses import dataclass, field
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent


@dataclass
class Tally:
    """Thread-safe counters of one run."""

    lock: threading.Lock = field(default_factory=threading.Lock)
    attempted: int = 0
    stop_writing_at: float = float("inf")  # perf_counter time after which writers start no new write
    acknowledged: int = 0
    failed: int = 0
    latencies: list[float] = field(default_factory=list)
    acked_texts: list[str] = field(default_factory=list)
    failures: list[str] = field(default_factory=list)
    reads: int = 0
    read_errors: int = 0
    read_failures: list[str] = field(default_factory=list)


def crib_command(*args: str) -> list[str]:
    return [sys.executable, "-m", "crib_plugin", *args]


def child_env(db: Path | str) -> dict[str, str]:
    env = dict(os.environ)
    env["CRIB_DB"] = str(db)
    env.setdefault("CRIB_EXTRACTOR", "rules")
    env["PYTHONPATH"] = os.pathsep.join(p for p in (str(ROOT), env.get("PYTHONPATH", "")) if p)
    return env


def writer(index: int, writes: int, env: dict[str, str], tally: Tally) -> None:
    topics = ["sqlite locking", "deploy pipeline", "parser bug", "release notes", "cache eviction"]
    for j in range(writes):
        if time.perf_counter() >= tally.stop_writing_at:
            return
        text = f"stress w{index}n{j}: writer {index} notes about {topics[j % len(topics)]} (item {j})"
        started = time.perf_counter()
        result = subprocess.run(crib_command("write", text), env=env, capture_output=True, text=True)
        elapsed = time.perf_counter() - started
        ok = result.returncode == 0 and ("stored entry" in result.stdout or "already stored" in result.stdout)
        with tally.lock:
            tally.attempted += 1
            tally.latencies.append(elapsed)
            if ok:
                tally.acknowledged += 1
                tally.acked_texts.append(text)
            else:
                tally.failed += 1
                if len(tally.failures) < 10:
                    tally.failures.append(f"exit {result.returncode}: {result.stderr.strip()[-300:]}")
            if tally.attempted % 100 == 0:  # progress for long runs (stderr; the table goes to stdout)
                print(f"stress: {tally.attempted} writes, {tally.failed} failed, {tally.reads} reads, "
                      f"{tally.read_errors} reader errors", file=sys.stderr, flush=True)


def reader(index: int, env: dict[str, str], stop: threading.Event, tally: Tally, pause: float) -> None:
    prompts = ["what did we decide about sqlite locking?", "how does the deploy pipeline work", "parser bug notes"]
    k = 0
    while not stop.is_set():
        result = subprocess.run(
            crib_command("retrieve"), input=prompts[(index + k) % len(prompts)], env=env, capture_output=True, text=True
        )
        k += 1
        bad = result.returncode != 0 or any(
            marker in result.stderr for marker in ("failed open", "did not run", "Traceback")
        )
        with tally.lock:
            tally.reads += 1
            if bad:
                tally.read_errors += 1
                if len(tally.read_failures) < 10:
                    tally.read_failures.append(f"exit {result.returncode}: {result.stderr.strip()[-300:]}")
        stop.wait(pause)


def stored_texts(db: Path | str) -> tuple[set[str], int, str]:
    """Contents of the stored entries, their count, and PRAGMA integrity_check (on a server, where
    PostgreSQL checks its own constraints on every write: "ok" when the entry count its triggers
    kept through the writers' races equals the entries found)."""
    from crib_plugin.core.dburl import is_server_url

    if is_server_url(db):
        from crib_plugin.store import open_store

        store = open_store(str(db), readonly=True)
        try:
            contents = [entry.content for entry in store.iter_entries()]
            kept = store.count_entries()
        finally:
            store.close()
        return set(contents), len(contents), "ok" if kept == len(contents) else f"kept count {kept} != {len(contents)} entries"
    import apsw

    conn = apsw.Connection(str(db), flags=apsw.SQLITE_OPEN_READONLY)
    try:
        contents = [str(r[0]) for r in conn.execute("SELECT content FROM entries")]
        integrity = str(list(conn.execute("PRAGMA integrity_check"))[0][0])
    finally:
        conn.close()
    return set(contents), len(contents), integrity


def percentile(values: list[float], q: float) -> float:
    if not values:
        return 0.0
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, int(q * len(ordered)))]


def run(writers: int, writes: int, readers: int, db: Path | str, pause: float, budget: float | None = None) -> dict[str, object]:
    env = child_env(db)
    tally = Tally()
    stop = threading.Event()
    started = time.perf_counter()
    if budget is not None:
        tally.stop_writing_at = started + budget
    write_threads = [threading.Thread(target=writer, args=(i, writes, env, tally)) for i in range(writers)]
    read_threads = [threading.Thread(target=reader, args=(i, env, stop, tally, pause)) for i in range(readers)]
    for thread in write_threads + read_threads:
        thread.start()
    for thread in write_threads:
        thread.join()
    stop.set()
    for thread in read_threads:
        thread.join()
    wall = time.perf_counter() - started
    contents, count, integrity = stored_texts(db)
    stored = sum(1 for text in tally.acked_texts if text in contents)
    return {
        "writers": writers,
        "writes_per_writer": writes,
        "readers": readers,
        "attempted": tally.attempted,
        "acknowledged": tally.acknowledged,
        "stored": stored,
        "lost": tally.acknowledged - stored,
        "failed": tally.failed,
        "entries_in_store": count,
        "reads": tally.reads,
        "reader_errors": tally.read_errors,
        "write_p50_s": percentile(tally.latencies, 0.5),
        "write_p95_s": percentile(tally.latencies, 0.95),
        "write_max_s": max(tally.latencies, default=0.0),
        "wall_s": wall,
        "integrity": integrity,
        "failures": tally.failures,
        "read_failures": tally.read_failures,
    }


def report(result: dict[str, object]) -> str:
    lines = [
        f"stress: {result['writers']} writers × {result['writes_per_writer']} `crib write`, {result['readers']} readers"
        + ("" if result["attempted"] == result["writers"] * result["writes_per_writer"]  # type: ignore[operator]
           else f" — stopped by --budget after {result['attempted']} writes"),
        "",
        "| writes attempted | acknowledged | stored | lost | failed | reads | reader errors | integrity |",
        "|---|---|---|---|---|---|---|---|",
        f"| {result['attempted']} | {result['acknowledged']} | {result['stored']} | {result['lost']} | {result['failed']} "
        f"| {result['reads']} | {result['reader_errors']} | {result['integrity']} |",
        "",
        f"write latency p50 {result['write_p50_s']:.2f} s, p95 {result['write_p95_s']:.2f} s, "
        f"max {result['write_max_s']:.2f} s; wall {result['wall_s']:.0f} s; load average {os.getloadavg()[0]:.2f}",
    ]
    for failure in result["failures"]:  # type: ignore[union-attr]
        lines.append(f"write failure: {failure}")
    for failure in result["read_failures"]:  # type: ignore[union-attr]
        lines.append(f"reader error: {failure}")
    return "\n".join(lines)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--writers", type=int, default=8)
    parser.add_argument("--writes", type=int, default=500, help="writes per writer")
    parser.add_argument("--readers", type=int, default=4)
    parser.add_argument("--reader-pause", type=float, default=0.2, help="seconds each reader waits between retrieves")
    parser.add_argument("--budget", type=float, default=None,
                        help="minutes after which writers start no new write (the report says how many ran)")
    parser.add_argument("--db", default=None, help="store to use: a file, or a postgresql:// URL (default: a new file in a temp dir)")
    args = parser.parse_args(argv)
    with tempfile.TemporaryDirectory(prefix="crib-stress-") as tmp:
        db = args.db or str(Path(tmp) / "crib.db")
        budget = None if args.budget is None else 60 * args.budget
        result = run(args.writers, args.writes, args.readers, db, args.reader_pause, budget)
    print(report(result), flush=True)
    bad = result["failed"] or result["lost"] or result["reader_errors"] or result["integrity"] != "ok"
    return 1 if bad else 0


if __name__ == "__main__":
    raise SystemExit(main())
