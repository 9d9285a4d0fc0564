"""The Ollama cue writer: a local model writes the recall cue of a memory stored without one.

The agent that writes a memory is asked for its cue (``when``, :mod:`crib_plugin.core.cues`); memories
that arrive without one — an import of notes, an agent that skipped it, anything written before
cues existed — can get one from a local model when ``CRIB_CUE_MODEL`` names it (opt-in: no model,
no cue, nothing called). The model sees only the memory, as the agent would when storing it: one
JSON-schema-constrained chat (``{"when": "…"}``), temperature 0 and a fixed seed, so the same
memory gets the same cue. The reply is checked like any cue (one line, at most
:data:`~crib_plugin.core.cues.MAX_CUE_CHARS`); anything else is a :class:`~crib_plugin.core.errors.ModelError`,
and the write path keeps the memory without a cue.
"""

from __future__ import annotations

import json
from typing import Any

from ...core.cues import MAX_CUE_CHARS
from ...core.errors import ModelError
from ..ollama_host import ollama_timeout
from .client import EXTRACT_TIMEOUT, SEED, OllamaBase, configured

CUE_SCHEMA: dict[str, Any] = {
    "type": "object",
    "properties": {"when": {"type": "string", "minLength": 1}},
    "required": ["when"],
    "additionalProperties": False,
}
"""The JSON schema sent in ``format``; Ollama constrains decoding to it and crib re-checks the reply."""

CUE_SYSTEM_PROMPT = """\
An AI coding agent stored a memory for later sessions. Write its recall cue: one line saying in which
situations the memory should come back.
Rules:
- 2 to 4 situations separated by semicolons, at most 40 words in all.
- Each situation is a task someone would start, a question they would ask or a symptom they would
  see, in the words they would use then - not the memory's own wording.
- Name the project, service or tool when the memory is specific to one.
- Never copy secrets, tokens or passwords.
- Answer only with JSON of the form {"when": "..."}."""

CUE_EXAMPLES: list[tuple[str, str]] = [
    (
        "decision: Chose SQLite over Postgres for the cache service because it must run offline.",
        "choosing or changing the cache service's database; running the cache service offline; "
        "adding a server dependency to the cache service",
    ),
    (
        "error: pytest hung in CI: the redis fixture waited on port 6379; fixed by "
        "REDIS_URL=redis://localhost:6390 in ci.env.",
        "tests hang in CI; setting up Redis for tests; changing ci.env or test fixtures",
    ),
]
"""Few-shot examples (not the coding evaluation's memories: its cues were written without them)."""


def parse_cue(content: Any) -> str:
    """The cue in a model reply (``{"when": "…"}``, as text or parsed), on one line; ModelError otherwise."""
    try:
        data = json.loads(content) if isinstance(content, str) else content
    except (ValueError, RecursionError):
        raise ModelError("cue writer reply is not JSON") from None
    value = data.get("when") if isinstance(data, dict) else None
    if not isinstance(value, str) or not value.strip():
        raise ModelError("cue writer reply has no 'when' text")
    cue = " ".join(value.split())
    if len(cue) > MAX_CUE_CHARS:
        raise ModelError(f"cue writer reply of {len(cue)} characters is over the {MAX_CUE_CHARS}-character limit")
    return cue


class OllamaCueWriter(OllamaBase):
    """Writes a memory's recall cue with a local model (``CRIB_CUE_MODEL``)."""

    role = "cue"

    def __init__(self, model: str | None = None, host: str | None = None, timeout: float | None = None) -> None:
        super().__init__(
            model or configured("cue_model") or "",
            host,
            timeout if timeout is not None else ollama_timeout(EXTRACT_TIMEOUT),
        )

    @property
    def options(self) -> dict[str, Any]:
        """Sampling options sent with every request (fixed, so a memory always gets the same cue)."""
        return {"temperature": 0, "seed": SEED, "num_predict": 128}

    def messages(self, text: str, type: str) -> list[dict[str, str]]:
        out = [{"role": "system", "content": CUE_SYSTEM_PROMPT}]
        for memory, cue in CUE_EXAMPLES:
            out += [{"role": "user", "content": memory}, {"role": "assistant", "content": json.dumps({"when": cue})}]
        return out + [{"role": "user", "content": f"{type}: {text.strip()}"}]

    def write_cue(self, text: str, type: str) -> str:
        """The cue for one memory. ModelUnavailable / ModelError when the model cannot give one."""
        response = self.chat("cue", self.messages(text, type), CUE_SCHEMA, self.options)
        content = response.message.content if response.message is not None else None
        return parse_cue(content.strip() if isinstance(content, str) else content)
