"""The Ollama fact extractor: a JSON-schema-constrained chat with a few examples, replies validated into triples.

Split from :mod:`crib_plugin.models.ollama_models`, which re-exports it.
"""

from __future__ import annotations

import json
from typing import Any

from ...core.errors import ModelError
from ...core.records import Triple
from ..ollama_host import (
    DEFAULT_EXTRACTION_MODEL,
    ollama_timeout,
    one_line,
)
from .client import (
    EXTRACT_TIMEOUT,
    MAX_FACTS,
    SEED,
    OllamaBase,
    configured,
)

EXTRACTION_SCHEMA: dict[str, Any] = {
    "type": "object",
    "properties": {
        "facts": {
            "type": "array",
            "items": {
                "type": "object",
                "properties": {
                    "subject": {"type": "string", "minLength": 1},
                    "predicate": {"type": "string", "minLength": 1},
                    "object": {"type": "string", "minLength": 1},
                },
                "required": ["subject", "predicate", "object"],
                "additionalProperties": False,
            },
        }
    },
    "required": ["facts"],
    "additionalProperties": False,
}
"""The JSON schema sent in ``format``; Ollama constrains decoding to it and crib re-checks the reply.
``minLength``: an empty subject, predicate or object is not a fact, and a model left free to write
one (``"object": ""``, common with a 1.5B model) would otherwise lose the fact."""

EXTRACTION_SYSTEM_PROMPT = """\
You extract facts from a note as subject-predicate-object triples for a memory store.
Rules:
- One triple per fact that the note states. Never invent facts; if it states none, return {"facts": []}.
- subject: the entity the fact is about (a project, person, service, customer, file), as short as possible.
- predicate: a short snake_case relation such as uses, lives_in, payment_terms, storage_backend, owner, deadline.
- object: the value, copied from the note in a few words.
- A negated fact gets the predicate not_<verb>, e.g. "we do not use Redis" -> ("we", "not_use", "Redis").
- Answer only with JSON of the form {"facts": [{"subject": "...", "predicate": "...", "object": "..."}]}."""

EXTRACTION_EXAMPLES: list[tuple[str, dict[str, Any]]] = [
    (
        "Acme Corp pays on net 30 terms; their contact is Dana Lee.",
        {"facts": [
            {"subject": "Acme Corp", "predicate": "payment_terms", "object": "net 30"},
            {"subject": "Acme Corp", "predicate": "contact", "object": "Dana Lee"},
        ]},
    ),
    (
        "Decided: the crib service uses SQLite as its storage backend, not Postgres. Maya lives in Lisbon.",
        {"facts": [
            {"subject": "crib service", "predicate": "storage_backend", "object": "SQLite"},
            {"subject": "crib service", "predicate": "not_use", "object": "Postgres"},
            {"subject": "Maya", "predicate": "lives_in", "object": "Lisbon"},
        ]},
    ),
    ("Thanks, that looks good to me!", {"facts": []}),
]


def validate_facts(content: Any, max_facts: int = MAX_FACTS, dropped: list[str] | None = None) -> list[Triple]:
    """Parse and validate an extraction reply against :data:`EXTRACTION_SCHEMA`.

    The reply must be a JSON object with exactly the key ``facts``, a list; anything else raises
    ``ModelError("extraction model returned invalid JSON: …")`` — the reply is rejected, never
    repaired. Each item must be an object with exactly the string keys ``subject``, ``predicate``,
    ``object``, each non-empty after stripping whitespace: an item that is not is *dropped* (its
    reason appended to ``dropped`` when given), and the other facts of the reply are kept — one bad
    item from a small model must not cost the rest. Exact duplicates (after stripping) are dropped,
    keeping the first; at most ``max_facts`` facts are kept.
    """

    def invalid(reason: str) -> ModelError:
        return ModelError(one_line(f"extraction model returned invalid JSON: {reason}"))

    if not isinstance(content, str):
        raise invalid("no text content")
    try:
        data = json.loads(content)
    except ValueError as exc:
        raise invalid(f"{exc.__class__.__name__} ({exc}) in {content[:60]!r}") from None
    if not isinstance(data, dict):
        raise invalid(f"top level is {type(data).__name__}, not an object")
    if set(data) != {"facts"}:
        extra = sorted(set(data) - {"facts"})
        raise invalid(f"unexpected keys {extra}" if extra else "missing key 'facts'")
    facts = data["facts"]
    if not isinstance(facts, list):
        raise invalid(f"'facts' is {type(facts).__name__}, not an array")
    triples: list[Triple] = []
    seen: set[Triple] = set()
    for i, item in enumerate(facts):
        reason, triple = _triple(item)
        if triple is None:
            if dropped is not None:
                dropped.append(f"facts[{i}] {reason}")
            continue
        if triple not in seen:
            seen.add(triple)
            triples.append(triple)
    return triples[:max_facts]


def _triple(item: Any) -> tuple[str, Triple | None]:
    """One reply item as a triple, or why it is not one."""
    if not isinstance(item, dict):
        return f"is {type(item).__name__}, not an object", None
    keys = set(item)
    if keys != {"subject", "predicate", "object"}:
        missing = sorted({"subject", "predicate", "object"} - keys)
        extra = sorted(keys - {"subject", "predicate", "object"})
        return (f"missing {missing}" if missing else f"has unexpected keys {extra}"), None
    values = []
    for key in ("subject", "predicate", "object"):
        value = item[key]
        if not isinstance(value, str):
            return f".{key} is {type(value).__name__}, not a string", None
        if not value.strip():
            return f".{key} is empty", None
        values.append(value.strip())
    return "", Triple(*values)


class OllamaExtractor(OllamaBase):
    """Fact triples from a small Ollama chat model (default ``gemma3:1b``), deterministically.

    Each call sends one ``/api/chat`` request: a system prompt defining triples, three few-shot
    exchanges, the text; ``format`` = :data:`EXTRACTION_SCHEMA`; ``options`` = temperature 0, seed 42
    and a bound on generated tokens; ``stream=False``. The reply goes through :func:`validate_facts`
    (a reply that is not a facts list → ModelError, never guessed; a bad item is dropped). Empty text returns ``[]`` without a request.
    """

    role = "extraction"
    max_tokens = 1024

    def __init__(self, model: str | None = None, host: str | None = None, timeout: float | None = None,
                 max_facts: int = MAX_FACTS) -> None:
        super().__init__(
            model or configured("extraction_model") or DEFAULT_EXTRACTION_MODEL,
            host,
            timeout if timeout is not None else ollama_timeout(EXTRACT_TIMEOUT),
        )
        self.max_facts = max_facts

    @property
    def options(self) -> dict[str, Any]:
        """Sampling options sent with every request (fixed, so replies are reproducible)."""
        return {"temperature": 0, "seed": SEED, "num_predict": self.max_tokens}

    def messages(self, text: str) -> list[dict[str, str]]:
        """The chat messages for ``text``: system prompt, few-shot pairs, then the text."""
        messages = [{"role": "system", "content": EXTRACTION_SYSTEM_PROMPT}]
        for example, answer in EXTRACTION_EXAMPLES:
            messages.append({"role": "user", "content": f"Note: {example}"})
            messages.append({"role": "assistant", "content": json.dumps(answer)})
        messages.append({"role": "user", "content": f"Note: {text.strip()}"})
        return messages

    def extract(self, text: str) -> list[Triple]:
        """The facts stated in ``text``. Raises ModelError (bad output) or ModelUnavailable."""
        if not text or not text.strip():
            return []
        response = self.chat("extraction", self.messages(text), EXTRACTION_SCHEMA, self.options)
        content = response.message.content if response.message is not None else None
        return validate_facts(content.strip() if isinstance(content, str) else content, self.max_facts)
