"""opencode (``opencode-ai``): hooks are in-process JS; crib's plugin file is a thin bridge.

The plugin (written by ``crib setup opencode``) runs ``crib hook … --host opencode`` with a JSON
object it builds from opencode's hook arguments — ``session_id``, ``prompt``, ``cwd`` (and
``message_id``, ``text`` for the text filter) — and pushes ``additionalContext`` into the chat
(``chat.message``) or the system prompt (``experimental.chat.system.transform``, standing memories
once per session). The answer has Claude Code's shape, so the bridge has nothing to translate.
"""

from __future__ import annotations

from .base import SESSION_START, USER_PROMPT_SUBMIT, Host

OPENCODE = Host(
    name="opencode", label="opencode",
    events={USER_PROMPT_SUBMIT: "UserPromptSubmit", SESSION_START: "SessionStart"},
    aliases={"sessionID": "session_id", "directory": "cwd"},
)
