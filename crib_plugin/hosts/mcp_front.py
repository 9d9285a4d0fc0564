"""``crib mcp``: the MCP handshake answered at once, crib's server (the official SDK) behind it.

Importing the MCP SDK costs 1.3–1.5 s on a two-core machine (pydantic models for every protocol
version), and a server built on it answers ``initialize`` only after that. Claude Code in print mode
(``claude -p``, the agent loops built on it) connects MCP servers while the first turn starts: a
server that answers after the prompt hooks have run is missing from that turn's tools — the real CLI
session test (``tests/test_claude_cli_session.py``) lost crib's tools one run in six. So ``crib mcp``
is this small process, which imports neither the SDK nor the rest of crib:

* it starts the real server (``crib mcp --direct``, :mod:`crib_plugin.hosts.mcp_server`) at once,
  as a child, which imports the SDK while the client is still starting;
* it answers ``initialize``, ``tools/list`` and the other lists a client asks for on connecting
  (prompts, resources, resource templates: an MCP client may wait for all of them before it
  offers any tool) itself from the **manifest** the server reported last time (its ``initialize``
  result, those lists and its protocol versions), cached in crib's cache
  directory under the key of the entry-point cache (interpreter, crib version, installed packages:
  a plugin that adds an entry type changes ``remember``'s description), else from the manifest
  shipped beside this module (``mcp_manifest.json``, crib's own server with no plugin; a test keeps
  it equal to what ``crib mcp --direct`` answers). With neither it relays the child's own answers,
  as a plain server would;
* it forwards every other message to the child once the child's handshake is done, and every
  message of the child back;
* once the child is up it asks for the child's tool list, stores it as the new manifest, and when it
  differs from what the client was told sends ``notifications/tools/list_changed``, so a stale
  manifest costs one refresh, never a wrong tool.

Requests the child can no longer answer (it exited) get a JSON-RPC error naming ``crib.log``. End of
input, SIGINT and SIGTERM end both processes with status 0.
"""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import threading
from dataclasses import dataclass, field
from pathlib import Path
from typing import IO, Any

from ..core.config import cache_dir
from ..core.faillog import log_failure
from ..plugins.cache import cache_key

MANIFEST_FILE = "mcp-manifest.json"
SHIPPED = Path(__file__).with_name("mcp_manifest.json")
FRONT_INIT = "crib-front-initialize"
FRONT_TOOLS = "crib-front-tools"
CHILD_GONE = -32603
Message = dict[str, Any]


def manifest_path() -> Path:
    return Path(cache_dir()) / MANIFEST_FILE


def read_manifest(key: dict[str, Any]) -> tuple[dict[str, Any] | None, bool]:
    """The cached manifest for ``key``, else the shipped one, else None (missing, unreadable,
    malformed); and whether it was the cached one."""
    for path, wanted in ((manifest_path(), key), (SHIPPED, None)):
        try:
            data = json.loads(path.read_text(encoding="utf-8"))
        except (OSError, ValueError):
            continue
        if isinstance(data, dict) and data.get("key") == wanted and isinstance(data.get("initialize"), dict) \
                and isinstance(data.get("tools"), list) and isinstance(data.get("versions"), list) \
                and isinstance(data.get("latest"), str) and isinstance(data.get("lists"), dict):
            return {**data, "key": key}, wanted is not None
    return None, False


def write_manifest(manifest: dict[str, Any]) -> None:
    """Store ``manifest`` atomically; a cache that cannot be written is ignored."""
    path = manifest_path()
    try:
        path.parent.mkdir(parents=True, exist_ok=True)
        temp = path.with_name(f"{path.name}.{os.getpid()}.tmp")
        temp.write_text(json.dumps(manifest), encoding="utf-8")
        os.replace(temp, path)
    except OSError:
        pass


@dataclass
class Front:
    """One client session: the client on ``out`` (and the caller's input), the server as ``child``."""

    child: subprocess.Popen[bytes]
    out: IO[str]
    key: dict[str, Any]
    manifest: dict[str, Any] | None
    cached: bool = False  # ``manifest`` is this key's cache entry (not the shipped one)
    answered_tools: list[Any] | None = None  # the tool list this front gave the client itself
    fronted: bool = False  # this front answered the client's initialize (from the manifest)
    ready: bool = False  # the child's handshake is done: forward at once
    gone: bool = False  # the child exited: every request is answered with an error
    queued: list[Message] = field(default_factory=list)
    pending: set[Any] = field(default_factory=set)  # ids of client requests the child has not answered
    init_params: dict[str, Any] = field(default_factory=dict)
    lock: threading.Lock = field(default_factory=threading.Lock)  # the client's stream, ``pending``
    child_lock: threading.RLock = field(default_factory=threading.RLock)  # the child's stream, ``ready``, ``queued``

    # -- the client's messages ----------------------------------------------------------------------

    def from_client(self, message: Message) -> None:
        method, ident = message.get("method"), message.get("id")
        if method == "initialize":
            self.init_params = message.get("params") or {}
            if self.manifest is not None:
                self.fronted = True
                result, asked = self.manifest["initialize"], self.init_params.get("protocolVersion")
                capabilities = {**result.get("capabilities", {}), "tools": {"listChanged": True}}  # a stale list is refreshed
                version = asked if asked in self.manifest["versions"] else self.manifest["latest"]  # the SDK's own rule
                self.send({"jsonrpc": "2.0", "id": ident,
                           "result": {**result, "protocolVersion": version, "capabilities": capabilities}})
                self.to_child({"jsonrpc": "2.0", "id": FRONT_INIT, "method": "initialize", "params": self.init_params})
            else:  # no manifest: the child answers, as a plain server would
                with self.lock:
                    self.pending.add(ident)
                self.to_child(message)
            return
        if method == "notifications/initialized":
            if not self.fronted:  # the child's own handshake is done: now it may be asked for its tools
                self.to_child(message)
                self.to_child({"jsonrpc": "2.0", "id": FRONT_TOOLS, "method": "tools/list"})
            return  # fronted: the front sends the child its own, after the child's answer
        if method == "ping" and ident is not None:
            self.send({"jsonrpc": "2.0", "id": ident, "result": {}})
            return
        if ident is not None and self.fronted and self.manifest is not None and not self.ready:
            if method == "tools/list":
                self.answered_tools = self.manifest["tools"]
                self.send({"jsonrpc": "2.0", "id": ident, "result": {"tools": self.answered_tools}})
                return
            if method in self.manifest["lists"] and not (message.get("params") or {}).get("cursor"):
                self.send({"jsonrpc": "2.0", "id": ident, "result": self.manifest["lists"][method]})
                return
        self.forward(message)

    def forward(self, message: Message) -> None:
        """To the child now, or, while the child's handshake with this front is not done, once it is."""
        if "method" in message and "id" in message:
            with self.lock:
                self.pending.add(message["id"])
        with self.child_lock:
            if self.fronted and not self.ready and not self.gone:
                self.queued.append(message)
                return
        self.to_child(message)

    # -- the child's messages -----------------------------------------------------------------------

    def from_child(self, message: Message) -> None:
        ident = message.get("id")
        if ident == FRONT_INIT and "method" not in message:
            result = message.get("result")
            if isinstance(result, dict) and self.manifest is not None:  # what the server says of itself now
                self.manifest["initialize"] = {k: v for k, v in result.items() if k != "protocolVersion"}
            self.child_ready()
            return
        if ident == FRONT_TOOLS and "method" not in message:
            self.tools_known(message.get("result") or {})
            return
        if "method" not in message:
            with self.lock:
                self.pending.discard(ident)
            if not self.fronted and self.manifest is None and isinstance(message.get("result"), dict) \
                    and "capabilities" in message["result"]:
                self.child_initialized(message["result"])
        self.send(message)

    def child_initialized(self, result: dict[str, Any]) -> None:
        """The child answered the client's own ``initialize``: the start of a manifest (its tools are
        asked for once the client's ``initialized`` has reached the child)."""
        version = str(result.get("protocolVersion", ""))
        initialize = {k: v for k, v in result.items() if k != "protocolVersion"}
        self.manifest = {"key": self.key, "versions": [version], "latest": version, "initialize": initialize, "tools": [],
                         "lists": {}}  # learnt without the other lists: the next start answers only these itself
        self.ready = True

    def child_ready(self) -> None:
        """The child answered the front's ``initialize``: finish its handshake, then send what waited."""
        with self.child_lock:
            self.to_child({"jsonrpc": "2.0", "method": "notifications/initialized"})
            self.to_child({"jsonrpc": "2.0", "id": FRONT_TOOLS, "method": "tools/list"})
            self.ready = True
            queued, self.queued = self.queued, []
            for message in queued:
                self.to_child(message)

    def tools_known(self, result: dict[str, Any]) -> None:
        """The child's own tool list: the new manifest; the client told again when it was told otherwise."""
        tools = result.get("tools")
        if not isinstance(tools, list) or self.manifest is None:
            return
        changed = self.answered_tools is not None and tools != self.answered_tools
        if tools != self.manifest.get("tools") or not self.cached:
            write_manifest({**self.manifest, "tools": tools})
        if changed:
            self.send({"jsonrpc": "2.0", "method": "notifications/tools/list_changed"})

    def child_gone(self) -> None:
        """The child exited: every request it had not answered gets an error, and so does each later one."""
        with self.child_lock, self.lock:
            self.gone = True
            orphans, self.pending = self.pending, set()
            self.queued = []
        for ident in orphans:
            self.fail(ident)

    def fail(self, ident: Any) -> None:
        self.send({"jsonrpc": "2.0", "id": ident, "error": {
            "code": CHILD_GONE, "message": "crib's MCP server stopped; `crib doctor` says why (details in crib.log)"}})

    # -- the two streams ----------------------------------------------------------------------------

    def send(self, message: Message) -> None:
        with self.lock:
            self.out.write(json.dumps(message, ensure_ascii=False) + "\n")
            self.out.flush()

    def to_child(self, message: Message) -> None:
        if self.gone or self.child.poll() is not None:
            if "method" in message and "id" in message and message["id"] not in (FRONT_INIT, FRONT_TOOLS):
                with self.lock:
                    self.pending.discard(message["id"])
                self.fail(message["id"])
            return
        try:
            assert self.child.stdin is not None
            with self.child_lock:
                self.child.stdin.write((json.dumps(message) + "\n").encode("utf-8"))
                self.child.stdin.flush()
        except (OSError, ValueError):  # the child is gone: its reader thread reports it
            pass

    def read_child(self) -> None:
        """The child's output, line by line, until it ends (run in a thread)."""
        assert self.child.stdout is not None
        for line in self.child.stdout:
            try:
                message = json.loads(line)
            except ValueError:
                continue
            if isinstance(message, dict):
                self.from_child(message)
        self.child.wait()
        self.child_gone()


def child_command() -> list[str]:
    """The real server: this interpreter running ``crib mcp --direct``."""
    return [sys.executable, "-m", "crib_plugin", "mcp", "--direct"]


def serve(source: IO[str], out: IO[str], command: list[str] | None = None) -> int:
    """Front the server for the client on ``source``/``out`` until end of input; returns 0."""
    key = cache_key()
    child = subprocess.Popen(command or child_command(), stdin=subprocess.PIPE, stdout=subprocess.PIPE)
    manifest, cached = read_manifest(key)
    front = Front(child=child, out=out, key=key, manifest=manifest, cached=cached)

    def leave(_signum: int, _frame: Any) -> None:
        child.terminate()
        os._exit(0)

    if threading.current_thread() is threading.main_thread():
        for signum in (signal.SIGINT, signal.SIGTERM):
            signal.signal(signum, leave)
    reader = threading.Thread(target=front.read_child, name="crib-mcp-child", daemon=True)
    reader.start()
    try:
        for line in source:
            if not line.strip():
                continue
            try:
                message = json.loads(line)
            except ValueError:
                front.send({"jsonrpc": "2.0", "id": None, "error": {"code": -32700, "message": "parse error"}})
                continue
            if isinstance(message, dict):
                front.from_client(message)
    except Exception as exc:  # noqa: BLE001 - a front that fails says so in crib.log, never a traceback
        log_failure("mcp front", exc)
    finally:
        if child.stdin is not None:
            child.stdin.close()
        try:
            child.wait(timeout=5)
        except subprocess.TimeoutExpired:
            child.kill()
        reader.join(timeout=5)
    return 0


def main() -> None:
    """``crib mcp``: serve stdin/stdout through the front."""
    sys.exit(serve(sys.stdin, sys.stdout))
