"""``crib hook message-display``: memory blocks removed from displayed text, state kept per message."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from crib_plugin.hosts.display import DisplayBatch, scrub_batch

BLOCK_BATCHES = [
    "Here is what I found.\nSee <memo",
    'ry-context context_time="2026-11-23T10:00:00Z">\n- [2026-11-20 decision] Chose SQLite\n',
    "- [2026-11-21 note] the deploy key is in vault</memory-context",
    ">\nDone, the tests pass.\n",
]


def payload(delta: str, index: int, final: bool = False, message_id: str = "msg_01", **extra: Any) -> str:
    return json.dumps({"session_id": "s1", "transcript_path": "/tmp/t.jsonl", "cwd": ".", "hook_event_name": "MessageDisplay",
                       "message_id": message_id, "index": index, "final": final, "delta": delta, **extra})


def display(result: Any) -> str | None:
    """The displayContent a hook printed, or None when it printed nothing (batch shown unchanged)."""
    assert result.returncode == 0, result.stderr
    if not result.stdout:
        return None
    data = json.loads(result.stdout)
    assert data == {"hookSpecificOutput": {"hookEventName": "MessageDisplay", "displayContent": data["hookSpecificOutput"]["displayContent"]}}
    return data["hookSpecificOutput"]["displayContent"]


def test_a_block_split_across_batches_and_inside_its_tags_never_reaches_the_screen(crib: Any, db: Path) -> None:
    db.parent.mkdir(parents=True, exist_ok=True)
    shown = []
    for index, delta in enumerate(BLOCK_BATCHES):
        out = display(crib("hook", "message-display", input=payload(delta, index, final=index == len(BLOCK_BATCHES) - 1)))
        shown.append(delta if out is None else out)
    assert "".join(shown) == "Here is what I found.\nSee \nDone, the tests pass.\n"
    assert shown[1] == "" and shown[2] == ""  # the block's batches are hidden, not shown raw
    folder = db.parent / "sessions" / "display"
    assert folder.is_dir() and not list(folder.iterdir())  # the state went with the final batch


def test_state_is_kept_per_message_and_plain_batches_print_nothing(crib: Any, db: Path) -> None:
    db.parent.mkdir(parents=True, exist_ok=True)
    assert display(crib("hook", "message-display", input=payload('A <memory context_time="t">\nhidden', 0, message_id="m1"))) == "A "
    # another message streaming meanwhile is not inside m1's block
    assert display(crib("hook", "message-display", input=payload("plain text, a < b\n", 0, message_id="m2"))) is None
    assert display(crib("hook", "message-display", input=payload("still hidden\n", 1, message_id="m1"))) == ""
    assert display(crib("hook", "message-display", input=payload("</memory> visible\n", 2, final=True, message_id="m1"))) == " visible\n"
    assert not list((db.parent / "sessions" / "display").iterdir())


def test_a_state_file_lives_exactly_as_long_as_the_open_block(tmp_path: Path) -> None:
    cache = tmp_path / "cache"
    batch = DisplayBatch("m1", "s1", 'x <memory-context context_time="t">\nsecret', final=False)
    assert scrub_batch(batch, cache / "display") == "x "
    assert len(list((cache / "display").iterdir())) == 1
    assert scrub_batch(DisplayBatch("m1", "s1", "\n</memory-context>y", final=True), cache / "display") == "y"
    assert not list((cache / "display").iterdir())


def test_a_cut_off_block_at_the_final_batch_is_dropped(tmp_path: Path) -> None:
    folder = tmp_path / "display"
    assert scrub_batch(DisplayBatch("m", "s", "ok <memory-context context_time=\"", final=False), folder) == "ok "
    assert scrub_batch(DisplayBatch("m", "s", "1\">never closed", final=True), folder) == ""


def test_malformed_input_prints_nothing(crib: Any) -> None:
    for raw in ("", "not json", "[]", json.dumps({"message_id": "m", "delta": 5}), json.dumps({"final": True})):
        result = crib("hook", "message-display", input=raw)
        assert (result.returncode, result.stdout) == (0, ""), raw
