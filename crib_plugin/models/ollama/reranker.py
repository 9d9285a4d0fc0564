"""The Ollama reranker: grades each (query, passage) pair with a schema-constrained chat, in parallel.

Split from :mod:`crib_plugin.models.ollama_models`, which re-exports it.
"""

from __future__ import annotations

import json
from concurrent.futures import ThreadPoolExecutor
from typing import Any, Sequence

from ..ollama_host import (
    DEFAULT_RERANK_MODEL,
    ollama_timeout,
)
from .client import (
    RERANK_TIMEOUT,
    RERANK_WORKERS,
    SEED,
    OllamaBase,
    configured,
)

RERANK_SCHEMA: dict[str, Any] = {
    "type": "object",
    "properties": {"score": {"type": "integer", "minimum": 0, "maximum": 10}},
    "required": ["score"],
    "additionalProperties": False,
}

RERANK_SYSTEM_PROMPT = """\
You grade how useful a stored memory is for answering a question or request.
Answer with JSON {"score": N}, N an integer from 0 to 10:
10 = the memory directly answers it; 5 = related background; 0 = unrelated.
Grade only; do not repeat or rewrite the memory."""


def parse_grade(content: Any) -> float | None:
    """The 0–10 grade in a rerank reply, or None when the reply does not match :data:`RERANK_SCHEMA`."""
    if not isinstance(content, str):
        return None
    try:
        data = json.loads(content)
    except ValueError:
        return None
    if not isinstance(data, dict) or set(data) != {"score"}:
        return None
    score = data["score"]
    if isinstance(score, bool) or not isinstance(score, int) or not 0 <= score <= 10:
        return None
    return float(score)


class OllamaReranker(OllamaBase):
    """Pointwise relevance grades from a small Ollama chat model (default ``gemma3:1b``).

    For each candidate one ``/api/chat`` request asks for ``{"score": 0..10}`` (JSON schema in
    ``format``, temperature 0, seed 42); :data:`RERANK_WORKERS` (one: a one-slot server only queues
parallel requests) run at a time. Returns one
    float in [0, 10] per candidate, in candidate order. A reply that does not match the schema scores
    that candidate 0 (the model failed to vouch for it; the rest still count). Unreachable server,
    timeout or missing model raise ModelUnavailable and an HTTP error raises ModelError, so the caller
    keeps its un-reranked order. The reranker only reads candidates: it never returns, edits or
    stores memory text.
    """

    role = "rerank"

    def __init__(self, model: str | None = None, host: str | None = None, timeout: float | None = None,
                 workers: int = RERANK_WORKERS) -> None:
        super().__init__(
            model or configured("rerank_model") or DEFAULT_RERANK_MODEL,
            host,
            timeout if timeout is not None else ollama_timeout(RERANK_TIMEOUT),
        )
        self.workers = max(1, int(workers))

    @property
    def options(self) -> dict[str, Any]:
        """Sampling options sent with every request (fixed, so grades are reproducible)."""
        return {"temperature": 0, "seed": SEED, "num_predict": 16}

    def messages(self, query: str, candidate: str) -> list[dict[str, str]]:
        return [
            {"role": "system", "content": RERANK_SYSTEM_PROMPT},
            {"role": "user", "content": f"Question: {query.strip()}\n\nMemory: {candidate.strip()}"},
        ]

    def _grade(self, query: str, candidate: str) -> float:
        response = self.chat("rerank", self.messages(query, candidate), RERANK_SCHEMA, self.options)
        content = response.message.content if response.message is not None else None
        grade = parse_grade(content.strip() if isinstance(content, str) else content)
        return 0.0 if grade is None else grade

    def score(self, query: str, candidates: Sequence[str]) -> list[float]:
        """One grade in [0, 10] per candidate (higher is more relevant). ``[]`` for no candidates."""
        items = list(candidates)
        if not items:
            return []
        if len(items) == 1 or self.workers == 1:
            return [self._grade(query, c) for c in items]
        _ = self.client  # build the shared (thread-safe) client before the worker threads need it
        with ThreadPoolExecutor(max_workers=min(self.workers, len(items))) as pool:
            futures = [pool.submit(self._grade, query, c) for c in items]
            try:
                return [f.result() for f in futures]
            finally:
                for f in futures:
                    f.cancel()
