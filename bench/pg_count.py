"""What ``count_entries`` costs on a PostgreSQL store — the relevance gate asks on every prompt —
read from the count the triggers keep (schema version 6) beside the exact ``count(*)`` it replaced,
alternating on one connection, with a yardstick (``python -c "import numpy"``) interleaved because
the machine may be loaded.

    python bench/pg_count.py postgresql://user:pw@host/db [--runs 9]

A store older than schema version 6 (say a big copy made by ``bench/pg_scale.py`` before it) gets
the kept count inside the measuring transaction, which is rolled back: the store is left as found.
Prints medians in milliseconds; exits 1 if the kept count differs from ``count(*)``.
"""

from __future__ import annotations

import argparse
import os
import statistics
import subprocess
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from crib_plugin.store.postgres_schema import ENTRY_COUNT  # noqa: E402
from crib_plugin.store.postgres_search import PgEntriesMixin  # noqa: E402

EXACT_SQL = "SELECT count(*) FROM entries"  # count_entries before schema version 6
KEPT_SQL = PgEntriesMixin.COUNT_SQL


def timed(conn: object, sql: str) -> tuple[float, int]:
    started = time.perf_counter()
    n = int(conn.execute(sql).fetchone()[0])  # type: ignore[attr-defined]
    return (time.perf_counter() - started) * 1000, n


def main() -> None:
    # deferred: the postgres extra, needed only when this bench runs
    import psycopg

    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("url")
    parser.add_argument("--runs", type=int, default=9)
    args = parser.parse_args()
    kept: list[float] = []
    exact: list[float] = []
    yardstick: list[float] = []
    counts: set[tuple[int, int]] = set()
    with psycopg.connect(args.url) as conn:  # one transaction, rolled back at the end
        version = int(conn.execute("SELECT version FROM crib_schema").fetchone()[0])
        if version < 6:
            started = time.perf_counter()
            conn.execute(ENTRY_COUNT)
            print(f"schema version {version}: the kept count made for this run in {time.perf_counter() - started:.1f} s (rolled back)")
        for _ in range(args.runs):
            exact_ms, exact_n = timed(conn, EXACT_SQL)
            kept_ms, kept_n = timed(conn, KEPT_SQL)
            started = time.perf_counter()
            subprocess.run([sys.executable, "-c", "import numpy"], check=True)
            yardstick.append((time.perf_counter() - started) * 1000)
            kept.append(kept_ms)
            exact.append(exact_ms)
            counts.add((kept_n, exact_n))
        conn.rollback()
    k, e, y = statistics.median(kept), statistics.median(exact), statistics.median(yardstick)
    print(f"entries (kept, count(*)): {sorted(counts)}; {args.runs} runs alternating; load average {os.getloadavg()[0]:.1f}")
    print("| count_entries | median ms | × yardstick |")
    print("|---|---|---|")
    print(f"| kept by triggers (schema 6) | {k:.2f} | {k / y:.4f} |")
    print(f"| count(*) (before) | {e:.1f} | {e / y:.3f} |")
    print(f"| yardstick `python -c \"import numpy\"` | {y:.0f} | 1 |")
    print(f"count(*) / kept: {e / k:.0f}×")
    if any(a != b for a, b in counts):
        sys.exit("the kept count differs from count(*)")


if __name__ == "__main__":
    main()
