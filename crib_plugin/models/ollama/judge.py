"""The Ollama relevance judge: a local model picks, from the best few candidates, the memories that
bear on the prompt (``CRIB_JUDGE_MODEL``, opt-in).

What the offline retrieval cannot see is meaning it has no words or vectors for: "add lodash to
apps/web" is about adding a dependency, "install httpx" about a Python package. A small local
model knows that. It is shown the prompt and at most :data:`~crib_plugin.read.gate.judging.JUDGE_DEPTH`
numbered candidates (date written, type, text and the memory's recall cue, the text cut to
:data:`CANDIDATE_CHARS`) and today's date (``CRIB_NOW`` when set), in one JSON-schema-constrained chat at temperature 0 with a fixed seed,
and answers ``{"relevant": [numbers]}`` — ``[]`` when none applies. It only reads the candidates:
it never returns, edits or stores memory text. A number outside the list is dropped; a reply not of
that shape is a :class:`~crib_plugin.core.errors.ModelError`, and the caller keeps the offline block.
"""

from __future__ import annotations

import json
from typing import Any, Sequence

from ...core.errors import ConfigError, ModelError
from ...core.limits import bound_prompt
from ...core.timeutil import now_iso
from ..base import Candidate
from ..ollama_host import ollama_timeout
from .client import SEED, OllamaBase, configured

CANDIDATE_CHARS = 400
"""Characters of a candidate's text shown to the model (its cue is shown whole: at most 500)."""

PROMPT_CHARS = 2_000
"""Characters of the prompt shown to the model (its head and tail): a pasted log of 16,000
characters would cost a small model seconds to read, for no better choice."""

JUDGE_SCHEMA: dict[str, Any] = {
    "type": "object",
    "properties": {"relevant": {"type": "array", "items": {"type": "integer", "minimum": 1}}},
    "required": ["relevant"],
    "additionalProperties": False,
}
"""The JSON schema of a judge reply; each request sends :func:`judge_schema` (this with the number
of candidates as ``maximum``), and crib re-checks the reply."""


def judge_schema(count: int) -> dict[str, Any]:
    """:data:`JUDGE_SCHEMA` for ``count`` candidates: a number above ``count`` cannot be decoded (a
    small model otherwise counts on past the list, ``[1…9]`` for 8), and no number twice."""
    items = {**JUDGE_SCHEMA["properties"]["relevant"]["items"], "maximum": max(1, count)}
    return {**JUDGE_SCHEMA, "properties": {"relevant": {"type": "array", "items": items, "maxItems": max(1, count)}}}


JUDGE_SYSTEM_PROMPT = """\
You help an AI coding agent use its memory of earlier sessions. You get the user's prompt and
numbered memories. Pick the memories the agent must know to act on this prompt: one that answers
the question, or that changes how the task should be done (a decision, a known error and its fix,
a correction, the user's preference for this kind of work). A memory that is only about the same
project or topic is not relevant. Most prompts need zero, one or two memories.
Answer only with JSON {"relevant": [numbers]}; {"relevant": []} when none applies."""


def candidate_line(number: int, candidate: Candidate) -> str:
    """One numbered line of the listing the model reads."""
    text = " ".join(candidate.content.split())[:CANDIDATE_CHARS]
    cue = f" (comes back when: {' '.join(candidate.cue.split())})" if candidate.cue else ""
    day = f"{candidate.created_at[:10]} " if candidate.created_at else ""
    return f"{number}. [{day}{candidate.type}] {text}{cue}"


def parse_picks(content: Any, count: int) -> list[int]:
    """The picked candidates (0-based, in the order given, no repeats) in a judge reply
    (``{"relevant": [1, 3]}``, as text or parsed). A number outside 1…``count`` is dropped and the
    rest kept (one stray number must not cost the answer); a reply that is not of that shape, or
    whose every number is outside the list, is a ModelError."""
    try:
        data = json.loads(content) if isinstance(content, str) else content
    except (ValueError, RecursionError):
        raise ModelError("judge reply is not JSON") from None
    picks = data.get("relevant") if isinstance(data, dict) else None
    if not isinstance(picks, list) or any(isinstance(p, bool) or not isinstance(p, int) for p in picks):
        raise ModelError("judge reply has no 'relevant' list of numbers")
    inside = [p for p in picks if 1 <= p <= count]
    if picks and not inside:
        raise ModelError(f"judge reply names only memories outside 1–{count}")
    return list(dict.fromkeys(p - 1 for p in inside))


class OllamaJudge(OllamaBase):
    """Picks the candidates that bear on a prompt with a local model (``CRIB_JUDGE_MODEL``)."""

    role = "judge"

    def __init__(self, model: str | None = None, host: str | None = None, timeout: float | None = None) -> None:
        model = model or configured("judge_model")
        if not model:
            raise ConfigError("the ollama judge needs CRIB_JUDGE_MODEL: the Ollama model that picks the block (e.g. qwen2.5:3b)")
        super().__init__(
            model,
            host,
            # the request may take as long as the judge may (CRIB_JUDGE_DEADLINE), unless CRIB_OLLAMA_TIMEOUT says otherwise
            timeout if timeout is not None else ollama_timeout(float(configured("judge_deadline"))),
        )

    @property
    def options(self) -> dict[str, Any]:
        """Sampling options sent with every request (fixed, so the same prompt gets the same picks)."""
        return {"temperature": 0, "seed": SEED, "num_predict": 48}

    def messages(self, prompt: str, candidates: Sequence[Candidate]) -> list[dict[str, str]]:
        listing = "\n".join(candidate_line(i, c) for i, c in enumerate(candidates, start=1))
        prompt = " ".join(bound_prompt(prompt, PROMPT_CHARS).split())
        return [
            {"role": "system", "content": JUDGE_SYSTEM_PROMPT},
            {"role": "user", "content": f"Today: {now_iso()[:10]}\nPrompt: {prompt}\n\nMemories:\n{listing}"},
        ]

    def pick(self, prompt: str, candidates: Sequence[Candidate]) -> list[int]:
        """The candidates (0-based) that bear on ``prompt``; ``[]`` when none does.
        ModelUnavailable / ModelError when the model cannot say."""
        if not candidates:
            return []
        response = self.chat("judge", self.messages(prompt, candidates), judge_schema(len(candidates)), self.options)
        content = response.message.content if response.message is not None else None
        return parse_picks(content.strip() if isinstance(content, str) else content, len(candidates))
