"""What a host adapter is: event names, input fields and output shape of one agent host's hooks.

A leaf (standard library only): the per-prompt hook imports it on every prompt.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any, Mapping

USER_PROMPT_SUBMIT = "user-prompt-submit"
SESSION_START = "session-start"


@dataclass(frozen=True)
class Host:
    """One agent host's hook contract.

    ``events`` maps crib's core events (``user-prompt-submit``, ``session-start``) to the
    ``hookEventName`` the host expects back; ``aliases`` maps the host's input field names to the
    ones the core reads (``session_id``, ``prompt``, ``cwd``, ``source``, ``transcript_path``);
    ``context_cap`` is the longest ``additionalContext`` the host takes whole; ``label`` is how
    audit rows and ``crib doctor`` name it.
    """

    name: str
    label: str
    events: Mapping[str, str] = field(default_factory=dict)
    aliases: Mapping[str, str] = field(default_factory=dict)
    context_cap: int = 10_000

    def event_name(self, event: str) -> str:
        return self.events.get(event, event)

    def read(self, data: dict[str, Any]) -> dict[str, Any]:
        """The host's hook JSON with its field names mapped onto the core's (originals kept)."""
        if not self.aliases:
            return data
        out = dict(data)
        for theirs, ours in self.aliases.items():
            if ours not in out and theirs in data:
                out[ours] = data[theirs]
        return out

    def payload(self, event: str, context: str) -> dict[str, Any]:
        """The JSON object the host reads an injected context from."""
        return {"hookSpecificOutput": {"hookEventName": self.event_name(event), "additionalContext": context}}


CLAUDE = Host(
    name="claude", label="claude-code",
    events={USER_PROMPT_SUBMIT: "UserPromptSubmit", SESSION_START: "SessionStart"},
)
"""Claude Code: the contract the core was written against (hooks reference, 2026)."""
