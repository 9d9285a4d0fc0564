"""``crib ui`` on a big store: page load and search latency, as a person's browser sees them.

    python bench/ui.py [--size 100000] [--runs 20] [--cache /work/scale-stores] [--base 4096]

The store is ``bench/scale.py``'s (same build, same cache: a 10⁵ store already built there is
reused). One ``crib ui --no-browser`` process serves it; the figures are medians and 95th
percentiles over ``--runs`` requests after one untimed warm-up each (the first search loads the
embedder, as a person's first search does):

* **HTTP** — a keep-alive client with the session cookie: the browse page (newest 100), a memory
  page (history, facts, audit), a text filter, the sessions and health pages, and a ranked search;
* **browser** — the same pages in headless Chromium (Debian's, driven by Playwright), from
  navigation start to the ``load`` event (``performance.getEntriesByType('navigation')``).

The issue's bar: page load ≤ 300 ms, search ≤ 500 ms at 10⁵. No threshold is asserted.
"""

from __future__ import annotations

import argparse
import os
import statistics
import subprocess
import sys
import time
from pathlib import Path
from typing import Any, Callable, Sequence

sys.path.insert(0, str(Path(__file__).resolve().parent))
from scale import ensure_store, file_size  # noqa: E402

SEARCHES = ["how do we deploy the billing service", "database migration rollback", "flaky test in the payment worker",
            "which cache did we choose", "error when the queue is full"]
FLAGS = ["--no-sandbox", "--disable-gpu", "--disable-quic", "--no-first-run", "--disable-background-networking",
         "--disable-component-update", "--disable-sync"]


def _stats(values: Sequence[float]) -> str:
    ordered = sorted(values)
    p95 = ordered[min(len(ordered) - 1, int(round(0.95 * (len(ordered) - 1))))]
    return f"median {statistics.median(ordered) * 1000:6.1f} ms   p95 {p95 * 1000:6.1f} ms"


def _timed(call: Callable[[int], Any], runs: int) -> list[float]:
    call(-1)  # warm-up, untimed
    out = []
    for i in range(runs):
        started = time.perf_counter()
        call(i)
        out.append(time.perf_counter() - started)
    return out


def start_ui(db: Path) -> tuple[subprocess.Popen[str], str]:
    env = {**os.environ, "CRIB_DB": str(db), "CRIB_EXTRACTOR": "rules", "OLLAMA_HOST": "http://127.0.0.1:9"}
    proc = subprocess.Popen([sys.executable, "-m", "crib_plugin", "ui", "--no-browser"], stdout=subprocess.PIPE,
                            stderr=subprocess.DEVNULL, text=True, env=env)
    url = proc.stdout.readline().strip() if proc.stdout else ""
    if not url.startswith("http://127.0.0.1:"):
        proc.terminate()
        raise SystemExit(f"crib ui did not print its URL: {url!r}")
    return proc, url


def pages(entry_id: int) -> dict[str, str]:
    return {"browse (newest 100)": "/?scope=project", "memory page": f"/memory/project/{entry_id}",
            "text filter": "/?scope=project&text=billing", "sessions": "/sessions", "health": "/health"}


def http_figures(url: str, entry_id: int, runs: int) -> None:
    import httpx

    base = url.split("/?")[0]
    with httpx.Client(base_url=base, follow_redirects=True) as client:
        client.get(url).raise_for_status()
        for name, path in pages(entry_id).items():
            print(f"  http    {name:<22} {_stats(_timed(lambda _i, p=path: client.get(p).raise_for_status(), runs))}")
        search = lambda i: client.get("/", params={"scope": "project", "search": SEARCHES[i % len(SEARCHES)]}).raise_for_status()
        print(f"  http    {'search (ranked, 20)':<22} {_stats(_timed(search, runs))}")


def browser_figures(url: str, entry_id: int, runs: int) -> None:
    from playwright.sync_api import sync_playwright

    base = url.split("/?")[0]
    load = "(() => { const n = performance.getEntriesByType('navigation')[0]; return n.loadEventEnd - n.startTime; })()"
    with sync_playwright() as pw:
        browser = pw.chromium.launch(executable_path=os.environ.get("CRIB_CHROMIUM", "/usr/bin/chromium"), args=FLAGS)
        page = browser.new_page()
        page.goto(url)
        targets = {**pages(entry_id), "search (ranked, 20)": None}
        for name, path in targets.items():
            def visit(i: int, p: str | None = path) -> float:
                page.goto(base + (p or "/?scope=project&search=" + SEARCHES[i % len(SEARCHES)].replace(" ", "+")))
                return float(page.evaluate(load)) / 1000
            visit(-1)
            print(f"  browser {name:<22} {_stats([visit(i) for i in range(runs)])}")
        browser.close()


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--size", type=int, default=100_000)
    parser.add_argument("--runs", type=int, default=20)
    parser.add_argument("--base", type=int, default=4096)
    parser.add_argument("--cache", type=Path, default=Path("/work/scale-stores"))
    parser.add_argument("--no-browser", action="store_true", help="HTTP figures only")
    args = parser.parse_args(argv)
    args.cache.mkdir(parents=True, exist_ok=True)
    db, how = ensure_store(args.cache, args.size, args.base, False)
    print(f"store: {args.size} memories, {file_size(db)}, {how}")
    proc, url = start_ui(db)
    try:
        entry_id = args.size // 2
        http_figures(url, entry_id, args.runs)
        if not args.no_browser:
            browser_figures(url, entry_id, args.runs)
    finally:
        proc.terminate()
        proc.wait(timeout=10)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
