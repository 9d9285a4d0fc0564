"""The screenshots in docs/ui.md, taken from the real viewer in headless Chromium.

    python bench/ui_screenshots.py [--out docs/ui]

Builds a small demo store in a temporary folder (a few memories, a correction, one prompt of an
agent session through the real prompt hook, the agent opening one pointer), starts ``crib ui
--no-browser`` on it and saves one PNG per main page (1000 px wide, the page's top 720 px).
"""

from __future__ import annotations

import argparse
import json
import os
import re
import subprocess
import sys
import tempfile
from pathlib import Path

DEMO = [
    ("decision", "We chose SQLite for the local store"),
    ("decision", "Invoices are rendered as PDF with WeasyPrint in the billing service."),
    ("note", "The billing service sends invoices by email through Postmark."),
    ("note", "The billing service stores invoice totals as integer cents."),
    ("error", "Invoice numbering once skipped numbers after a failed billing run: the sequence is now taken inside the transaction."),
    ("preference", "Keep billing code free of floating point arithmetic."),
    ("note", "Billing runs on the first day of each month at 06:00 UTC."),
]
PROMPT = "how are invoices rendered as PDF in the billing service?"
FLAGS = ["--no-sandbox", "--disable-gpu", "--disable-quic", "--no-first-run", "--disable-background-networking",
         "--disable-component-update", "--disable-sync", "--hide-scrollbars"]


def crib(env: dict[str, str], cwd: Path, *args: str, input: str | None = None) -> str:
    done = subprocess.run([sys.executable, "-m", "crib_plugin", *args], input=input, capture_output=True, text=True, env=env, cwd=str(cwd))
    if done.returncode:
        raise SystemExit(done.stderr)
    return done.stdout


def demo_store(root: Path) -> dict[str, str]:
    env = {k: v for k, v in os.environ.items() if not k.startswith("CRIB_")}
    env.update(CRIB_DB=str(root / "crib.db"), CRIB_GLOBAL_DB=str(root / "global.db"), CRIB_EXTRACTOR="rules",
               OLLAMA_HOST="http://127.0.0.1:9", CRIB_HOOK_TIMEOUT="60")
    for kind, text in DEMO:
        crib(env, root, "write", input=f"type={kind} {text}")
    crib(env, root, "correct", "1", "We chose PostgreSQL for the local store")
    crib(env, root, "cue", "2", "when generating, styling or debugging invoice PDFs")
    out = crib(env, root, "hook", "user-prompt-submit", input=json.dumps({"session_id": "demo-session", "prompt": PROMPT,
                                                                             "hook_event_name": "UserPromptSubmit", "cwd": str(root)}))
    pointers = re.findall(r"^- #(\d+) \[", json.loads(out)["hookSpecificOutput"]["additionalContext"], re.M) if out.strip() else []
    if pointers:
        from crib_plugin.output.session_journal import record_opened
        record_opened(root / "sessions", int(pointers[0]), "project")
    return env


def main() -> int:
    parser = argparse.ArgumentParser()
    parser.add_argument("--out", type=Path, default=Path(__file__).resolve().parent.parent / "docs" / "ui")
    args = parser.parse_args()
    args.out.mkdir(parents=True, exist_ok=True)
    from playwright.sync_api import sync_playwright

    with tempfile.TemporaryDirectory() as tmp:
        root = Path(tmp)
        env = demo_store(root)
        server = subprocess.Popen([sys.executable, "-m", "crib_plugin", "ui", "--no-browser"], stdout=subprocess.PIPE,
                                  stderr=subprocess.DEVNULL, text=True, env=env, cwd=str(root))
        try:
            url = server.stdout.readline().strip() if server.stdout else ""
            base = url.split("/?")[0]
            with sync_playwright() as pw:
                browser = pw.chromium.launch(executable_path=os.environ.get("CRIB_CHROMIUM", "/usr/bin/chromium"), args=FLAGS)
                page = browser.new_page(viewport={"width": 1000, "height": 720})
                page.goto(url)
                shots = {"search": "/?scope=project&search=invoice+PDF", "memory": "/memory/project/1",
                         "sessions": "/sessions", "health": "/health"}
                for name, path in shots.items():
                    page.goto(base + path)
                    page.screenshot(path=str(args.out / f"{name}.png"))
                page.goto(base + "/memory/project/7")
                page.click("#forget-form button")
                page.screenshot(path=str(args.out / "confirm.png"))
                browser.close()
        finally:
            server.terminate()
            server.wait(timeout=10)
    for png in sorted(args.out.glob("*.png")):
        print(f"{png}  {png.stat().st_size // 1024} KB")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
