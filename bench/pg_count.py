"""What ``count_entries`` costs on a PostgreSQL store — asked by the relevance gate on every prompt —
read from the count the triggers keep (schema version 6) beside the exact ``count(*)`` it replaced,
alternating, each on a freshly opened store (as a prompt hook's process opens one), with a yardstick
(``python -c "import numpy"``) interleaved because the machine may be loaded.

    python bench/pg_count.py postgresql://user:pw@host/db [--runs 15]

Prints medians in milliseconds and checks the kept count equals ``count(*)``.
"""

from __future__ import annotations

import argparse
import statistics
import subprocess
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from crib_plugin.store.postgres import open_postgres  # noqa: E402

EXACT_SQL = "SELECT count(*) FROM entries"  # count_entries before schema version 6


def timed_count(url: str, exact: bool) -> tuple[float, int]:
    """Milliseconds for one count on a fresh store (the connection opened beforehand, not timed)."""
    store = open_postgres(url, readonly=True)
    try:
        started = time.perf_counter()
        n = int(store.execute(EXACT_SQL)[0][0]) if exact else store.count_entries()
        return (time.perf_counter() - started) * 1000, n
    finally:
        store.close()


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("url")
    parser.add_argument("--runs", type=int, default=15)
    args = parser.parse_args()
    kept: list[float] = []
    exact: list[float] = []
    yardstick: list[float] = []
    counts: set[tuple[int, int]] = set()
    for _ in range(args.runs):
        kept_ms, kept_n = timed_count(args.url, exact=False)
        exact_ms, exact_n = timed_count(args.url, exact=True)
        started = time.perf_counter()
        subprocess.run([sys.executable, "-c", "import numpy"], check=True)
        yardstick.append((time.perf_counter() - started) * 1000)
        kept.append(kept_ms)
        exact.append(exact_ms)
        counts.add((kept_n, exact_n))
    k, e, y = statistics.median(kept), statistics.median(exact), statistics.median(yardstick)
    print(f"entries (kept, count(*)): {sorted(counts)}")
    print("| count_entries | median ms | × yardstick |")
    print("|---|---|---|")
    print(f"| kept by triggers (schema 6) | {k:.2f} | {k / y:.4f} |")
    print(f"| count(*) (before) | {e:.1f} | {e / y:.3f} |")
    print(f"| yardstick `python -c \"import numpy\"` | {y:.0f} | 1 |")
    print(f"count(*) / kept: {e / k:.0f}×; {args.runs} runs alternating")
    if any(a != b for a, b in counts):
        sys.exit("the kept count differs from count(*)")


if __name__ == "__main__":
    main()
