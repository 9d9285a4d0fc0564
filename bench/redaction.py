"""Cost of secret redaction: the write pass (crib's rules + detect-secrets') and the render pass
(crib's rules only), on prose and on hostile inputs, plus what importing each costs (which is why detect-secrets stays off the per-prompt path).

    python bench/redaction.py [--runs 20]

Prints a markdown table of median milliseconds per call. No threshold is asserted.
"""

from __future__ import annotations

import argparse
import random
import statistics
import subprocess
import sys
import time
from collections.abc import Callable
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

WORDS = [
    "the", "memory", "store", "uses", "sqlite", "with", "WAL", "mode", "and", "a", "token", "budget", "of",
    "8000", "chars;", "see", "https://example.com/a/b", "for", "details.", "Commit", "3f2a9c1", "fixed",
    "the", "password", "reset", "flow",
]


def prose(chars: int, seed: int = 1) -> str:
    rng = random.Random(seed)
    lines: list[str] = []
    size = 0
    while size < chars:
        line = " ".join(rng.choice(WORDS) for _ in range(30))
        lines.append(line)
        size += len(line) + 1
    return "\n".join(lines)[:chars]


def median_ms(fn: Callable[[str], str], text: str, runs: int) -> float:
    fn(text)  # compile the rules it needs
    times = []
    for _ in range(runs):
        t0 = time.perf_counter()
        fn(text)
        times.append(time.perf_counter() - t0)
    return statistics.median(times) * 1000


def import_ms(module: str, runs: int = 3) -> float:
    """Median cumulative import time of ``module`` in a fresh interpreter (``-X importtime``)."""
    values = []
    for _ in range(runs):
        proc = subprocess.run([sys.executable, "-X", "importtime", "-c", f"import {module}"], check=True,
                              capture_output=True, text=True, env={"PYTHONPATH": str(ROOT)})
        last = [line for line in proc.stderr.splitlines() if line.startswith("import time:")][-1]
        values.append(int(last.split("|")[1]) / 1000)
    return statistics.median(values)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--runs", type=int, default=20)
    args = parser.parse_args()

    from crib_plugin.text.redact import plugin_rules, redact, redact_for_render

    plugin_rules()  # fill the rule cache, as the first write does
    cases = {
        "prose, 8,000 chars (one injected block)": prose(8000),
        "prose, 100,000 chars": prose(100_000),
        "'password ' x 10,000": "password " * 10_000,
        "'sk-' x 1,000 per line, 100 lines": ("sk-" * 340 + "\n") * 100,
        "one 100,000-char alphanumeric run": "A1b2" * 25_000,
    }
    print("| input | write pass (ms) | render pass (ms) |")
    print("| --- | ---: | ---: |")
    for name, text in cases.items():
        runs = args.runs if len(text) <= 10_000 else max(3, args.runs // 5)
        print(f"| {name} | {median_ms(redact, text, runs):.2f} | {median_ms(redact_for_render, text, runs):.2f} |")
    print()
    print(f"import crib_plugin.text.redact: {import_ms('crib_plugin.text.redact'):.0f} ms; "
          f"import detect_secrets.core.plugins.util: {import_ms('detect_secrets.core.plugins.util'):.0f} ms")


if __name__ == "__main__":
    main()
