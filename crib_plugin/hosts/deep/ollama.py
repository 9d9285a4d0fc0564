"""The model side of deep recall with a local Ollama model (``CRIB_DEEP_MODEL``, else ``CRIB_JUDGE_MODEL``).

Three kinds of call, each one JSON-schema-constrained chat at temperature 0 with a fixed seed:

* **expand** — the question → a few search terms it would be phrased with in stored memories;
* **read** — the question and ONE gated memory → whether it bears on the question, and the finding
  in a sentence (seed 001's sub-agent: the content is read here, and only a bounded finding leaves);
* **synthesise** — the question and the findings so far, each labelled with its entry id → an
  answer citing the ids it rests on, whether it is complete, and what is still missing.

Every call reports the tokens it cost (Ollama's ``prompt_eval_count`` + ``eval_count``, each
estimated at four characters a token when left out: a cached prompt has no ``prompt_eval_count``), which the loop charges to its budget
(:mod:`crib_plugin.hosts.deep.loop`). A malformed reply is a :class:`~crib_plugin.core.errors.ModelError`.
"""

from __future__ import annotations

import json
from dataclasses import dataclass
from typing import Any, Sequence

from ...core.errors import ConfigError, ModelError
from ...core.limits import bound_prompt
from ...models.ollama.client import SEED, OllamaBase, configured, tokens_spent

ENTRY_CHARS = 1_500
"""Characters of one memory a reader call sees."""
FINDING_CHARS = 300
"""Characters of a finding kept (the bounded output of one reader)."""
QUESTION_CHARS = 1_000

EXPAND_SCHEMA: dict[str, Any] = {"type": "object", "properties": {"terms": {"type": "array", "items": {"type": "string"}, "maxItems": 8}},
                                 "required": ["terms"]}
READ_SCHEMA: dict[str, Any] = {"type": "object", "properties": {"relevant": {"type": "boolean"}, "finding": {"type": "string", "minLength": 1}},
                               "required": ["relevant", "finding"]}
SYNTH_SCHEMA: dict[str, Any] = {
    "type": "object",
    "properties": {"answer": {"type": "string", "minLength": 1}, "cites": {"type": "array", "items": {"type": "string", "minLength": 1}},
                   "complete": {"type": "boolean"}, "missing": {"type": "array", "items": {"type": "string"}, "maxItems": 6}},
    "required": ["answer", "cites", "complete"],
}

EXPAND_SYSTEM = ("You help search an AI agent's memory of earlier work. Given a question, list up to 8 short search terms "
                 "(words or two-word phrases) that memories answering it would contain but the question does not: "
                 "synonyms, tools, file or component names. Answer only with JSON {\"terms\": [...]}.")
READ_SYSTEM = ("You read ONE stored memory for a question about earlier work. Say whether it bears on the question and, if it "
               "does, state in one sentence what it contributes (keep names, dates and numbers). Answer only with JSON "
               "{\"relevant\": true|false, \"finding\": \"...\"}.")
SYNTH_SYSTEM = ("You answer a question about earlier work from findings, each labelled with the id of the memory it came from. "
                "Use only the findings; cite every id your answer rests on. Set complete to false when the question asks for more "
                "than the findings cover (e.g. 'every decision', a change over time with a period missing), and list in missing "
                "a few search terms for what is still missing. Answer only with JSON "
                "{\"answer\": \"...\", \"cites\": [ids], \"complete\": true|false, \"missing\": [terms]}.")


@dataclass(frozen=True)
class Finding:
    key: str  # the entry's label: "12" (project) or "g12" (global)
    relevant: bool
    text: str


@dataclass(frozen=True)
class Synthesis:
    answer: str
    cites: list[str]
    complete: bool
    missing: list[str]


def _json(content: Any, what: str) -> dict[str, Any]:
    try:
        data = json.loads(content) if isinstance(content, str) else content
    except (ValueError, RecursionError):
        raise ModelError(f"deep recall {what} reply is not JSON") from None
    if not isinstance(data, dict):
        raise ModelError(f"deep recall {what} reply is not a JSON object")
    return data


def _strings(value: Any, what: str) -> list[str]:
    if not isinstance(value, list) or not all(isinstance(v, (str, int)) and not isinstance(v, bool) for v in value):
        raise ModelError(f"deep recall {what} is not a list of strings")
    return [str(v) for v in value]


class OllamaDeep(OllamaBase):
    """The expander, reader and synthesiser of deep recall, on one Ollama model."""

    role = "deep recall"

    def __init__(self, model: str | None = None, host: str | None = None, timeout: float | None = None) -> None:
        model = model or configured("deep_model") or configured("judge_model")
        if not model:
            raise ConfigError("deep recall with a model needs CRIB_DEEP_MODEL (or CRIB_JUDGE_MODEL)")
        super().__init__(model, host, timeout if timeout is not None else float(configured("deep_seconds")))

    def _chat(self, what: str, system: str, user: str, schema: dict[str, Any], predict: int) -> tuple[dict[str, Any], int]:
        messages = [{"role": "system", "content": system}, {"role": "user", "content": user}]
        response = self.chat(what, messages, schema, {"temperature": 0, "seed": SEED, "num_predict": predict})
        content = response.message.content if response.message is not None else None
        spent = tokens_spent(response, len(system) + len(user), len(content or ""))
        return _json(content, what), spent

    @staticmethod
    def estimate(user: str, predict: int) -> int:
        """Tokens a call is expected to cost, before it is made (what the token budget checks)."""
        return (len(user) + 600) // 4 + predict

    def expand_prompt(self, question: str) -> str:
        return f"Question: {' '.join(bound_prompt(question, QUESTION_CHARS).split())}"

    def expand(self, question: str) -> tuple[list[str], int]:
        data, spent = self._chat("expand", EXPAND_SYSTEM, self.expand_prompt(question), EXPAND_SCHEMA, 96)
        return _strings(data.get("terms"), "terms")[:8], spent

    def read_prompt(self, question: str, key: str, date: str, kind: str, text: str) -> str:
        return (f"Question: {' '.join(bound_prompt(question, QUESTION_CHARS).split())}\n\n"
                f"Memory {key} [{date} {kind}]:\n{text[:ENTRY_CHARS]}")

    def read(self, question: str, key: str, date: str, kind: str, text: str) -> tuple[Finding, int]:
        data, spent = self._chat("read", READ_SYSTEM, self.read_prompt(question, key, date, kind, text), READ_SCHEMA, 128)
        relevant, finding = data.get("relevant"), data.get("finding")
        if not isinstance(relevant, bool) or not isinstance(finding, str):
            raise ModelError("deep recall read reply has no relevant/finding")
        return Finding(key, relevant, " ".join(finding.split())[:FINDING_CHARS]), spent

    def synth_prompt(self, question: str, findings: Sequence[Finding]) -> str:
        listing = "\n".join(f"[{f.key}] {f.text}" for f in findings) or "(no finding yet)"
        return f"Question: {' '.join(bound_prompt(question, QUESTION_CHARS).split())}\n\nFindings:\n{listing}"

    def synthesise(self, question: str, findings: Sequence[Finding]) -> tuple[Synthesis, int]:
        data, spent = self._chat("synthesise", SYNTH_SYSTEM, self.synth_prompt(question, findings), SYNTH_SCHEMA, 384)
        answer, complete = data.get("answer"), data.get("complete")
        if not isinstance(answer, str) or not isinstance(complete, bool):
            raise ModelError("deep recall synthesis has no answer/complete")
        missing = _strings(data.get("missing", []), "missing")[:6]
        return Synthesis(answer.strip(), _strings(data.get("cites"), "cites"), complete, missing), spent


__all__ = ["OllamaDeep", "Finding", "Synthesis", "EXPAND_SCHEMA", "READ_SCHEMA", "SYNTH_SCHEMA"]
