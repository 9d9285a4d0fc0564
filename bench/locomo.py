"""LoCoMo turn-level recall for every channel alone, fused, and as injected.

    python bench/locomo.py [--data PATH] [--rebuild] [--questions N]

Same code as ``crib eval``; prints the table quoted in docs/benchmarks.md and closing notes.
"""

from __future__ import annotations

import sys

from crib_plugin.hosts.cli.app import main

if __name__ == "__main__":
    main(["eval", *sys.argv[1:]])
