"""Codex CLI (``@openai/codex``): hooks shaped like Claude Code's.

``UserPromptSubmit`` gets ``session_id, turn_id, transcript_path, cwd, hook_event_name, model,
permission_mode, prompt``; ``SessionStart`` gets ``source``. Both read
``hookSpecificOutput.additionalContext``, which Codex adds as a developer message (schemas:
openai/codex ``codex-rs/hooks/schema/generated/``). Codex has no hook that changes displayed text,
so a memory block the model echoes is not filtered there.
"""

from __future__ import annotations

from .base import SESSION_START, USER_PROMPT_SUBMIT, Host

CODEX = Host(
    name="codex", label="codex",
    events={USER_PROMPT_SUBMIT: "UserPromptSubmit", SESSION_START: "SessionStart"},
)
