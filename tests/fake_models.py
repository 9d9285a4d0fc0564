"""Loopback stand-ins for three model APIs, so the real Codex CLI, Gemini CLI and opencode can run a
whole headless session here against a scripted "model":

* :class:`FakeResponses` — OpenAI's Responses API (``POST …/responses``, streamed SSE): Codex CLI;
* :class:`FakeGemini` — the Gemini API (``POST …:streamGenerateContent?alt=sse``): Gemini CLI;
* :class:`FakeChat` — an OpenAI-compatible Chat Completions API (``POST …/chat/completions``,
  streamed): opencode.

Every model request is recorded (``requests``) and answered by ``reply``, a function of the request
body returning text, a tool call (:class:`fake_anthropic.ToolCall`) or a list of text chunks (to
stream a memory block split across chunks). Any other path gets an empty JSON object.
"""

from __future__ import annotations

import itertools
import json
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field
from typing import Any

from fake_anthropic import JsonHandler, Loopback, ToolCall

Answer = "str | list[str] | ToolCall"
Reply = Callable[[dict[str, Any]], Any]
_ids = itertools.count(1)


def chunks_of(answer: Any) -> list[str]:
    return list(answer) if isinstance(answer, list) else [answer]


@dataclass
class FakeModel(Loopback):
    """The server; use as a context manager. ``url`` is the API's base URL."""

    reply: Reply
    requests: list[dict[str, Any]] = field(default_factory=list)
    url: str = ""
    paths: list[str] = field(default_factory=list)

    def is_model_call(self, path: str) -> bool:
        raise NotImplementedError

    def events(self, body: dict[str, Any], answer: Any) -> Iterator[str]:
        raise NotImplementedError

    def __enter__(self) -> "FakeModel":
        fake = self

        class Handler(JsonHandler):
            protocol_version = "HTTP/1.1"

            def do_GET(self) -> None:
                fake.paths.append("GET " + self.path)
                self._json({"data": [], "models": []})

            def do_POST(self) -> None:
                raw = self.rfile.read(int(self.headers.get("Content-Length") or 0))
                fake.paths.append("POST " + self.path)
                try:
                    body = json.loads(raw or b"{}")
                except ValueError:
                    body = {}
                if not fake.is_model_call(self.path):
                    self._json({})
                    return
                fake.requests.append(body)
                answer = fake.reply(body)
                self.send_response(200)
                self.send_header("Content-Type", "text/event-stream")
                self.send_header("Cache-Control", "no-cache")
                self.send_header("Connection", "close")
                self.end_headers()
                for event in fake.events(body, answer):
                    self.wfile.write(event.encode())
                    self.wfile.flush()
                self.close_connection = True

        self._serve(Handler)
        return self


def sse(data: dict[str, Any], event: str | None = None) -> str:
    return (f"event: {event}\n" if event else "") + f"data: {json.dumps(data)}\n\n"


class FakeGemini(FakeModel):
    """``GOOGLE_GEMINI_BASE_URL``: the Gemini API's streamGenerateContent."""

    def is_model_call(self, path: str) -> bool:
        return ":streamGenerateContent" in path or ":generateContent" in path

    def events(self, body: dict[str, Any], answer: Any) -> Iterator[str]:
        usage = {"promptTokenCount": 10, "candidatesTokenCount": 5, "totalTokenCount": 15}
        if isinstance(answer, ToolCall):
            part = {"functionCall": {"name": answer.name, "args": answer.arguments}}
            yield sse({"candidates": [{"content": {"role": "model", "parts": [part]}, "finishReason": "STOP", "index": 0}], "usageMetadata": usage})
            return
        pieces = chunks_of(answer)
        for i, piece in enumerate(pieces):
            last = i == len(pieces) - 1
            candidate: dict[str, Any] = {"content": {"role": "model", "parts": [{"text": piece}]}, "index": 0}
            if last:
                candidate["finishReason"] = "STOP"
            yield sse({"candidates": [candidate], **({"usageMetadata": usage} if last else {})})


class FakeResponses(FakeModel):
    """A Codex ``model_providers`` entry's ``base_url`` (``…/v1``), ``wire_api = "responses"``."""

    def is_model_call(self, path: str) -> bool:
        return path.split("?")[0].endswith("/responses")

    def events(self, body: dict[str, Any], answer: Any) -> Iterator[str]:
        rid = f"resp_{next(_ids)}"
        base = {"id": rid, "object": "response", "model": body.get("model", "fake"), "status": "in_progress", "output": []}
        yield sse({"type": "response.created", "response": base}, "response.created")
        if isinstance(answer, ToolCall):
            namespace, _, name = answer.name.rpartition("__")  # an MCP tool: "mcp__crib__remember"
            item = {"type": "function_call", "id": f"fc_{next(_ids)}", "call_id": f"call_{next(_ids)}", "name": name,
                    "arguments": json.dumps(answer.arguments), "status": "completed", **({"namespace": namespace} if namespace else {})}
            yield sse({"type": "response.output_item.added", "output_index": 0, "item": {**item, "arguments": ""}}, "response.output_item.added")
            yield sse({"type": "response.output_item.done", "output_index": 0, "item": item}, "response.output_item.done")
            output = [item]
        else:
            text = "".join(chunks_of(answer))
            mid = f"msg_{next(_ids)}"
            yield sse({"type": "response.output_item.added", "output_index": 0,
                       "item": {"type": "message", "id": mid, "role": "assistant", "status": "in_progress", "content": []}}, "response.output_item.added")
            for piece in chunks_of(answer):
                yield sse({"type": "response.output_text.delta", "item_id": mid, "output_index": 0, "content_index": 0, "delta": piece},
                          "response.output_text.delta")
            item = {"type": "message", "id": mid, "role": "assistant", "status": "completed",
                    "content": [{"type": "output_text", "text": text, "annotations": []}]}
            yield sse({"type": "response.output_item.done", "output_index": 0, "item": item}, "response.output_item.done")
            output = [item]
        done = {**base, "status": "completed", "output": output,
                "usage": {"input_tokens": 10, "output_tokens": 5, "total_tokens": 15, "input_tokens_details": {"cached_tokens": 0},
                          "output_tokens_details": {"reasoning_tokens": 0}}}
        yield sse({"type": "response.completed", "response": done}, "response.completed")


class FakeChat(FakeModel):
    """An ``@ai-sdk/openai-compatible`` provider's ``baseURL`` (``…/v1``): streamed chat completions."""

    def is_model_call(self, path: str) -> bool:
        return path.split("?")[0].endswith("/chat/completions")

    def events(self, body: dict[str, Any], answer: Any) -> Iterator[str]:
        cid = f"chatcmpl-{next(_ids)}"

        def chunk(delta: dict[str, Any], finish: str | None = None) -> str:
            return sse({"id": cid, "object": "chat.completion.chunk", "created": 1, "model": body.get("model", "fake"),
                        "choices": [{"index": 0, "delta": delta, "finish_reason": finish}]})

        if isinstance(answer, ToolCall):
            call = {"index": 0, "id": f"call_{next(_ids)}", "type": "function",
                    "function": {"name": answer.name, "arguments": json.dumps(answer.arguments)}}
            yield chunk({"role": "assistant", "tool_calls": [call]})
            yield chunk({}, "tool_calls")
        else:
            yield chunk({"role": "assistant", "content": ""})
            for piece in chunks_of(answer):
                yield chunk({"content": piece})
            yield chunk({}, "stop")
        yield sse({"id": cid, "object": "chat.completion.chunk", "created": 1, "model": body.get("model", "fake"), "choices": [],
                   "usage": {"prompt_tokens": 10, "completion_tokens": 5, "total_tokens": 15}})
        yield "data: [DONE]\n\n"
