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

One bad message never stops it (:func:`screen`): a line that is not JSON, or nests deeper than
:data:`MAX_DEPTH`, or is not one JSON-RPC object, gets a JSON-RPC error (with the request's id when
it can be read) and is not forwarded; a lone surrogate in a string is replaced by U+FFFD before the
child sees it; a failure handling one message is logged and answered, and the next is served.
"""

from __future__ import annotations

import io
import json
import os
import re
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
PARSE_ERROR, INVALID_REQUEST, INTERNAL_ERROR = -32700, -32600, -32603
MAX_DEPTH = 64
"""Deepest nesting of arrays and objects a client message may have: crib's tools take flat
arguments, and the SDK behind the front (or Python's own ``json``) fails on a few hundred levels."""
Message = dict[str, Any]
_SURROGATE_ESCAPE = re.compile(r"\\u[dD][89abcdefABCDEF]")
_LEADING_ID = re.compile(r'^\s*\{[^{\[]*?"id"\s*:\s*(-?\d{1,18}|"(?:[^"\\]|\\.){0,200}")')


class BadMessage(ValueError):
    """A client line the front answers with a JSON-RPC error itself: ``code``, ``message``, the request's id."""

    def __init__(self, code: int, message: str, ident: Any = None) -> None:
        super().__init__(message)
        self.code, self.ident = code, ident


def _depth_over(value: Any, limit: int) -> bool:
    """Whether ``value`` nests arrays/objects deeper than ``limit`` (iterative: no recursion)."""
    stack: list[tuple[Any, int]] = [(value, 1)]
    while stack:
        item, depth = stack.pop()
        children = item.values() if isinstance(item, dict) else item if isinstance(item, list) else None
        if children is None:
            continue
        if depth > limit:
            return True
        stack.extend((child, depth + 1) for child in children)
    return False


def _whole(value: Any) -> Any:
    """``value`` with every lone surrogate in its strings (and keys) replaced by U+FFFD."""
    if isinstance(value, str):
        return value.encode("utf-16", "surrogatepass").decode("utf-16", "replace")
    if isinstance(value, list):
        return [_whole(v) for v in value]
    if isinstance(value, dict):
        return {_whole(k): _whole(v) for k, v in value.items()}
    return value


def _leading_id(line: str) -> Any:
    """The request's id when a line that cannot be parsed starts like a JSON-RPC request, else None."""
    found = _LEADING_ID.match(line[:4096])
    if found is None:
        return None
    try:
        return json.loads(found.group(1))
    except ValueError:
        return None


def screen(line: str) -> Message:
    """One client line as a JSON-RPC message, or :class:`BadMessage` saying what is wrong with it."""
    try:
        message = json.loads(line)
    except (ValueError, RecursionError):  # RecursionError: Python's json on ~1,000 nested levels
        raise BadMessage(PARSE_ERROR, "parse error: not a JSON document (or nested too deeply)", _leading_id(line)) from None
    if not isinstance(message, dict):
        raise BadMessage(INVALID_REQUEST, "invalid request: a JSON-RPC message is one JSON object")
    ident = message.get("id")
    if ident is not None and not isinstance(ident, (str, int)) or isinstance(ident, bool):
        raise BadMessage(INVALID_REQUEST, "invalid request: id must be a string or an integer")
    if "method" in message and not isinstance(message["method"], str):
        raise BadMessage(INVALID_REQUEST, "invalid request: method must be a string", ident)
    if _depth_over(message, MAX_DEPTH):
        raise BadMessage(INVALID_REQUEST, f"invalid request: nested more than {MAX_DEPTH} levels deep", ident)
    if _SURROGATE_ESCAPE.search(line):
        message = _whole(message)
    return message


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
        try:
            text = json.dumps(message, ensure_ascii=False)
            text.encode("utf-8")
        except UnicodeEncodeError:  # a lone surrogate: escaped, so the line stays valid UTF-8
            text = json.dumps(message)
        with self.lock:
            self.out.write(text + "\n")
            self.out.flush()

    def refuse(self, ident: Any, code: int, text: str) -> None:
        """A JSON-RPC error for one request (``ident`` None: the request's id could not be read)."""
        self.send({"jsonrpc": "2.0", "id": ident, "error": {"code": code, "message": text}})

    def handle(self, line: str) -> None:
        """One line from the client: answered or forwarded; whatever goes wrong is answered, never raised."""
        ident = None
        try:
            message = screen(line)
            ident = message.get("id") if "method" in message else None
            self.from_client(message)
        except BadMessage as exc:
            self.refuse(exc.ident, exc.code, str(exc))
        except Exception as exc:  # noqa: BLE001 - one bad message never stops the server
            log_failure("mcp front", exc)
            if ident is not None:
                with self.lock:
                    self.pending.discard(ident)
                self.refuse(ident, INTERNAL_ERROR, f"crib could not handle this request: {type(exc).__name__} (details in crib.log)")

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
                if isinstance(message, dict):
                    self.from_child(message)
            except Exception as exc:  # noqa: BLE001 - one bad message never stops the relay
                log_failure("mcp front (from the server)", exc)
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
            if line.strip():
                front.handle(line)
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
    """``crib mcp``: serve stdin/stdout through the front. Bytes that are not UTF-8 are read as
    U+FFFD (the line is then answered, or refused, like any other), never a decoding error."""
    source = io.TextIOWrapper(sys.stdin.buffer, encoding="utf-8", errors="replace") if hasattr(sys.stdin, "buffer") else sys.stdin
    sys.exit(serve(source, sys.stdout))
