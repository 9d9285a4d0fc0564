"""A loopback stand-in for the Anthropic Messages API, so the real Claude Code CLI (``claude -p``) can
run a whole session here: its hooks fire, its MCP servers start, and the "model" is a script.

Every ``POST /v1/messages`` is recorded (``FakeAnthropic.requests``) and answered by ``reply``, a
function of the request body returning either text or a tool call; the answer streams as the
Messages API's server-sent events when the request asks for a stream, else comes as one JSON
message. Any other path (token counting, telemetry) gets an empty JSON object.
"""

from __future__ import annotations

import itertools
import json
import threading
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any


@dataclass
class ToolCall:
    """The model's answer: call ``name`` with ``arguments``."""

    name: str
    arguments: dict[str, Any]


Reply = Callable[[dict[str, Any]], "str | ToolCall"]
_ids = itertools.count(1)


def text_of(content: Any) -> str:
    """All the text in a message's ``content`` (a string, or blocks: text and tool results, nested)."""
    if isinstance(content, str):
        return content
    parts: list[str] = []
    for block in content or []:
        if isinstance(block, dict):
            if isinstance(block.get("text"), str):
                parts.append(block["text"])
            if "content" in block:
                parts.append(text_of(block["content"]))
    return "\n".join(parts)


def tool_results(body: dict[str, Any]) -> list[str]:
    """The text of every tool result in a request's messages."""
    return [text_of(block.get("content")) for message in body.get("messages", []) if isinstance(message.get("content"), list)
            for block in message["content"] if isinstance(block, dict) and block.get("type") == "tool_result"]


def _blocks(answer: str | ToolCall) -> tuple[list[dict[str, Any]], str]:
    if isinstance(answer, ToolCall):
        return [{"type": "tool_use", "id": f"toolu_{next(_ids):04d}", "name": answer.name, "input": answer.arguments}], "tool_use"
    return [{"type": "text", "text": answer}], "end_turn"


def _events(message: dict[str, Any]) -> Iterator[tuple[str, dict[str, Any]]]:
    """The server-sent events that stream ``message``."""
    yield "message_start", {"type": "message_start", "message": {**message, "content": [], "stop_reason": None}}
    for index, block in enumerate(message["content"]):
        if block["type"] == "text":
            yield "content_block_start", {"type": "content_block_start", "index": index, "content_block": {"type": "text", "text": ""}}
            delta = {"type": "text_delta", "text": block["text"]}
        else:
            yield "content_block_start", {"type": "content_block_start", "index": index,
                                          "content_block": {**block, "input": {}}}
            delta = {"type": "input_json_delta", "partial_json": json.dumps(block["input"])}
        yield "content_block_delta", {"type": "content_block_delta", "index": index, "delta": delta}
        yield "content_block_stop", {"type": "content_block_stop", "index": index}
    yield "message_delta", {"type": "message_delta", "delta": {"stop_reason": message["stop_reason"], "stop_sequence": None},
                            "usage": {"output_tokens": 5}}
    yield "message_stop", {"type": "message_stop"}


class JsonHandler(BaseHTTPRequestHandler):
    """A quiet request handler that answers JSON: what every loopback stand-in here builds on."""

    def log_message(self, *_args: Any) -> None:  # quiet
        pass

    def _json(self, data: dict[str, Any]) -> None:
        raw = json.dumps(data).encode()
        self.send_response(200)
        self.send_header("Content-Type", "application/json")
        self.send_header("Content-Length", str(len(raw)))
        self.end_headers()
        self.wfile.write(raw)


class Loopback:
    """Serves a handler class on 127.0.0.1 in a daemon thread (``url``) until the ``with`` ends."""

    url: str

    def _serve(self, handler: type[BaseHTTPRequestHandler]) -> None:
        self._server = ThreadingHTTPServer(("127.0.0.1", 0), handler)
        self.url = f"http://127.0.0.1:{self._server.server_address[1]}"
        threading.Thread(target=self._server.serve_forever, daemon=True).start()

    def __exit__(self, *_exc: Any) -> None:
        self._server.shutdown()
        self._server.server_close()


@dataclass
class FakeAnthropic(Loopback):
    """The server; use as a context manager. ``url`` is what ``ANTHROPIC_BASE_URL`` takes."""

    reply: Reply
    requests: list[dict[str, Any]] = field(default_factory=list)
    url: str = ""

    def __enter__(self) -> "FakeAnthropic":
        fake = self

        class Handler(JsonHandler):
            def do_GET(self) -> None:
                self._json({})

            def do_HEAD(self) -> None:
                self._json({})

            def do_POST(self) -> None:
                body = json.loads(self.rfile.read(int(self.headers.get("Content-Length") or 0)) or b"{}")
                if not self.path.split("?")[0].endswith("/v1/messages"):
                    self._json({"input_tokens": 10} if "count_tokens" in self.path else {})
                    return
                fake.requests.append(body)
                content, stop = _blocks(fake.reply(body))
                message = {"id": f"msg_{next(_ids):04d}", "type": "message", "role": "assistant", "model": body.get("model", "fake"),
                           "content": content, "stop_reason": stop, "stop_sequence": None,
                           "usage": {"input_tokens": 10, "output_tokens": 5}}
                if not body.get("stream"):
                    self._json(message)
                    return
                self.send_response(200)
                self.send_header("Content-Type", "text/event-stream")
                self.send_header("Cache-Control", "no-cache")
                self.end_headers()
                for event, data in _events(message):
                    self.wfile.write(f"event: {event}\ndata: {json.dumps(data)}\n\n".encode())
                self.wfile.flush()

        self._serve(Handler)
        return self
