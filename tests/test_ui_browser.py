"""``crib ui`` in a real headless Chromium (Debian's ``chromium``, driven by Playwright's Python
driver; Playwright's own browser download is never used): the main paths a person takes, and the
hostile cases — no token, a DNS-rebinding host name, a cross-origin POST from another local page,
a memory holding script and markup. One browser and one ``crib ui`` process for the module.

Skips (saying why) where chromium or Playwright is missing; ``.ci/run`` installs both.
"""

from __future__ import annotations

import http.server
import json
import os
import re
import shutil
import subprocess
import sys
import threading
from pathlib import Path
from typing import Any, Iterator

import pytest

CHROMIUM = os.environ.get("CRIB_CHROMIUM", "/usr/bin/chromium")
if not Path(CHROMIUM).exists() and not shutil.which("chromium"):
    pytest.skip(f"no chromium at {CHROMIUM} (apt-get install chromium): the browser tests skip", allow_module_level=True)
playwright_api = pytest.importorskip("playwright.sync_api", reason="playwright (the test extra) is not installed")
pytest.importorskip("starlette")

from crib_plugin.output.session_journal import record_opened  # noqa: E402

pytestmark = [pytest.mark.slow, pytest.mark.xdist_group("ui_browser")]

FLAGS = ["--no-sandbox", "--disable-gpu", "--disable-quic", "--no-first-run", "--disable-background-networking",
         "--disable-component-update", "--disable-sync", "--host-resolver-rules=MAP rebind.test 127.0.0.1"]
MEMORIES = [
    ("decision", "Invoices are rendered as PDF with WeasyPrint in the billing service."),
    ("note", "The billing service sends invoices by email through Postmark."),
    ("note", "The billing service stores invoice totals as integer cents."),
    ("error", "Invoice numbering once skipped numbers after a failed billing run."),
    ("note", "Billing runs on the first day of each month at 06:00 UTC."),
    ("note", 'Hostile page said <script>window.pwned=1</script><img src=x onerror="window.pwned=2"> and [click](javascript:window.pwned=3)'),
    ("note", "The staging cluster is rebuilt every Friday night."),
]
PROMPT = "how are invoices rendered as PDF in the billing service?"


def _env(root: Path) -> dict[str, str]:
    env = {k: v for k, v in os.environ.items() if not k.startswith("CRIB_")}
    env.update(CRIB_DB=str(root / "crib.db"), CRIB_GLOBAL_DB=str(root / "global" / "crib.db"), CRIB_EXTRACTOR="rules",
               OLLAMA_HOST="http://127.0.0.1:9", CRIB_CACHE_DIR=str(root / "cache"), CRIB_ERROR_LOG=str(root / "crib.log"),
               CRIB_HOOK_TIMEOUT="60", XDG_CONFIG_HOME=str(root / "config"))
    return env


def _crib(env: dict[str, str], cwd: Path, *args: str, input: str | None = None) -> str:
    done = subprocess.run([sys.executable, "-m", "crib_plugin", *args], input=input, capture_output=True, text=True,
                          env=env, cwd=str(cwd), timeout=120)
    assert done.returncode == 0, done.stderr
    return done.stdout


@pytest.fixture(scope="module")
def site(tmp_path_factory: pytest.TempPathFactory) -> Iterator[dict[str, Any]]:
    """A stocked store, one prompt of a session through the real hook, and ``crib ui`` serving it."""
    root = tmp_path_factory.mktemp("ui")
    env = _env(root)
    lines = "".join(json.dumps({"type": kind, "content": text}) + "\n" for kind, text in MEMORIES)
    (root / "m.jsonl").write_text(lines, encoding="utf-8")
    _crib(env, root, "import", str(root / "m.jsonl"))
    _crib(env, root, "write", input="type=decision We chose SQLite for the local store.")  # id 8, with a fact
    _crib(env, root, "correct", "3", "The billing service stores invoice totals as Decimal, never floats.")
    hook = {"session_id": "s-browser", "hook_event_name": "UserPromptSubmit", "prompt": PROMPT, "cwd": str(root)}
    context = _crib(env, root, "hook", "user-prompt-submit", input=json.dumps(hook))
    pointers = [int(n) for n in re.findall(r"^- #(\d+) \[", json.loads(context)["hookSpecificOutput"]["additionalContext"], re.M)]
    if pointers:  # the agent follows its first pointer with the MCP `show` tool
        record_opened(root / "sessions", pointers[0], "project")
    server = subprocess.Popen([sys.executable, "-m", "crib_plugin", "ui", "--no-browser"], stdout=subprocess.PIPE,
                              stderr=subprocess.PIPE, text=True, env=env, cwd=str(root))
    try:
        url = server.stdout.readline().strip() if server.stdout else ""
        assert url.startswith("http://127.0.0.1:"), url
        yield {"url": url, "base": url.split("/?")[0], "root": root, "pointers": pointers}
    finally:
        server.terminate()
        server.wait(timeout=10)


@pytest.fixture(scope="module")
def browser(site: dict[str, Any]) -> Iterator[Any]:
    with playwright_api.sync_playwright() as pw:
        chromium = pw.chromium.launch(executable_path=CHROMIUM, args=FLAGS)
        yield chromium
        chromium.close()


@pytest.fixture
def page(browser: Any, site: dict[str, Any]) -> Iterator[Any]:
    context = browser.new_context()
    tab = context.new_page()
    tab.goto(site["url"])
    yield tab
    context.close()


def _submit(tab: Any, button: str) -> None:
    """Click a button that submits a form, and wait until the page it leads to has loaded: a bare click
    can return before the new page's rows are parsed, and reading them then finds none."""
    with tab.expect_navigation(wait_until="load"):
        tab.click(button)


def _no_script_ran(tab: Any) -> None:
    assert tab.evaluate("window.pwned === undefined")
    assert tab.evaluate("document.scripts.length") == 0
    assert tab.evaluate("[...document.querySelectorAll('a')].every(a => a.getAttribute('href').startsWith('/'))")


def test_open_search_and_read_a_memory_with_its_history_and_facts(page: Any) -> None:
    assert page.url.endswith("/") and "token" not in page.url  # the token became a cookie
    page.fill("#search", "invoice PDF rendering")
    _submit(page, "#search-form button")
    hits = page.locator("#results tr.hit")
    found = [hits.nth(i).inner_text() for i in range(hits.count())]
    assert any("WeasyPrint" in row for row in found[:3]), found  # crib's ranking, with each hit's channels
    assert all(re.search(r"(fts|vector|facts|triples)\S* #\d+", row) for row in found), found
    page.goto(page.url.split("/?")[0] + "/memory/project/3")
    history = page.locator("#history").inner_text()
    assert "integer cents" in history and "Decimal" in history and "superseded by" in history
    page.goto(page.url.rsplit("/", 1)[0] + "/8")
    assert "sqlite" in page.locator("#facts").inner_text().lower()
    assert "write" in page.locator("#audit").inner_text()


def test_forget_after_confirming(page: Any, site: dict[str, Any]) -> None:
    page.goto(site["base"] + "/memory/project/7")
    _submit(page, "#forget-form button")
    assert "confirm: forget memory 7" in page.inner_text("h1")
    page.goto(site["base"] + "/memory/project/7")
    assert "staging cluster" in page.inner_text("#content")  # not confirmed: still there
    _submit(page, "#forget-form button")
    _submit(page, "#confirm")
    assert page.url.startswith(site["base"] + "/?scope=project")
    assert "staging cluster" not in page.inner_text("#results")
    assert page.goto(site["base"] + "/memory/project/7").status == 404


def test_a_sessions_injections_and_followed_pointers(page: Any, site: dict[str, Any]) -> None:
    page.goto(site["base"] + "/sessions")
    text = page.inner_text("main")
    assert "session s-browser" in text and PROMPT in text and "tokens" in text
    assert "entry 1 (in full)" in text and "found by" in text
    if site["pointers"]:
        assert f"pointer {site['pointers'][0]} — opened by the agent" in text


def test_hostile_cases(browser: Any, page: Any, site: dict[str, Any]) -> None:
    page.goto(site["base"] + "/memory/project/6")
    assert "<script>window.pwned=1</script>" in page.inner_text("#content")  # shown as text
    _no_script_ran(page)
    page.goto(site["base"] + "/?scope=project")
    _no_script_ran(page)

    stranger = browser.new_context()  # no token: nothing
    tab = stranger.new_page()
    assert tab.goto(site["base"] + "/").status == 401
    port = site["base"].rsplit(":", 1)[1]
    rebound = tab.goto(f"http://rebind.test:{port}/?" + site["url"].split("?", 1)[1])  # DNS rebinding: token and all
    assert rebound.status == 421
    stranger.close()

    csrf = page.locator("input[name=csrf]").first.get_attribute("value")
    evil = _serve_hostile_page(site["base"] + "/memory/project/5/forget", csrf)
    try:
        page.goto(evil.url)  # the same browser, logged in: a local page of another origin posts the form
        page.wait_for_url(re.compile(r"/forget$"), wait_until="load")  # its script's POST, answered
        assert "cross-origin request refused" in page.inner_text("body")
    finally:
        evil.stop()
    page.goto(site["base"] + "/memory/project/5")
    assert "06:00 UTC" in page.inner_text("#content")  # still there


class _Hostile:
    def __init__(self, server: http.server.HTTPServer) -> None:
        self.server = server
        self.url = f"http://127.0.0.1:{server.server_address[1]}/"
        threading.Thread(target=server.serve_forever, daemon=True).start()

    def stop(self) -> None:
        self.server.shutdown()
        self.server.server_close()


def _serve_hostile_page(target: str, csrf: str | None) -> _Hostile:
    """Another origin on loopback whose page posts a confirmed forget, with the right form token even."""
    html = (f'<form id="f" method="post" action="{target}"><input name="csrf" value="{csrf}">'
            f'<input name="confirm" value="yes"></form><script>document.getElementById("f").submit()</script>').encode()

    class Handler(http.server.BaseHTTPRequestHandler):
        def do_GET(self) -> None:  # noqa: N802
            self.send_response(200)
            self.send_header("content-type", "text/html")
            self.end_headers()
            self.wfile.write(html)

        def log_message(self, *args: Any) -> None:
            pass

    return _Hostile(http.server.HTTPServer(("127.0.0.1", 0), Handler))
