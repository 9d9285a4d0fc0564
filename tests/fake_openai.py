"""A loopback stand-in for an OpenAI-compatible chat completions API: enough for an agent to run turns.

``POST /v1/chat/completions`` (and ``/chat/completions``) answers from a script the test sets: a
callable of the request body returning either a string (the assistant's text) or a dict
``{"tool_calls": [{"name", "arguments"}]}``. It streams Server-Sent Events when the request says
``stream: true``, else one JSON body. ``GET /v1/models`` lists one model. Every request body is
recorded (:attr:`FakeOpenAI.requests`).
"""

from __future__ import annotations

import json
import threading
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any, Callable

Reply = Callable[[dict[str, Any]], "str | dict[str, Any]"]


class FakeOpenAI:
    def __init__(self, reply: Reply | None = None) -> None:
        self.reply: Reply = reply or (lambda body: "ok")
        self.requests: list[dict[str, Any]] = []
        self.server = ThreadingHTTPServer(("127.0.0.1", 0), self._handler())
        self.thread = threading.Thread(target=self.server.serve_forever, daemon=True)

    @property
    def base_url(self) -> str:
        return f"http://127.0.0.1:{self.server.server_address[1]}/v1"

    def __enter__(self) -> "FakeOpenAI":
        self.thread.start()
        return self

    def __exit__(self, *exc: object) -> None:
        self.server.shutdown()
        self.server.server_close()

    def _handler(self) -> type[BaseHTTPRequestHandler]:
        fake = self

        class Handler(BaseHTTPRequestHandler):
            def log_message(self, *args: Any) -> None:  # quiet
                pass

            def _send(self, status: int, body: bytes, kind: str = "application/json") -> None:
                self.send_response(status)
                self.send_header("Content-Type", kind)
                self.send_header("Content-Length", str(len(body)))
                self.end_headers()
                self.wfile.write(body)

            def do_GET(self) -> None:
                models = {"object": "list", "data": [{"id": "stand-in", "object": "model", "owned_by": "test"}]}
                self._send(200, json.dumps(models).encode())

            def do_POST(self) -> None:
                length = int(self.headers.get("Content-Length") or 0)
                body = json.loads(self.rfile.read(length) or b"{}")
                fake.requests.append(body)
                if not self.path.rstrip("/").endswith("chat/completions"):
                    self._send(404, b'{"error": {"message": "not here"}}')
                    return
                answer = fake.reply(body)
                if body.get("stream"):
                    self._send(200, _sse(answer, body), "text/event-stream")
                else:
                    self._send(200, json.dumps(_completion(answer, body)).encode())

        return Handler


def _message(answer: "str | dict[str, Any]") -> tuple[dict[str, Any], str]:
    if isinstance(answer, str):
        return {"role": "assistant", "content": answer}, "stop"
    calls = [{"id": f"call_{i}", "type": "function",
              "function": {"name": c["name"], "arguments": json.dumps(c.get("arguments", {}))}}
             for i, c in enumerate(answer["tool_calls"])]
    return {"role": "assistant", "content": None, "tool_calls": calls}, "tool_calls"


def _completion(answer: "str | dict[str, Any]", body: dict[str, Any]) -> dict[str, Any]:
    message, finish = _message(answer)
    return {"id": "chatcmpl-1", "object": "chat.completion", "created": 0, "model": body.get("model", "stand-in"),
            "choices": [{"index": 0, "message": message, "finish_reason": finish}],
            "usage": {"prompt_tokens": 10, "completion_tokens": 5, "total_tokens": 15}}


def _sse(answer: "str | dict[str, Any]", body: dict[str, Any]) -> bytes:
    message, finish = _message(answer)
    delta: dict[str, Any] = {"role": "assistant"}
    if message.get("content") is not None:
        delta["content"] = message["content"]
    if message.get("tool_calls"):
        delta["tool_calls"] = [dict(c, index=i) for i, c in enumerate(message["tool_calls"])]
    base = {"id": "chatcmpl-1", "object": "chat.completion.chunk", "created": 0, "model": body.get("model", "stand-in")}
    chunks = [dict(base, choices=[{"index": 0, "delta": delta, "finish_reason": None}]),
              dict(base, choices=[{"index": 0, "delta": {}, "finish_reason": finish}],
                   usage={"prompt_tokens": 10, "completion_tokens": 5, "total_tokens": 15})]
    return b"".join(f"data: {json.dumps(c)}\n\n".encode() for c in chunks) + b"data: [DONE]\n\n"
