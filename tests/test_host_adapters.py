"""The host adapters (crib_plugin/hosts/agents, hosts/stream.py): one hook core, each host's JSON.

Every host's prompt hook answers with the same block in that host's shape; the Gemini per-chunk
filter removes a block split across chunks (state kept between processes) and leaves ordinary text
alone; opencode's text filter does the same for a finished part; every hook of every host exits 0
with nothing on stdout for hostile input (empty, malformed JSON, a 10 MB prompt, NUL bytes, a
missing store), within its timeout. The hooks run as real processes, as the hosts run them.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
import time
from pathlib import Path
from typing import Any

import pytest

from crib_plugin.hosts.agents import HOSTS, get_host

DECISION = "We chose SQLite for the invoice store because it is one file to back up"
PROMPT = "which database holds the invoices?"
EVENT_NAME = {"claude": "UserPromptSubmit", "codex": "UserPromptSubmit", "gemini": "BeforeAgent", "opencode": "UserPromptSubmit"}


def crib(args: list[str], stdin: str | bytes = "", timeout: float = 60) -> subprocess.CompletedProcess[bytes]:
    data = stdin.encode() if isinstance(stdin, str) else stdin
    return subprocess.run([sys.executable, "-m", "crib_plugin", *args], input=data, capture_output=True, timeout=timeout)


@pytest.fixture
def store(tmp_path: Path) -> Path:
    done = crib(["write", "--type", "decision", DECISION])
    assert done.returncode == 0, done.stderr
    return tmp_path


@pytest.mark.parametrize("host", sorted(HOSTS))
def test_every_host_gets_the_same_block_in_its_own_shape(store: Path, host: str) -> None:
    event = {"session_id": f"s-{host}", "prompt": PROMPT, "cwd": str(store), "hook_event_name": EVENT_NAME[host]}
    done = crib(["hook", "user-prompt-submit", "--host", host], json.dumps(event))
    assert done.returncode == 0 and done.stderr == b"", done.stderr
    out = json.loads(done.stdout)["hookSpecificOutput"]
    assert out["hookEventName"] == EVENT_NAME[host]
    assert "<memory-context" in out["additionalContext"] and DECISION in out["additionalContext"]
    again = crib(["hook", "user-prompt-submit", "--host", host], json.dumps(event))
    assert again.stdout == b""  # per-session no-repeat: the same session is not told twice


def test_session_start_names_the_hosts_event_and_reads_geminis_fields(store: Path) -> None:
    for host in ("codex", "gemini"):
        done = crib(["hook", "session-start", "--host", host], json.dumps({"session_id": "s", "source": "startup", "cwd": str(store)}))
        out = json.loads(done.stdout)["hookSpecificOutput"]
        assert out["hookEventName"] == "SessionStart" and "crib memory is available" in out["additionalContext"]
        assert DECISION in out["additionalContext"]  # a decision is a standing memory
    assert get_host("gemini").read({"trigger": "clear"})["source"] == "clear"
    assert get_host("opencode").read({"sessionID": "x"})["session_id"] == "x"
    assert get_host("nonsense") is get_host("claude")


def _chunk(text: str, final: bool = False, session: str = "g", turn: int = 1) -> str:
    return json.dumps({"session_id": session, "cwd": os.getcwd(), "hook_event_name": "AfterModel",
                       "llm_request": {"messages": [{"role": "user", "content": "q"}] * turn},
                       "llm_response": {"text": text, "candidates": [{"content": {"role": "model", "parts": [text]},
                                                                     "finishReason": "STOP" if final else None}]}})


def _shown(done: subprocess.CompletedProcess[bytes], sent: str) -> str:
    assert done.returncode == 0 and done.stderr == b""
    if not done.stdout:
        return sent
    out = json.loads(done.stdout)["hookSpecificOutput"]
    assert out["hookEventName"] == "AfterModel"
    return "".join(out["llm_response"]["candidates"][0]["content"]["parts"])


def test_gemini_after_model_removes_a_block_split_across_chunks_and_keeps_ordinary_text(
        store: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("XDG_RUNTIME_DIR", str(store / "run"))
    chunks = ["Use `#include <memory>` and Vec<Memory>. <memory-con", 'text context_time="2026', '-11-20T12:00:00Z">secret', " recalled</memory-",
              "context> done."]
    shown = [_shown(crib(["hook", "after-model", "--host", "gemini"], _chunk(c)), c) for c in chunks]
    shown.append(_shown(crib(["hook", "after-model", "--host", "gemini"], _chunk("", final=True)), ""))
    assert "".join(shown) == "Use `#include <memory>` and Vec<Memory>.  done."
    streams = store / "run" / f"crib-{os.getuid()}" / "streams"
    assert streams.is_dir() and list(streams.iterdir()) == []  # state was kept between chunks, and dropped at the end
    assert not (store / "run" / f"crib-{os.getuid()}").stat().st_mode & 0o077  # this user's alone
    plain = "def f(x: Vec<Memory>) -> None: ...\n"
    assert crib(["hook", "after-model", "--host", "gemini"], _chunk(plain, turn=3)).stdout == b""  # untouched: printed nothing


def test_gemini_never_replaces_a_chunk_without_text_parts(store: Path) -> None:
    crib(["hook", "after-model", "--host", "gemini"], _chunk("<memory-context>open", session="t"))
    call = json.loads(_chunk("", session="t"))
    call["llm_response"]["candidates"][0]["content"]["parts"] = []  # a function call: no text parts
    assert crib(["hook", "after-model", "--host", "gemini"], json.dumps(call)).stdout == b""


def test_opencode_text_complete_scrubs_a_finished_part(store: Path) -> None:
    text = "Answer <memory-context>recalled secret</memory-context>kept; C++ uses #include <memory>."
    done = crib(["hook", "text-complete", "--host", "opencode"], json.dumps({"session_id": "o", "message_id": "m", "part_id": "p", "text": text}))
    assert json.loads(done.stdout) == {"text": "Answer kept; C++ uses #include <memory>."}
    plain = json.dumps({"session_id": "o", "message_id": "m", "part_id": "q", "text": "template <memory> x"})
    assert crib(["hook", "text-complete", "--host", "opencode"], plain).stdout == b""


HOOKS = [(host, ["hook", "user-prompt-submit", "--host", host]) for host in sorted(HOSTS)] + [
    (host, ["hook", "session-start", "--host", host]) for host in ("codex", "gemini", "opencode")] + [
    ("gemini", ["hook", "after-model", "--host", "gemini"]), ("opencode", ["hook", "text-complete", "--host", "opencode"])]
HOSTILE: dict[str, Any] = {
    "empty": b"",
    "malformed": b'{"prompt": "which datab',
    "not an object": b"[1, 2, 3]",
    "wrong types": json.dumps({"prompt": 5, "session_id": [], "llm_response": {"candidates": "x"}, "text": 3}).encode(),
    "nul bytes": json.dumps({"prompt": "data\x00base", "session_id": "a\x00b", "text": "<memory-context>\x00",
                             "llm_response": {"candidates": [{"content": {"parts": ["\x00<memory-context>"]}}]}}).encode() + b"\x00\x00",
    "10 MB prompt": json.dumps({"prompt": "sqlite " * 1_500_000, "session_id": "big", "text": "<" * 10_000_000}).encode(),
}


@pytest.mark.parametrize("case", sorted(HOSTILE))
def test_every_hook_of_every_host_fails_open_on_hostile_input(tmp_path: Path, case: str, monkeypatch: pytest.MonkeyPatch) -> None:
    """No store at all (CRIB_DB names a file that does not exist): every hook exits 0 in time and
    prints nothing an agent would read as memory, and no traceback."""
    monkeypatch.setenv("CRIB_DB", str(tmp_path / "missing" / "crib.db"))
    for host, args in HOOKS:
        started = time.perf_counter()
        done = crib(args, HOSTILE[case], timeout=30)
        took = time.perf_counter() - started
        assert done.returncode == 0, (host, args, done.stderr)
        assert b"Traceback" not in done.stderr + done.stdout
        assert b"memory-context" not in done.stdout and b"secret" not in done.stdout, (host, args)
        if done.stdout and args[1] == "session-start":
            assert b"crib memory is available" in done.stdout  # the one line a session always gets
        assert took < 5.0, (host, args, took)  # Gemini's default hook timeout is far above this; crib's own is 2 s
