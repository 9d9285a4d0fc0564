"""Wall time of the per-prompt commands on hostile input: huge prompts and an oversized stored entry.

    python bench/hostile.py [--timeout 2] [--runs 3] [--keep DIR] [--quick]

Builds two throw-away stores in a temporary folder (offline MiniLM embedder, rules extractor):

* ``plain``: 200 ordinary memories;
* ``huge``: the same plus one 5 MB memory, inserted straight into the store (an older crib version
  could store one; this one refuses entries over ``limits.MAX_ENTRY_CHARS``) and one entry of the
  largest allowed size, both sharing words with the probe prompt so that every retrieval finds them.

Then times fresh processes of ``crib hook user-prompt-submit`` (Claude Code's hook JSON on stdin,
``CRIB_HOOK_TIMEOUT=--timeout``) and ``crib retrieve`` on each input, and prints a markdown table:
median and max wall seconds, whether the output was valid (hook: empty or one JSON line; retrieve:
any), how many runs printed a block (a hook that gives up prints nothing), and the hook's budget +
0.3 s that the issue sets as the target. Inputs: an ordinary prompt;
a 16,000-character alphanumeric run; a 32,000-character prompt; a 1 MB line; a 10 MB prompt; 10 MB
of invalid UTF-8 bytes; a deeply nested 1 MB JSON document.

``--quick`` (for the test that proves the script runs) builds 20 memories and times only the
ordinary prompt and the 10 MB prompt.

No threshold is asserted here (the tests assert the hook's budget + margin): these are the figures.
"""

from __future__ import annotations

import argparse
import json
import os
import random
import statistics
import string
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]

PROBE = "why did we choose sqlite for the storage layer and what about the deploy pipeline"
WORDS = "sqlite storage layer deploy pipeline choose decision cache index vector budget hook".split()


def _text(n: int, seed: int) -> str:
    rng = random.Random(seed)
    out: list[str] = []
    size = 0
    while size < n:
        word = rng.choice(WORDS) if rng.random() < 0.3 else "".join(rng.choice(string.ascii_lowercase) for _ in range(rng.randint(3, 9)))
        out.append(word)
        size += len(word) + 1
    return " ".join(out)[:n]


def build_store(path: Path, huge: bool, entries: int = 200) -> None:
    """A store of 200 memories; with ``huge``, plus a 5 MB entry and one of the largest allowed size."""
    env = {**os.environ, "CRIB_DB": str(path), "CRIB_EXTRACTOR": "rules"}
    code = f"""
import sys
sys.path.insert(0, {str(ROOT)!r})
from crib_plugin.core.limits import MAX_ENTRY_CHARS
from crib_plugin.memory import Memory, NewEntry
from bench.hostile import _text
with Memory() as m:
    m.write_many([NewEntry(f"memory {{i}}: " + _text(300, i)) for i in range({entries})], extract=False)
    if {huge!r}:
        m.write_many([NewEntry(_text(MAX_ENTRY_CHARS - 10, 7))], extract=False)
        with m.store.transaction():
            m.store.insert_entry("note", "{PROBE} " + _text(5_000_000, 9), "2024-01-01T00:00:00Z", {{}})
"""
    subprocess.run([sys.executable, "-c", code], env=env, check=True, cwd=ROOT)


QUICK = ("ordinary prompt", "10 MB prompt")


def inputs(names: tuple[str, ...] | None = None) -> dict[str, bytes]:
    """The hostile inputs (those in ``names``, or all), as the bytes a hook receives on stdin.

    Only the inputs asked for are generated: the 10 MB prompt alone takes seconds of CPU."""

    def alnum() -> str:
        rng = random.Random(1)
        return "".join(rng.choice(string.ascii_letters + string.digits) for _ in range(16_000))

    def hook(prompt: str) -> bytes:
        return json.dumps({"session_id": "", "prompt": prompt, "hook_event_name": "UserPromptSubmit"}).encode()

    makers = {
        "ordinary prompt": lambda: hook(PROBE),
        "16k alphanumeric run": lambda: hook(alnum()),
        "32k prompt": lambda: hook(_text(32_000, 3)),
        "1 MB line": lambda: hook(PROBE + " " + "x" * 1_000_000),
        "10 MB prompt": lambda: hook(_text(10_000_000, 5)),
        "10 MB invalid UTF-8": lambda: b"\xff\xfe" * 5_000_000,
        "1 MB nested JSON": lambda: ("[" * 500_000 + "]" * 500_000).encode(),
    }
    return {name: make() for name, make in makers.items() if names is None or name in names}


def crib() -> list[str]:
    return [sys.executable, "-c", "from crib_plugin.hosts.cli.hotpath import main; main()"]


def time_run(args: list[str], data: bytes, env: dict[str, str]) -> tuple[float, bool, bool]:
    """Wall seconds of one process, whether its output was valid for its command, and whether it
    printed a block (a hook that gave up prints nothing: fast but empty)."""
    started = time.perf_counter()
    proc = subprocess.run(crib() + args, input=data, env=env, capture_output=True, timeout=120, check=False)
    seconds = time.perf_counter() - started
    out = proc.stdout.decode("utf-8", "replace").strip()
    ok = proc.returncode == 0 and b"Traceback" not in proc.stderr
    if args[0] == "hook" and out:
        try:
            ok = ok and "hookSpecificOutput" in json.loads(out)
        except ValueError:
            ok = False
    return seconds, ok, bool(out)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--timeout", type=float, default=2.0, help="CRIB_HOOK_TIMEOUT for the hook runs")
    parser.add_argument("--runs", type=int, default=3)
    parser.add_argument("--keep", type=Path, default=None, help="build the stores here (reused when present)")
    parser.add_argument("--quick", action="store_true", help="20 memories, two inputs: proves the script runs")
    args = parser.parse_args()
    folder = args.keep or Path(tempfile.mkdtemp(prefix="crib-hostile-"))
    folder.mkdir(parents=True, exist_ok=True)
    stores = {"plain": folder / "plain.db", "5 MB entry": folder / "huge.db"}
    for name, path in stores.items():
        if not path.exists():
            print(f"building store {name} …", file=sys.stderr)
            build_store(path, huge=name != "plain", entries=20 if args.quick else 200)
    print(f"load average (1 min): {os.getloadavg()[0]:.2f}; hook budget {args.timeout:g} s, target < {args.timeout + 0.3:.1f} s")
    print()
    print("| store | input | command | median s | max s | valid | printed a block |")
    print("|---|---|---|---|---|---|---|")
    chosen = inputs(QUICK if args.quick else None)  # once for both stores
    for store_name, path in stores.items():
        env = {**os.environ, "CRIB_DB": str(path), "CRIB_HOOK_TIMEOUT": str(args.timeout), "PYTHONPATH": str(ROOT)}
        for input_name, data in chosen.items():
            for command in (["hook", "user-prompt-submit"], ["retrieve"]):
                runs = [time_run(command, data, env) for _ in range(args.runs)]
                times = [s for s, _, _ in runs]
                valid = all(ok for _, ok, _ in runs)
                printed = sum(1 for _, _, block in runs if block)
                print(f"| {store_name} | {input_name} | {' '.join(command)} | {statistics.median(times):.2f} | {max(times):.2f} "
                      f"| {'yes' if valid else 'NO'} | {printed}/{len(runs)} |", flush=True)


if __name__ == "__main__":
    main()
