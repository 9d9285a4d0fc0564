"""``on_response`` for hosts other than Claude Code: remove memory blocks from the text a user sees.

The model may echo a ``<memory-context>`` block it was given. Two hosts let a hook change what is
shown, and each gets the same scrubber as Claude Code's ``MessageDisplay`` hook
(:func:`crib_plugin.hosts.display.scrub_batch`: :class:`crib_plugin.text.scrub.Scrubber`, state
kept per response in a small file between processes, nothing touched for text without ``<``):

``crib hook after-model --host gemini``
    Gemini CLI fires ``AfterModel`` once per streamed chunk, one process each. Its JSON carries
    ``llm_request`` (the whole request: the same for every chunk of one response) and
    ``llm_response`` (``candidates[0].content.parts``: this chunk's text parts; ``finishReason``
    set on the last). The response is keyed by the session and the request's message count, and
    its state kept in this user's runtime folder (:func:`stream_dir`), so a block split across
    chunks — the opening tag itself cut in two — is still removed, and a plain chunk costs little
    beyond the interpreter's start. Answering
    ``{"hookSpecificOutput": {"hookEventName": "AfterModel", "llm_response": …}}`` replaces the
    chunk; nothing is printed when the chunk is unchanged. A chunk without text parts (a tool
    call) is never replaced: Gemini rebuilds a replaced chunk from its text parts alone.

``crib hook text-complete --host opencode``
    opencode's ``experimental.text.complete`` gives a finished text part (``message_id``,
    ``part_id``, ``text``); the answer is ``{"text": …}`` when it changed.

Ordinary text — code that mentions ``<memory-context>`` without being a block — is never altered:
that is the scrubber's rule. Any failure prints nothing and exits 0 (the text is shown as it is).
Codex CLI has no hook that changes displayed text.
"""

from __future__ import annotations

import hashlib
import json
import os
import tempfile
from pathlib import Path
from typing import IO, Any

from ..core.deadline import write_whole

AFTER_MODEL = "after-model"
TEXT_COMPLETE = "text-complete"
MAX_SCRUB_CHARS = 200_000
"""Longest text one call scrubs (~0.3 s at worst, every character a ``<``); a longer chunk or part
is shown as it is: the hook must answer within the host's timeout, and no host streams chunks
this long."""


def _text(data: Any, key: str) -> str:
    value = data.get(key) if isinstance(data, dict) else None
    return value if isinstance(value, str) else ""


def gemini_after_model(data: dict[str, Any]) -> dict[str, Any] | None:
    """The replacement for one Gemini ``AfterModel`` chunk, or None to leave it as it is."""
    response = data.get("llm_response")
    if not isinstance(response, dict):
        return None
    candidates = response.get("candidates")
    if not isinstance(candidates, list) or not candidates or not isinstance(candidates[0], dict):
        return None
    content = candidates[0].get("content")
    if not isinstance(content, dict):
        return None
    parts = content.get("parts")
    if not isinstance(parts, list) or not parts or not all(isinstance(p, str) for p in parts):
        return None  # no text (a tool call): a replacement would drop it
    request = data.get("llm_request")
    messages = request.get("messages") if isinstance(request, dict) else None
    turn = len(messages) if isinstance(messages, list) else 0
    final = bool(candidates[0].get("finishReason"))
    delta = "".join(parts)
    if len(delta) > MAX_SCRUB_CHARS:
        return None
    shown = scrub_chunk(f"{_text(data, 'session_id')}|{turn}", delta, final)
    if shown is None:
        return None
    new_candidate = {**candidates[0], "content": {**content, "parts": [shown]}}  # an empty list would be ignored
    new_response = {**response, "candidates": [new_candidate, *candidates[1:]], "text": shown}
    return {"hookSpecificOutput": {"hookEventName": "AfterModel", "llm_response": new_response}}


def stream_dir() -> Path:
    """Where a streamed response's scrubber state waits for its next chunk: a folder of this user's
    (mode 0700) under ``XDG_RUNTIME_DIR``, else the temporary directory. Found without reading
    crib's settings, so a chunk with nothing to do costs a JSON parse and one ``stat``."""
    base = os.environ.get("XDG_RUNTIME_DIR") or tempfile.gettempdir()
    uid = os.getuid() if hasattr(os, "getuid") else 0
    return Path(base) / f"crib-{uid}" / "streams"


def _own_folder(folder: Path) -> bool:
    """Create ``folder`` (0700) if needed; False when it is not this user's alone (then no state is kept)."""
    folder.parent.mkdir(parents=True, exist_ok=True, mode=0o700)
    folder.mkdir(exist_ok=True, mode=0o700)
    if not hasattr(os, "getuid"):
        return True
    info = folder.parent.stat()
    return info.st_uid == os.getuid() and not info.st_mode & 0o077


def scrub_chunk(key: str, delta: str, final: bool, folder: Path | None = None) -> str | None:
    """What to show for one chunk of the response ``key``, or None to leave it as it is.

    The scrubber's state (an open block, a held-back partial tag) is kept in a small file per
    response between the processes; a chunk without ``<`` and without saved state — nearly all of
    them — imports nothing more and touches no file."""
    folder = stream_dir() if folder is None else folder
    path = folder / (hashlib.sha256(key.encode("utf-8", "replace")).hexdigest()[:32] + ".json")
    if "<" not in delta and not path.exists():
        return None
    from ..text.scrub import Scrubber  # deferred: only a chunk with work to do

    try:
        scrubber = Scrubber.from_state(json.loads(path.read_text(encoding="utf-8")))
    except FileNotFoundError:
        scrubber = Scrubber()
    except (OSError, ValueError, KeyError, TypeError):  # unreadable: start over
        scrubber = Scrubber()
    out = scrubber.feed(delta) + (scrubber.flush() if final else "")
    if not final and (scrubber.in_block or scrubber.pending) and _own_folder(folder):
        tmp = path.with_name(f".{path.name}.{os.getpid()}")
        tmp.write_text(json.dumps(scrubber.to_state()), encoding="utf-8")
        os.replace(tmp, path)
    else:
        path.unlink(missing_ok=True)
        if final:
            from ..core.stale_files import prune_older_than  # deferred: once a response

            prune_older_than(folder, 86_400.0)
    return None if out == delta else out


def opencode_text_complete(data: dict[str, Any]) -> dict[str, Any] | None:
    """``{"text": …}`` for a finished opencode text part, or None when it is unchanged."""
    text = data.get("text")
    if not isinstance(text, str) or "<" not in text or len(text) > MAX_SCRUB_CHARS:
        return None
    from .display import DisplayBatch, scrub_batch, state_dir  # deferred: the Gemini path needs none of it

    message = _text(data, "message_id") + "-" + _text(data, "part_id")
    batch = DisplayBatch(message, _text(data, "session_id"), text, True, _text(data, "cwd"))
    shown = scrub_batch(batch, state_dir(batch))
    return None if shown is None else {"text": shown}


HANDLERS = {("gemini", AFTER_MODEL): gemini_after_model, ("opencode", TEXT_COMPLETE): opencode_text_complete}


def run_stream_hook(event: str, host: str, stdin: IO[str], stdout: IO[str]) -> int:
    """Read one hook JSON, print the host's replacement (or nothing). Always returns 0."""
    handler = HANDLERS.get((host, event))
    if handler is None:
        return 0
    try:
        data = json.loads(stdin.read())
        answer = handler(data) if isinstance(data, dict) else None
        if answer is None:
            return 0
        text = json.dumps(answer, ensure_ascii=False)
    except Exception as exc:  # fail open: the text is shown as it is
        from ..core.faillog import log_failure  # deferred: reads crib's settings

        log_failure(f"hook {event} ({host})", exc)
        return 0
    write_whole(stdout, text)
    return 0
