"""Embedder, fact extractor and reranker backed by a local Ollama server (official ``ollama`` client).

Why Ollama: it gives crib a stronger embedder (``nomic-embed-text``, 768 dims) and a small instruction
model for fact extraction and reranking without crib shipping any weights. Why these rules:

* **Deterministic extraction.** The seed's extraction was unstable run to run, so every generation here
  runs with ``temperature=0`` and a fixed ``seed`` and is constrained by a JSON schema in ``format``;
  the same text then always yields the same facts. Replies are validated strictly and rejected (never
  repaired or guessed at) when they do not match the schema.
* **Fail fast, fail clean.** These models sit on the hook path, which has a wall-clock budget well under
  Claude Code's 30 s. Per-request timeouts are short (2 s for embedding and reranking by default) and
  every failure — connection refused, timeout, HTTP error, missing model, malformed reply, wrong
  dimension — surfaces as :class:`~crib_plugin.core.errors.ModelUnavailable` (cannot reach / no such model)
  or :class:`~crib_plugin.core.errors.ModelError` (reached, but the answer is unusable), each with a one-line
  message and no chained httpx traceback.
* **Cheap to import.** ``import ollama`` costs about half a second (pydantic + httpx), so it happens
  lazily on the first request, and :func:`probe_ollama` uses only the standard library.

Environment variables honoured:

``OLLAMA_HOST``            server address (default ``http://127.0.0.1:11434``; ``host:port`` accepted)
``CRIB_EMBEDDING_MODEL``   embedder model (default ``nomic-embed-text``)
``CRIB_EXTRACTION_MODEL``  extractor model (default ``gemma3:1b``)
``CRIB_RERANK_MODEL``      reranker model (default ``gemma3:1b``)
``CRIB_OLLAMA_TIMEOUT``    per-request timeout in seconds for all three (defaults: embed 2, rerank 2,
                           extract 30 — extraction runs at write time, not in the prompt hook)
"""

from __future__ import annotations

from .ollama.client import (  # noqa: F401  (re-exported)
    EMBED_BATCH,
    EMBED_TIMEOUT,
    EXTRACT_TIMEOUT,
    MAX_FACTS,
    RERANK_TIMEOUT,
    RERANK_WORKERS,
    SEED,
    OllamaBase,
    T,
    configured,
)
from .ollama.embedder import (  # noqa: F401  (re-exported)
    KNOWN_EMBEDDING_DIMS,
    NOMIC_DOCUMENT_PREFIX,
    NOMIC_QUERY_PREFIX,
    OllamaEmbedder,
)
from .ollama.extractor import (  # noqa: F401  (re-exported)
    EXTRACTION_EXAMPLES,
    EXTRACTION_SCHEMA,
    EXTRACTION_SYSTEM_PROMPT,
    OllamaExtractor,
    validate_facts,
)
from .ollama.reranker import (  # noqa: F401  (re-exported)
    RERANK_SCHEMA,
    RERANK_SYSTEM_PROMPT,
    OllamaReranker,
    parse_grade,
)
from .ollama_host import (  # noqa: F401  # re-exported: the public names of the Ollama backend
    DEFAULT_EMBEDDING_MODEL,
    DEFAULT_EXTRACTION_MODEL,
    DEFAULT_HOST,
    DEFAULT_RERANK_MODEL,
    model_available,
    ollama_host,
    ollama_timeout,
    probe_ollama,
)

__all__ = [
    "DEFAULT_HOST",
    "DEFAULT_EMBEDDING_MODEL",
    "DEFAULT_EXTRACTION_MODEL",
    "DEFAULT_RERANK_MODEL",
    "KNOWN_EMBEDDING_DIMS",
    "EXTRACTION_SCHEMA",
    "RERANK_SCHEMA",
    "ollama_host",
    "ollama_timeout",
    "probe_ollama",
    "model_available",
    "OllamaEmbedder",
    "OllamaExtractor",
    "OllamaReranker",
    "validate_facts",
]
