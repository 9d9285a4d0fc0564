"""``crib ui``'s protections and operations, without a browser (Starlette's TestClient): each
protection has a test that refuses what it must refuse (the browser tests repeat the main ones)."""

from __future__ import annotations

import re
from pathlib import Path
from typing import Any, Iterator

import pytest

pytest.importorskip("starlette")
pytest.importorskip("multipart")
from starlette.testclient import TestClient  # noqa: E402

from crib_plugin.hosts.ui.app import build_app  # noqa: E402
from crib_plugin.hosts.ui.security import CSP, Guard  # noqa: E402
from crib_plugin.hosts.ui.stores import Stores  # noqa: E402

PORT = 8765
ORIGIN = f"http://127.0.0.1:{PORT}"
HOSTILE = 'Use <script>window.pwned=1</script> and <img src=x onerror="window.pwned=2"> see [x](javascript:alert(1))'


@pytest.fixture
def stocked(memory: Any) -> dict[str, int]:
    ids = {
        "decision": memory.write("We chose SQLite for the local store", type="decision"),
        "hostile": memory.write(HOSTILE),
        "deploy": memory.write("Deploys go through the staging cluster first"),
    }
    return ids


@pytest.fixture
def guard() -> Guard:
    return Guard(port=PORT)


@pytest.fixture
def client(stocked: dict[str, int], guard: Guard) -> Iterator[TestClient]:
    stores = Stores()
    with TestClient(build_app(stores, guard), base_url=ORIGIN, follow_redirects=False) as c:
        yield c


def login(client: TestClient, guard: Guard) -> TestClient:
    response = client.get(f"/?token={guard.token}")
    assert response.status_code == 303 and response.headers["location"] == "/"
    assert f"{guard.cookie_name}={guard.token}" in response.headers["set-cookie"]
    assert "HttpOnly" in response.headers["set-cookie"] and "SameSite=Strict" in response.headers["set-cookie"]
    return client


def post(client: TestClient, url: str, data: dict[str, Any], origin: str | None = ORIGIN) -> Any:
    headers = {"origin": origin} if origin else {}
    return client.post(url, data=data, headers=headers)


def test_no_token_no_page(client: TestClient, guard: Guard) -> None:
    assert client.get("/").status_code == 401
    assert client.get("/memory/project/1").status_code == 401
    assert client.get("/?token=wrong").status_code == 401
    client.cookies.set(guard.cookie_name, "wrong")
    assert client.get("/").status_code == 401


def test_the_token_becomes_a_cookie_then_pages_open(client: TestClient, guard: Guard) -> None:
    login(client, guard)
    page = client.get("/")
    assert page.status_code == 200 and "We chose SQLite" in page.text


def test_wrong_host_is_refused(client: TestClient, guard: Guard) -> None:
    login(client, guard)
    assert client.get("/", headers={"host": f"evil.example:{PORT}"}).status_code == 421
    assert client.get("/", headers={"host": "127.0.0.1:1"}).status_code == 421
    assert client.get("/", headers={"host": f"localhost:{PORT}"}).status_code == 200


def test_cross_origin_requests_are_refused(client: TestClient, guard: Guard, stocked: dict[str, int]) -> None:
    login(client, guard)
    url = f"/memory/project/{stocked['decision']}/forget"
    data = {"csrf": guard.csrf, "confirm": "yes"}
    assert post(client, url, data, origin="http://evil.example").status_code == 403
    assert post(client, url, data, origin=f"http://127.0.0.1:{PORT + 1}").status_code == 403
    assert post(client, url, data, origin=None).status_code == 403  # a POST must say where it comes from
    assert client.get("/", headers={"origin": "http://evil.example"}).status_code == 403
    null = {"origin": "null", "sec-fetch-site": "cross-site"}  # a sandboxed frame, or a page under no-referrer elsewhere
    assert client.post(url, data=data, headers=null).status_code == 403
    assert client.post(url, data=data, headers={"origin": "null"}).status_code == 403
    assert "We chose SQLite" in client.get(f"/memory/project/{stocked['decision']}").text  # still there


def test_a_change_needs_the_form_token(client: TestClient, guard: Guard, stocked: dict[str, int]) -> None:
    login(client, guard)
    url = f"/memory/project/{stocked['decision']}/forget"
    assert post(client, url, {"confirm": "yes"}).status_code == 403
    assert post(client, url, {"confirm": "yes", "csrf": "x" + guard.csrf}).status_code == 403
    assert client.get(f"/memory/project/{stocked['decision']}").status_code == 200
    assert client.get(url).status_code == 405  # changes are POST only


def test_our_own_form_under_no_referrer_is_let_through(client: TestClient, guard: Guard, stocked: dict[str, int]) -> None:
    login(client, guard)
    same = {"origin": "null", "sec-fetch-site": "same-origin"}  # what Chromium sends for the viewer's own forms
    assert client.post(f"/memory/project/{stocked['deploy']}/forget", data={"csrf": guard.csrf}, headers=same).status_code == 200


def test_forget_asks_first_then_forgets_audited(client: TestClient, guard: Guard, stocked: dict[str, int], memory: Any) -> None:
    login(client, guard)
    url = f"/memory/project/{stocked['deploy']}/forget"
    preview = post(client, url, {"csrf": guard.csrf})
    assert preview.status_code == 200 and 'id="confirm"' in preview.text
    assert memory.store.get_entry(stocked["deploy"]) is not None  # the preview changed nothing
    done = post(client, url, {"csrf": guard.csrf, "confirm": "yes"})
    assert done.status_code == 303
    assert client.get(f"/memory/project/{stocked['deploy']}").status_code == 404
    rows = [r for r in memory.store.audit_rows(10, stocked["deploy"]) if r.action == "forget"]
    assert rows and rows[0].detail["reason"] == "ui"


def test_every_response_carries_the_security_headers(client: TestClient, guard: Guard) -> None:
    for response in (client.get("/"), login(client, guard).get("/"), client.get("/health"), client.get("/static/ui.css")):
        assert response.headers["content-security-policy"] == CSP
        assert response.headers["x-frame-options"] == "DENY"
        assert response.headers["referrer-policy"] == "no-referrer"
        assert response.headers["x-content-type-options"] == "nosniff"
    assert "script-src" not in CSP and "default-src 'none'" in CSP and "frame-ancestors 'none'" in CSP


def test_a_hostile_memory_is_inert(client: TestClient, guard: Guard, stocked: dict[str, int]) -> None:
    login(client, guard)
    pages = [client.get("/").text, client.get(f"/memory/project/{stocked['hostile']}").text,
             client.get("/?search=script+javascript").text]
    for html in pages:
        assert "<script" not in html.lower()
        assert "<img" not in html and "&lt;img src=x onerror=&#34;" in html  # the tag is text
        assert "&lt;script&gt;" in html
        hrefs = re.findall(r'href="([^"]*)"', html)
        assert hrefs and all(h.startswith("/") for h in hrefs), hrefs


def test_no_secret_is_shown_unredacted(client: TestClient, guard: Guard, memory: Any) -> None:
    secret = "ghp_" + "A1b2C3d4E5f6G7h8I9j0K1l2M3n4O5p6Q7r8"
    entry_id = memory.write("token for the bot is " + secret)
    with memory.store.transaction():  # as an older crib (before redaction) would have stored it
        memory.store.set_metadata(entry_id, {"source": "bot " + secret})
    login(client, guard)
    for html in (client.get("/").text, client.get(f"/memory/project/{entry_id}").text):
        assert secret not in html


def test_search_shows_channels_and_the_memory_page_its_history_and_facts(client: TestClient, guard: Guard,
                                                                          stocked: dict[str, int], memory: Any) -> None:
    login(client, guard)
    found = client.get("/?search=SQLite+local+store").text
    assert re.search(r'class="chan">fts #1', found)
    post(client, f"/memory/project/{stocked['decision']}/correct", {"csrf": guard.csrf, "value": "We chose PostgreSQL", "confirm": "yes"})
    page = client.get(f"/memory/project/{stocked['decision']}").text
    history = page.split('id="history"')[1].split("</ol>")[0]
    assert "We chose SQLite" in history and "We chose PostgreSQL" in history and "superseded by" in history
    facts = page.split('id="facts"')[1].split("</table>")[0]
    assert "sqlite" in facts.lower()
    audit = page.split('id="audit"')[1]
    assert "correct" in audit and "write" in audit


def test_cue_and_type_changes_are_confirmed_and_audited(client: TestClient, guard: Guard, stocked: dict[str, int], memory: Any) -> None:
    login(client, guard)
    url = f"/memory/project/{stocked['deploy']}"
    assert 'id="confirm"' in post(client, url + "/cue", {"csrf": guard.csrf, "value": "when deploying"}).text
    assert memory.store.get_entry(stocked["deploy"]).metadata.get("when") is None
    post(client, url + "/cue", {"csrf": guard.csrf, "value": "when deploying", "confirm": "yes"})
    assert "when deploying" in client.get(url).text
    moved = post(client, url + "/type", {"csrf": guard.csrf, "value": "decision", "confirm": "yes"})
    new_id = int(moved.headers["location"].rsplit("/", 1)[1])
    assert memory.store.get_entry(new_id).type == "decision"
    assert memory.store.entry_version(stocked["deploy"]).superseded_by == new_id
    assert {r.action for r in memory.store.audit_rows(20, stocked["deploy"])} >= {"cue", "correct", "retype"}


def test_forget_by_query_previews_then_forgets_the_checked(client: TestClient, guard: Guard, stocked: dict[str, int], memory: Any) -> None:
    login(client, guard)
    preview = post(client, "/forget", {"csrf": guard.csrf, "scope": "project", "query": "staging cluster"})
    assert f'value="{stocked["deploy"]}"' in preview.text and memory.store.get_entry(stocked["deploy"]) is not None
    post(client, "/forget", {"csrf": guard.csrf, "scope": "project", "query": "staging cluster", "confirm": "yes", "id": str(stocked["deploy"])})
    assert memory.store.get_entry(stocked["deploy"]) is None and memory.store.get_entry(stocked["decision"]) is not None


def test_list_filters(memory: Any, stocked: dict[str, int]) -> None:
    from crib_plugin.core.authorship import agent
    from crib_plugin.hosts.ui.stores import ManagedMemory
    from crib_plugin.read.ops import ListFilter

    with ManagedMemory(memory.path) as managed:
        assert [r["id"] for r in managed.list_memories(ListFilter(text="staging"))] == [stocked["deploy"]]
        assert [r["id"] for r in managed.list_memories(ListFilter(types=["decision"]))] == [stocked["decision"]]
        writer = agent()  # "cli" at a terminal, "ci" under CI=true
        assert managed.list_memories(ListFilter(author=writer)) and not managed.list_memories(ListFilter(author="nobody-such"))
        assert len(managed.list_memories(ListFilter(since="2999-01-01"))) == 0
        assert len(managed.list_memories(ListFilter(limit=2))) == 2


def test_the_first_line_of_crib_ui_is_its_url(db: Path) -> None:
    import subprocess
    import sys

    proc = subprocess.Popen([sys.executable, "-m", "crib_plugin", "ui", "--no-browser"], stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    try:
        line = proc.stdout.readline() if proc.stdout else ""
        assert re.fullmatch(r"http://127\.0\.0\.1:\d+/\?token=[\w-]{20,}\n", line), line
    finally:
        proc.terminate()
        proc.wait(timeout=10)


def test_it_listens_on_loopback_only() -> None:
    from crib_plugin.hosts.cli.ui import bind_loopback

    sock = bind_loopback(0)
    try:
        assert sock.getsockname()[0] == "127.0.0.1"
    finally:
        sock.close()


def test_without_the_extra_crib_ui_says_how_to_install_it(db: Path) -> None:
    import subprocess
    import sys

    code = ("import sys; sys.modules['uvicorn'] = None\n"
            "from crib_plugin.hosts.cli.hotpath import main; sys.argv = ['crib', 'ui', '--no-browser']; main()")
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=60)
    assert done.returncode == 1 and "pip install 'crib-plugin[ui]'" in done.stderr and "Traceback" not in done.stderr, done.stderr
