"""The prompt hook's worst case on a loaded machine: several hooks at once beside CPU hogs.

    python bench/hook_load.py [--timeout 2] [--calls 60] [--parallel 4] [--hogs 2] [--entries 500] [--keep DIR] [--quick]

Builds a throw-away store (``--entries`` ordinary memories, offline MiniLM, rules extractor; reused
with ``--keep``), starts ``--hogs`` processes that spin on the CPU, then runs ``--calls`` fresh
``crib hook user-prompt-submit`` processes, ``--parallel`` at a time, each with Claude Code's hook
JSON (a new session each, prompts that find memories) and ``CRIB_HOOK_TIMEOUT=--timeout``. Each
call's wall time runs from spawning the process to its exit. Prints the load average and one
markdown row: median, p99 and max seconds against the budget + 0.3 s the hook promises, how many
calls went over it, how many printed a block, and whether every output was valid (exit 0, empty
or one JSON line, no traceback).

``--quick`` (for the test that proves the script runs): 20 memories, 6 calls, 2 at a time, 1 hog.
No threshold is asserted here: these are the figures (``tests/test_hook_deadline.py`` tests the
mechanism).
"""

from __future__ import annotations

import argparse
import json
import os
import signal
import statistics
import subprocess
import sys
import tempfile
import time
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

from hostile import PROBE, build_store, crib

PROMPTS = [PROBE, "how does the deploy pipeline use the cache index?", "what was the decision about the vector budget?",
           "why sqlite for storage", "hook budget and the cache layer"]


def one_call(index: int, env: dict[str, str]) -> tuple[float, bool, bool]:
    """Wall seconds of one hook process, whether its output was valid, whether it printed a block."""
    data = json.dumps({"session_id": f"load-{os.getpid()}-{index}", "prompt": PROMPTS[index % len(PROMPTS)],
                       "hook_event_name": "UserPromptSubmit", "cwd": os.getcwd()}).encode()
    started = time.perf_counter()
    proc = subprocess.run([*crib(), "hook", "user-prompt-submit"], input=data, env=env, capture_output=True,
                          timeout=120, check=False)
    seconds = time.perf_counter() - started
    out = proc.stdout.decode("utf-8", "replace").strip()
    ok = proc.returncode == 0 and b"Traceback" not in proc.stderr
    if out:
        try:
            ok = ok and "hookSpecificOutput" in json.loads(out)
        except ValueError:
            ok = False
    return seconds, ok, bool(out)


def percentile(values: list[float], share: float) -> float:
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, int(round(share * (len(ordered) - 1))))]


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--timeout", type=float, default=2.0, help="CRIB_HOOK_TIMEOUT")
    parser.add_argument("--calls", type=int, default=60)
    parser.add_argument("--parallel", type=int, default=4, help="hook processes at once")
    parser.add_argument("--hogs", type=int, default=2, help="processes spinning on the CPU meanwhile")
    parser.add_argument("--entries", type=int, default=500)
    parser.add_argument("--keep", type=Path, default=None, help="build the store here (reused when present)")
    parser.add_argument("--quick", action="store_true", help="20 memories, 6 calls, 2 at a time, 1 hog")
    args = parser.parse_args()
    if args.quick:
        args.entries, args.calls, args.parallel, args.hogs = 20, 6, 2, 1
    folder = args.keep or Path(tempfile.mkdtemp(prefix="crib-hook-load-"))
    folder.mkdir(parents=True, exist_ok=True)
    db = folder / f"load-{args.entries}.db"
    if not db.exists():
        print(f"building a store of {args.entries} memories …", file=sys.stderr)
        build_store(db, huge=False, entries=args.entries)
    env = {**os.environ, "CRIB_DB": str(db), "CRIB_HOOK_TIMEOUT": str(args.timeout), "CRIB_EXTRACTOR": "rules",
           "CRIB_ERROR_LOG": str(folder / "crib.log")}
    hogs = [subprocess.Popen([sys.executable, "-c", "while True: pass"]) for _ in range(args.hogs)]
    try:
        time.sleep(0.5)
        load_before = os.getloadavg()[0]
        with ThreadPoolExecutor(max_workers=args.parallel) as pool:
            results = list(pool.map(lambda i: one_call(i, env), range(args.calls)))
        load_after = os.getloadavg()[0]
    finally:
        for hog in hogs:
            hog.send_signal(signal.SIGKILL)
            hog.wait()
    seconds = [r[0] for r in results]
    limit = args.timeout + 0.3
    print(f"load average (1 min): {load_before:.2f} before, {load_after:.2f} after; {os.cpu_count()} CPUs; "
          f"hook budget {args.timeout:g} s, target < {limit:.1f} s")
    print()
    print("| calls | at once | CPU hogs | median s | p99 s | max s | over budget + 0.3 s | printed a block | valid |")
    print("|---|---|---|---|---|---|---|---|---|")
    print(f"| {len(results)} | {args.parallel} | {args.hogs} | {statistics.median(seconds):.2f} | "
          f"{percentile(seconds, 0.99):.2f} | {max(seconds):.2f} | {sum(s >= limit for s in seconds)} | "
          f"{sum(r[2] for r in results)} | {'yes' if all(r[1] for r in results) else 'NO'} |")


if __name__ == "__main__":
    main()
