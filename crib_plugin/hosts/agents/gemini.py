"""Gemini CLI (``@google/gemini-cli``): ``BeforeAgent`` is the per-prompt hook.

``BeforeAgent`` gets ``session_id, transcript_path, cwd, hook_event_name, timestamp, prompt`` and
reads ``hookSpecificOutput.additionalContext`` (added to the turn inside ``<hook_context>``);
``SessionStart`` gets ``source`` (``startup``, ``resume``, ``clear``). ``AfterModel`` — once per
streamed chunk — is served by :mod:`crib_plugin.hosts.stream`. Gemini's hook timeouts are in
milliseconds.
"""

from __future__ import annotations

from .base import SESSION_START, USER_PROMPT_SUBMIT, Host

GEMINI = Host(
    name="gemini", label="gemini-cli",
    events={USER_PROMPT_SUBMIT: "BeforeAgent", SESSION_START: "SessionStart"},
    aliases={"trigger": "source"},
)
