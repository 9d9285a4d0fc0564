"""``crib mcp``'s front (crib_plugin/hosts/mcp_front.py): the handshake and the tool list answered from
a manifest before the MCP SDK has loaded, everything else relayed to the real server, a stale
manifest corrected, a dead server reported — and the shipped manifest equal to what the real server
(``crib mcp --direct``) answers.

The client side is raw newline-delimited JSON-RPC over the front's pipes, as an MCP client speaks it.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
import threading
import time
from pathlib import Path
from typing import Any

import pytest

from crib_plugin.hosts import mcp_front

ROOT = Path(__file__).resolve().parent.parent
INIT = {"jsonrpc": "2.0", "id": 1, "method": "initialize",
        "params": {"protocolVersion": "2025-06-18", "capabilities": {}, "clientInfo": {"name": "test", "version": "1"}}}
INITIALIZED = {"jsonrpc": "2.0", "method": "notifications/initialized"}
LIST = {"jsonrpc": "2.0", "id": 2, "method": "tools/list"}
LISTS = ("prompts/list", "resources/list", "resources/templates/list")
NEVER_ANSWERS = [sys.executable, "-c", "import sys, time; sys.stdin.read(); time.sleep(30)"]  # a server stuck loading


WAIT = 60.0
"""Seconds a client waits for one message before it stops the process (the test then fails, never hangs)."""


class Client:
    """A raw MCP client on a process's stdin/stdout.

    Responses may come in any order (the server runs requests concurrently): one that arrives while
    the client waits for another is kept for the :meth:`until` that asks for it."""

    def __init__(self, command: list[str], env: dict[str, str] | None = None) -> None:
        self.proc = subprocess.Popen(command, stdin=subprocess.PIPE, stdout=subprocess.PIPE, text=True,
                                     env=env, cwd=str(ROOT))
        self.answers: dict[Any, dict[str, Any]] = {}  # responses that came before they were waited for

    def send(self, *messages: dict[str, Any]) -> None:
        assert self.proc.stdin is not None
        for message in messages:
            self.proc.stdin.write(json.dumps(message) + "\n")
        self.proc.stdin.flush()

    def receive(self) -> dict[str, Any]:
        assert self.proc.stdout is not None
        watchdog = threading.Timer(WAIT, self.proc.kill)  # a lost answer fails the test instead of hanging it
        watchdog.start()
        try:
            line = self.proc.stdout.readline()
        finally:
            watchdog.cancel()
        assert line, f"the server closed its output (or sent nothing for {WAIT:g} s)"
        return json.loads(line)

    def until(self, ident: Any) -> tuple[dict[str, Any], list[dict[str, Any]]]:
        """The response to ``ident``, and the other messages that came before it (responses to other
        requests are also kept for their own :meth:`until`)."""
        seen = []
        while ident not in self.answers:
            message = self.receive()
            if "id" in message and "method" not in message:
                self.answers[message["id"]] = message
                if message["id"] == ident:
                    break
            seen.append(message)
        return self.answers.pop(ident), seen

    def close(self) -> int:
        assert self.proc.stdin is not None
        self.proc.stdin.close()
        return self.proc.wait(timeout=30)


def front(env_extra: dict[str, str] | None = None, child: list[str] | None = None) -> Client:
    """``crib mcp`` (the front), or a front over ``child`` instead of the real server."""
    env = {**os.environ, **(env_extra or {})}
    if child is None:
        return Client([sys.executable, "-m", "crib_plugin", "mcp"], env)
    code = f"import sys; from crib_plugin.hosts.mcp_front import serve; sys.exit(serve(sys.stdin, sys.stdout, {child!r}))"
    return Client([sys.executable, "-c", code], env)


def live() -> tuple[dict[str, Any], list[dict[str, Any]], dict[str, Any]]:
    """What the real server answers, without the front: its initialize result, its tools and its other lists."""
    server = Client([sys.executable, "-m", "crib_plugin", "mcp", "--direct"])
    server.send(INIT)
    init, _ = server.until(1)
    server.send(INITIALIZED, LIST, *({"jsonrpc": "2.0", "id": method, "method": method} for method in LISTS))
    tools, _ = server.until(2)
    lists = {method: server.until(method)[0]["result"] for method in LISTS}
    assert server.close() == 0
    return init["result"], tools["result"]["tools"], lists


def shipped() -> dict[str, Any]:
    return json.loads(mcp_front.SHIPPED.read_text(encoding="utf-8"))


def test_the_shipped_manifest_is_what_the_real_server_answers() -> None:
    """After changing a tool, regenerate it: WRITE_MCP_MANIFEST=1 python -m pytest tests/test_mcp_front.py -k shipped."""
    from mcp_types.version import HANDSHAKE_PROTOCOL_VERSIONS, LATEST_HANDSHAKE_VERSION

    result, tools, lists = live()
    manifest = {"key": None, "versions": list(HANDSHAKE_PROTOCOL_VERSIONS), "latest": LATEST_HANDSHAKE_VERSION,
                "initialize": {k: v for k, v in result.items() if k != "protocolVersion"}, "tools": tools, "lists": lists}
    if os.environ.get("WRITE_MCP_MANIFEST") == "1":
        mcp_front.SHIPPED.write_text(json.dumps(manifest, indent=1) + "\n", encoding="utf-8")
    assert shipped() == manifest
    assert result["protocolVersion"] == INIT["params"]["protocolVersion"]  # type: ignore[index]


def test_the_front_answers_the_handshake_and_the_tools_before_the_server_has_loaded() -> None:
    client = front(child=NEVER_ANSWERS)
    client.send(INIT)
    init, _ = client.until(1)
    client.send(INITIALIZED, LIST, *({"jsonrpc": "2.0", "id": method, "method": method} for method in LISTS))
    tools, _ = client.until(2)
    manifest = shipped()
    assert {method: client.until(method)[0]["result"] for method in LISTS} == manifest["lists"]
    assert init["result"]["protocolVersion"] == "2025-06-18" and init["result"]["serverInfo"]["name"] == "crib"
    assert init["result"]["capabilities"]["tools"] == {"listChanged": True}  # a stale list can be refreshed
    assert init["result"]["instructions"] == manifest["initialize"]["instructions"]
    assert tools["result"]["tools"] == manifest["tools"]
    client.proc.kill()


def test_an_unknown_protocol_version_gets_the_newest_the_server_speaks() -> None:
    client = front(child=NEVER_ANSWERS)
    client.send({**INIT, "params": {**INIT["params"], "protocolVersion": "1999-01-01"}})  # type: ignore[dict-item]
    init, _ = client.until(1)
    assert init["result"]["protocolVersion"] == shipped()["latest"]
    client.proc.kill()


def test_calls_reach_the_real_server_and_its_manifest_is_cached(tmp_path: Path) -> None:
    cache = tmp_path / "cache"
    env = {"CRIB_CACHE_DIR": str(cache)}
    client = front(env)
    client.send(INIT, INITIALIZED,
                {"jsonrpc": "2.0", "id": 3, "method": "tools/call", "params": {"name": "remember",
                 "arguments": {"text": "Chose SQLite for storage.", "type": "decision"}}})
    stored, _ = client.until(3)  # before asking to show it: the server runs two calls side by side
    client.send({"jsonrpc": "2.0", "id": 4, "method": "tools/call", "params": {"name": "show", "arguments": {"id": 1}}})
    shown, _ = client.until(4)
    assert stored["result"]["isError"] is False and json.loads(stored["result"]["content"][0]["text"])["id"] == 1
    assert "Chose SQLite for storage." in shown["result"]["content"][0]["text"]
    assert client.close() == 0
    cached = json.loads((cache / mcp_front.MANIFEST_FILE).read_text())
    assert cached["tools"] == shipped()["tools"] and cached["key"] is not None  # this interpreter's entry


def test_a_stale_manifest_is_corrected_and_the_client_told(tmp_path: Path) -> None:
    cache = tmp_path / "cache"
    env = {"CRIB_CACHE_DIR": str(cache)}
    key = json.loads(subprocess.run([sys.executable, "-c", "import json; from crib_plugin.plugins.cache import cache_key; "
                                     "print(json.dumps(cache_key()))"], capture_output=True, text=True, check=True,
                                    env={**os.environ, **env}, cwd=str(ROOT)).stdout)
    stale = {**shipped(), "key": key, "tools": [{"name": "gone", "inputSchema": {"type": "object"}}]}
    cache.mkdir()
    (cache / mcp_front.MANIFEST_FILE).write_text(json.dumps(stale))
    client = front(env)
    client.send(INIT)
    client.until(1)
    client.send(INITIALIZED, LIST)
    tools, _ = client.until(2)
    assert [t["name"] for t in tools["result"]["tools"]] == ["gone"]  # answered from the (stale) cache
    message = client.receive()  # once the real server is up
    assert message == {"jsonrpc": "2.0", "method": "notifications/tools/list_changed"}
    client.send({**LIST, "id": 5})
    fresh, _ = client.until(5)
    assert fresh["result"]["tools"] == shipped()["tools"]
    assert client.close() == 0
    assert json.loads((cache / mcp_front.MANIFEST_FILE).read_text())["tools"] == shipped()["tools"]


def test_without_any_manifest_the_real_servers_answers_are_relayed(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    expected = shipped()["tools"]
    monkeypatch.setattr(mcp_front, "SHIPPED", tmp_path / "missing.json")
    assert mcp_front.read_manifest({"any": "key"}) == (None, False)
    env = {"CRIB_CACHE_DIR": str(tmp_path / "cache")}
    code = ("import sys, pathlib; from crib_plugin.hosts import mcp_front; "
            f"mcp_front.SHIPPED = pathlib.Path({str(tmp_path / 'missing.json')!r}); sys.exit(mcp_front.serve(sys.stdin, sys.stdout))")
    client = Client([sys.executable, "-c", code], {**os.environ, **env})
    client.send(INIT)
    init, _ = client.until(1)
    assert init["result"]["capabilities"]["tools"] == {"listChanged": False}  # the server's own answer
    client.send(INITIALIZED, LIST)
    tools, _ = client.until(2)
    assert tools["result"]["tools"] == expected
    assert client.close() == 0
    assert (tmp_path / "cache" / mcp_front.MANIFEST_FILE).exists()  # learnt for next time


def test_a_server_that_dies_gets_each_request_an_error_and_the_front_still_ends_cleanly() -> None:
    client = front(child=[sys.executable, "-c", "import sys; sys.stdin.readline()"])  # reads the handshake, exits
    client.send(INIT)
    client.until(1)
    time.sleep(0.5)
    client.send(INITIALIZED, {"jsonrpc": "2.0", "id": 7, "method": "tools/call", "params": {"name": "recall", "arguments": {"query": "x"}}})
    failed, _ = client.until(7)
    assert failed["error"]["code"] == mcp_front.CHILD_GONE and "crib doctor" in failed["error"]["message"]
    assert client.close() == 0
