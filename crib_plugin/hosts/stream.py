"""``on_response`` for hosts other than Claude Code: remove memory blocks from the text a user sees.

The model may echo a ``<memory-context>`` block it was given. Two hosts let a hook change what is
shown, and each gets the same scrubber as Claude Code's ``MessageDisplay`` hook
(:func:`crib_plugin.hosts.display.scrub_batch`: :class:`crib_plugin.text.scrub.Scrubber`, state
kept per response in a small file between processes, nothing touched for text without ``<``):

``crib hook after-model --host gemini``
    Gemini CLI fires ``AfterModel`` once per streamed chunk, one process each. Its JSON carries
    ``llm_request`` (the whole request: the same for every chunk of one response) and
    ``llm_response`` (``candidates[0].content.parts``: this chunk's text parts; ``finishReason``
    set on the last). The response is keyed by the session and the request's message count, so a
    block split across chunks — the opening tag itself cut in two — is still removed. Answering
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

import json
from typing import IO, Any

from ..core.faillog import log_failure
from .display import DisplayBatch, scrub_batch, state_dir

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
    batch = DisplayBatch(f"gemini-{turn}", _text(data, "session_id"), delta, final, _text(data, "cwd"))
    shown = scrub_batch(batch, state_dir(batch))
    if shown is None:
        return None
    new_candidate = {**candidates[0], "content": {**content, "parts": [shown]}}  # an empty list would be ignored
    new_response = {**response, "candidates": [new_candidate, *candidates[1:]], "text": shown}
    return {"hookSpecificOutput": {"hookEventName": "AfterModel", "llm_response": new_response}}


def opencode_text_complete(data: dict[str, Any]) -> dict[str, Any] | None:
    """``{"text": …}`` for a finished opencode text part, or None when it is unchanged."""
    text = data.get("text")
    if not isinstance(text, str) or "<" not in text or len(text) > MAX_SCRUB_CHARS:
        return None
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
        log_failure(f"hook {event} ({host})", exc)
        return 0
    try:
        stdout.write(text + "\n")
        stdout.flush()
    except (OSError, ValueError):
        pass
    return 0
