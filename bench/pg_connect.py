"""What a per-prompt hook pays to reach a PostgreSQL store: connection set-up, and a whole cold
``crib retrieve``, beside SQLite's — interleaved with a yardstick (``python -c "import numpy"``)
because the timings are taken on whatever machine runs this, loaded or not.

    python bench/pg_connect.py postgresql://user:pw@host/db [--runs 20]

Prints medians: psycopg connect + first query (in-process, warm interpreter), a cold
``crib retrieve`` on the URL, the same on a SQLite copy of it (made with ``crib migrate``), and the
yardstick; ratios against the yardstick are what to compare across machines.
"""

from __future__ import annotations

import argparse
import os
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent


def timed(cmd: list[str], env: dict[str, str], stdin: str = "") -> float:
    started = time.perf_counter()
    subprocess.run(cmd, env=env, input=stdin, capture_output=True, text=True, check=False)
    return time.perf_counter() - started


def connect_once(url: str) -> float:
    import psycopg

    started = time.perf_counter()
    with psycopg.connect(url, autocommit=True) as conn:
        conn.execute("SELECT 1").fetchone()
    return time.perf_counter() - started


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("url")
    parser.add_argument("--runs", type=int, default=20)
    parser.add_argument("--prompt", default="what database did we choose?")
    args = parser.parse_args(argv)
    env = {**os.environ, "PYTHONPATH": str(ROOT)}
    crib = [sys.executable, "-m", "crib_plugin"]
    with tempfile.TemporaryDirectory(prefix="crib-pgconnect-") as tmp:
        copy = str(Path(tmp) / "copy.db")
        subprocess.run([*crib, "migrate", "--from", args.url, "--to", copy], env=env, capture_output=True, check=True)
        series: dict[str, list[float]] = {"connect": [], "retrieve_pg": [], "retrieve_sqlite": [], "yardstick": []}
        for _ in range(args.runs):
            series["connect"].append(connect_once(args.url))
            series["retrieve_pg"].append(timed([*crib, "retrieve"], {**env, "CRIB_DB": args.url}, args.prompt))
            series["retrieve_sqlite"].append(timed([*crib, "retrieve"], {**env, "CRIB_DB": copy}, args.prompt))
            series["yardstick"].append(timed([sys.executable, "-c", "import numpy"], env))
    yard = statistics.median(series["yardstick"])
    print(f"{'what':<18} {'median ms':>10} {'× yardstick':>12}")
    for name, values in series.items():
        median = statistics.median(values)
        print(f"{name:<18} {median * 1000:>10.1f} {median / yard:>12.2f}")
    print(f"load average {os.getloadavg()[0]:.2f}, {args.runs} runs")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
