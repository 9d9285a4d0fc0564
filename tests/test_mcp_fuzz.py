"""The MCP fuzz set: one bad request never stops ``crib mcp``.

Drives the real server (the front and the SDK server behind it) over stdio with hostile requests —
1,000 levels of nesting, lone surrogates, invalid JSON and UTF-8, wrong types, missing fields,
10 MB strings, and a seeded batch of mutated requests — and checks that each request with an id
is answered (a result or a JSON-RPC error) and that an ordinary call still works afterwards.
"""

from __future__ import annotations

import json
import os
import random
import select
import subprocess
import sys
import time
from pathlib import Path
from typing import Any, Iterator

import pytest

INIT = {"jsonrpc": "2.0", "id": 1, "method": "initialize",
        "params": {"protocolVersion": "2025-06-18", "capabilities": {}, "clientInfo": {"name": "fuzz", "version": "1"}}}
DEEP = 1000


def call(ident: int, name: str, arguments: Any) -> bytes:
    return (json.dumps({"jsonrpc": "2.0", "id": ident, "method": "tools/call",
                        "params": {"name": name, "arguments": arguments}}) + "\n").encode()


def raw_call(ident: int, name: str, arguments_json: str) -> bytes:
    return (f'{{"jsonrpc":"2.0","id":{ident},"method":"tools/call","params":{{"name":"{name}",'
            f'"arguments":{arguments_json}}}}}\n').encode()


class Server:
    """``crib mcp`` on pipes, read without blocking past a deadline."""

    def __init__(self, tmp: Path) -> None:
        env = {**os.environ, "CRIB_DB": str(tmp / "crib.db"), "CRIB_GLOBAL_DB": str(tmp / "global.db"),
               "CRIB_ERROR_LOG": str(tmp / "crib.log")}
        self.proc = subprocess.Popen([sys.executable, "-m", "crib_plugin", "mcp"], stdin=subprocess.PIPE,
                                     stdout=subprocess.PIPE, stderr=subprocess.DEVNULL, env=env, cwd=tmp)
        self.buffer = b""

    def send(self, data: bytes) -> None:
        assert self.proc.stdin is not None
        self.proc.stdin.write(data)
        self.proc.stdin.flush()

    def reply(self, ident: Any, timeout: float = 30) -> dict[str, Any]:
        assert self.proc.stdout is not None
        end = time.monotonic() + timeout
        while True:
            while b"\n" in self.buffer:
                line, self.buffer = self.buffer.split(b"\n", 1)
                message = json.loads(line)  # every line the server writes is JSON
                if message.get("id") == ident and "method" not in message:
                    return message
            left = end - time.monotonic()
            assert left > 0, f"no answer to request {ident!r}"
            ready, _, _ = select.select([self.proc.stdout], [], [], left)
            if ready:
                chunk = os.read(self.proc.stdout.fileno(), 1 << 20)
                assert chunk, f"the server stopped before answering {ident!r} (exit {self.proc.wait()})"
                self.buffer += chunk

    def works(self, ident: int) -> None:
        self.send(call(ident, "search", {"query": "sqlite"}))
        answer = self.reply(ident)
        assert answer.get("result", {}).get("isError") is False, answer


@pytest.fixture(scope="module")
def server(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Server]:
    tmp = tmp_path_factory.mktemp("fuzz")
    running = Server(tmp)
    running.send((json.dumps(INIT) + "\n").encode())
    running.reply(1, timeout=60)
    running.send(b'{"jsonrpc":"2.0","method":"notifications/initialized"}\n')
    running.send(call(2, "remember", {"text": "We chose SQLite for the storage layer"}))
    assert running.reply(2, timeout=60)["result"]["isError"] is False
    yield running
    assert running.proc.stdin is not None
    running.proc.stdin.close()
    assert running.proc.wait(timeout=30) == 0


def _answered(reply: dict[str, Any]) -> bool:
    """A JSON-RPC error, or a tool result (an error result included)."""
    return "error" in reply or isinstance(reply.get("result"), dict)


CASES: list[tuple[str, int, bytes]] = [
    ("arguments nested 1,000 levels (objects)", 101,
     raw_call(101, "search", '{"query":"sqlite","extra":' + '{"a":' * DEEP + "1" + "}" * DEEP + "}")),
    ("arguments nested 1,000 levels (arrays)", 102, raw_call(102, "search", '{"query":' + "[" * DEEP + "]" * DEEP + "}")),
    ("nested 200 levels (parses, still refused)", 103, raw_call(103, "search", '{"query":' + "[" * 200 + "]" * 200 + "}")),
    ("a lone surrogate in a query", 104, raw_call(104, "search", '{"query":"sqlite \\ud800 storage"}')),
    ("a lone surrogate in a memory", 105, raw_call(105, "remember", '{"text":"lone \\udfff surrogate"}')),
    ("a lone surrogate in a key", 106, raw_call(106, "search", '{"query":"x","\\ud800":1}')),
    ("invalid UTF-8 bytes", 107, b'{"jsonrpc":"2.0","id":107,"method":"tools/call","params":{"name":"search",'
                                 b'"arguments":{"query":"a\xed\xa0\x80\xff b"}}}\n'),
    ("invalid JSON", 108, b'{"jsonrpc":"2.0","id":108,"method":"tools/call","params":\n'),
    ("a wrong type", 109, call(109, "search", {"query": 5})),
    ("a wrong type of limit", 110, call(110, "search", {"query": "x", "limit": "many"})),
    ("a missing field", 111, call(111, "search", {})),
    ("no params", 112, b'{"jsonrpc":"2.0","id":112,"method":"tools/call"}\n'),
    ("arguments as a list", 113, call(113, "search", [1, 2])),
    ("an unknown tool", 114, call(114, "nope", {})),
    ("an unknown method", 115, b'{"jsonrpc":"2.0","id":115,"method":"x/y"}\n'),
    ("a method that is not a string", 116, b'{"jsonrpc":"2.0","id":116,"method":7}\n'),
    ("a 10 MB memory", 117, call(117, "remember", {"text": "x" * 10_000_000})),
    ("a 10 MB query", 118, call(118, "search", {"query": "y " * 5_000_000})),
    ("an id past 2**63", 119, call(119, "show", {"id": 2**70})),
    ("a float for an id", 120, call(120, "show", {"id": 1.5})),
    ("an array", -1, b"[1, 2, 3]\n"),
    ("a string", -1, b'"hello"\n'),
    ("an id that is an object", -1, b'{"jsonrpc":"2.0","id":{"a":1},"method":"tools/list"}\n'),
    ("a NUL in a query", 121, call(121, "search", {"query": "a\x00b"})),
]


@pytest.mark.parametrize(("what", "ident", "data"), CASES, ids=[c[0] for c in CASES])
def test_a_bad_request_is_answered_and_the_server_keeps_serving(server: Server, what: str, ident: int, data: bytes) -> None:
    server.send(data)
    reply = server.reply(None if ident < 0 else ident)
    assert _answered(reply), f"{what}: {reply}"
    if ident < 0:
        assert reply["error"]["code"] in (-32600, -32700)
    server.works(1000 + abs(ident))


def _mutations(seed: int, count: int) -> Iterator[bytes]:
    """Seeded mutations of well-formed calls: cut, doubled, bytes flipped, values swapped for others."""
    rng = random.Random(seed)
    values: list[Any] = [None, True, -1, 0, 2**64, 1e308, "", "\u2028", "x" * 5000, [], {}, [[[]]], {"a": {"b": {}}}]
    tools = ["remember", "recall", "search", "show", "manifest", "grep", "list_memories", "correct", "cue", "forget"]
    keys = ["text", "query", "id", "ids", "terms", "scope", "limit", "type", "when", "confirm", "since", "question"]
    for i in range(count):
        args = {rng.choice(keys): rng.choice(values) for _ in range(rng.randint(0, 4))}
        line = call(5000 + i, rng.choice(tools), args)
        kind = rng.randrange(4)
        if kind == 0:
            line = line[: rng.randrange(1, len(line))] + b"\n"
        elif kind == 1:
            pos = rng.randrange(len(line) - 1)
            line = line[:pos] + bytes([rng.randrange(256)]) + line[pos + 1:]
            line = line.replace(b"\n", b" ")[:-1] + b"\n" if not line.endswith(b"\n") else line
        yield line


def test_seeded_mutations_never_stop_the_server(server: Server) -> None:
    for line in _mutations(seed=30, count=60):
        server.send(line.replace(b"\n", b" ").rstrip() + b"\n")
    server.works(9999)
    assert server.proc.poll() is None
