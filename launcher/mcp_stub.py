"""crib's MCP stand-in while the plugin installs its environment (stdlib only, Python >= 3.8).

``bin/crib mcp`` runs it when crib's own environment is not installed yet (or cannot be: no Python
>= 3.10), so an MCP client gets its ``initialize`` answer at once instead of timing out behind a
pip install. It speaks just enough of MCP over stdio (newline-delimited JSON-RPC 2.0):

* ``initialize`` and ``ping`` are answered here;
* ``tools/list`` returns crib's real tool list, read from the manifest crib ships
  (``crib_plugin/hosts/mcp_manifest.json`` in the plugin; a test keeps it equal to what ``crib mcp``
  lists), so the model knows the tools from the start;
* ``tools/call`` returns a tool error saying crib is still installing (or why it cannot), until the
  environment is ready — then this process starts the real server (``bin/crib mcp``), replays the
  client's ``initialize`` to it, and forwards every later message both ways, so the session that
  began during the install gets working tools without a restart.

It exits cleanly (status 0) on end of input, SIGINT and SIGTERM.

Usage: ``python3 mcp_stub.py <path of bin/crib> <plugin data folder>``.
"""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
from typing import Any, Dict, List, Optional

HERE = os.path.dirname(os.path.abspath(__file__))
KNOWN_VERSIONS = ("2024-11-05", "2025-03-26", "2025-06-18", "2025-11-25")


class Stub:
    """One client session: answers while installing, proxies to the real server once installed."""

    def __init__(self, launcher: str, data: str) -> None:
        self.launcher = launcher
        self.data = data
        self.init_params: Dict[str, Any] = {}
        self.child: Optional[subprocess.Popen] = None  # type: ignore[type-arg]

    # -- state of the install --------------------------------------------------------------------

    def ready(self) -> bool:
        return os.path.isfile(os.path.join(self.data, "venv", ".crib-installed"))

    def _read(self, name: str) -> str:
        try:
            with open(os.path.join(self.data, name), encoding="utf-8", errors="replace") as handle:
                return handle.read()
        except OSError:
            return ""

    def not_ready_message(self) -> str:
        log = os.path.join(self.data, "install.log")
        missing = self._read("python-missing")
        if missing:
            return "\n".join(missing.splitlines()[1:]).strip()
        if self._read("install.failed") and not os.path.islink(os.path.join(self.data, "install.lock")):
            return (f"crib could not install its Python environment; see {log} (the next session start, or running "
                    "`crib list` in the Bash tool, tries again).")
        return ("crib is still installing (first use: it sets up its Python environment, usually a minute or two; "
                f"progress in {log}). Try again in a moment.")

    # -- the real server --------------------------------------------------------------------------

    def start_child(self) -> bool:
        """Start ``bin/crib mcp`` and replay the handshake; False when it does not answer."""
        try:
            self.child = subprocess.Popen([self.launcher, "mcp"], stdin=subprocess.PIPE, stdout=subprocess.PIPE)
        except OSError:
            return False
        self._to_child({"jsonrpc": "2.0", "id": "crib-stub-init", "method": "initialize", "params": self.init_params})
        reply = self._until_response("crib-stub-init")
        if reply is None or "error" in reply:
            self.stop_child()
            return False
        self._to_child({"jsonrpc": "2.0", "method": "notifications/initialized"})
        return True

    def _to_child(self, message: Dict[str, Any]) -> None:
        assert self.child is not None and self.child.stdin is not None
        self.child.stdin.write((json.dumps(message) + "\n").encode("utf-8"))
        self.child.stdin.flush()

    def _until_response(self, ident: Any) -> Optional[Dict[str, Any]]:
        """Read the child's messages until the response to ``ident``, passing others to the client."""
        assert self.child is not None and self.child.stdout is not None
        while True:
            line = self.child.stdout.readline()
            if not line:
                return None
            try:
                message = json.loads(line)
            except ValueError:
                continue
            if isinstance(message, dict) and message.get("id") == ident and "method" not in message:
                return message
            if isinstance(message, dict) and "method" in message and ident != "crib-stub-init":
                send(message)  # a notification or request of the server: the client's to see

    def forward(self, message: Dict[str, Any]) -> bool:
        """Send a client message to the real server (and its response back); False if it is gone."""
        if self.child is None and not self.start_child():
            return False
        try:
            self._to_child(message)
        except (OSError, ValueError):
            self.stop_child()
            return False
        if "id" in message and "method" in message:
            reply = self._until_response(message["id"])
            if reply is None:
                self.stop_child()
                return False
            send(reply)
        return True

    def stop_child(self) -> None:
        if self.child is not None:
            try:
                self.child.stdin.close()  # type: ignore[union-attr]
                self.child.wait(timeout=5)
            except Exception:  # noqa: BLE001 - a server that does not stop is killed
                self.child.kill()
            self.child = None

    # -- one message ------------------------------------------------------------------------------

    def handle(self, message: Dict[str, Any]) -> None:
        method = message.get("method")
        ident = message.get("id")
        if method == "initialize":
            self.init_params = message.get("params") or {}
            asked = self.init_params.get("protocolVersion")
            send({"jsonrpc": "2.0", "id": ident, "result": {
                "protocolVersion": asked if asked in KNOWN_VERSIONS else KNOWN_VERSIONS[-1],
                "capabilities": {"tools": {"listChanged": False}},
                "serverInfo": {"name": "crib", "title": "crib memory", "version": "installing"},
                "instructions": "crib is persistent memory for this project; " + self.not_ready_message(),
            }})
            return
        if method in ("notifications/initialized", None) and ident is None:
            return
        if method == "ping":
            send({"jsonrpc": "2.0", "id": ident, "result": {}})
            return
        if self.child is not None or (method in ("tools/call", "tools/list") and self.ready()):
            if self.forward(message):
                return
        if ident is None:  # a notification (cancelled, progress…): nothing to answer
            return
        if method == "tools/list":
            send({"jsonrpc": "2.0", "id": ident, "result": {"tools": static_tools()}})
        elif method == "tools/call":
            send({"jsonrpc": "2.0", "id": ident, "result": {
                "content": [{"type": "text", "text": self.not_ready_message()}], "isError": True}})
        else:
            send({"jsonrpc": "2.0", "id": ident, "error": {"code": -32601, "message": f"method not found: {method}"}})


MANIFEST = os.path.join(os.path.dirname(HERE), "crib_plugin", "hosts", "mcp_manifest.json")


def static_tools() -> List[Dict[str, Any]]:
    try:
        with open(MANIFEST, encoding="utf-8") as handle:
            tools = json.load(handle).get("tools")
        return tools if isinstance(tools, list) else []
    except (OSError, ValueError, AttributeError):
        return []


def send(message: Dict[str, Any]) -> None:
    sys.stdout.write(json.dumps(message, ensure_ascii=False) + "\n")
    sys.stdout.flush()


def main(argv: List[str]) -> int:
    if len(argv) != 3:
        sys.stderr.write("usage: mcp_stub.py <bin/crib> <plugin data folder>\n")
        return 2
    stub = Stub(argv[1], argv[2])

    def leave(signum: int, frame: Any) -> None:
        stub.stop_child()
        os._exit(0)

    signal.signal(signal.SIGTERM, leave)
    signal.signal(signal.SIGINT, leave)
    for line in sys.stdin:
        if not line.strip():
            continue
        try:
            message = json.loads(line)
        except ValueError:
            send({"jsonrpc": "2.0", "id": None, "error": {"code": -32700, "message": "parse error"}})
            continue
        if isinstance(message, dict):
            stub.handle(message)
    stub.stop_child()
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))
