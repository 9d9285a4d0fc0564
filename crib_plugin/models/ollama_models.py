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
  dimension — surfaces as :class:`~crib_plugin.errors.ModelUnavailable` (cannot reach / no such model)
  or :class:`~crib_plugin.errors.ModelError` (reached, but the answer is unusable), each with a one-line
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

import functools
import json
from concurrent.futures import ThreadPoolExecutor
from typing import TYPE_CHECKING, Any, Callable, Sequence, TypeVar

import numpy as np

from ..errors import ConfigError, ModelError, ModelUnavailable
from ..records import Triple
from .base import l2_normalise
from .ollama_host import (  # re-exported: the public names of the Ollama backend
    DEFAULT_HOST,
    _base_name,
    _is_loopback,
    _one_line,
    model_available,
    ollama_host,
    ollama_timeout,
    probe_ollama,
)

if TYPE_CHECKING:  # pragma: no cover
    import ollama

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

DEFAULT_EMBEDDING_MODEL = "nomic-embed-text"
DEFAULT_EXTRACTION_MODEL = "gemma3:1b"
DEFAULT_RERANK_MODEL = "gemma3:1b"

EMBED_TIMEOUT = 2.0
RERANK_TIMEOUT = 2.0
EXTRACT_TIMEOUT = 30.0

SEED = 42
"""Fixed sampling seed for every generation (with temperature 0, the output is reproducible)."""

MAX_FACTS = 32
"""At most this many facts are kept from one extraction (the rest are dropped, in model order)."""

EMBED_BATCH = 32
"""Texts per ``/api/embed`` request, so one request stays well inside its timeout."""

RERANK_WORKERS = 4
"""Concurrent pointwise rerank requests (Ollama serves them in parallel up to OLLAMA_NUM_PARALLEL)."""

KNOWN_EMBEDDING_DIMS: dict[str, int] = {
    "nomic-embed-text": 768,
    "mxbai-embed-large": 1024,
    "all-minilm": 384,
    "bge-m3": 1024,
    "embeddinggemma": 768,
}
"""Output dimension by model base name (the part before ``:``), for every tag of that model.

Models not listed here (and models such as snowflake-arctic-embed, whose tags differ in size) have
their dimension discovered from the first embedding instead.
"""

NOMIC_DOCUMENT_PREFIX = "search_document: "
NOMIC_QUERY_PREFIX = "search_query: "

T = TypeVar("T")


# ----------------------------------------------------------------------------------------------
# Shared client plumbing
# ----------------------------------------------------------------------------------------------



def _configured(name: str) -> Any:
    """A model setting (``embedding_model``…) from :func:`crib_plugin.config.get_settings`."""
    from ..config import get_settings

    return getattr(get_settings(), name)

class _OllamaBase:
    """Holds host, model and timeout, builds the ``ollama.Client`` lazily and maps its errors."""

    name = "ollama"
    role = "model"

    def __init__(self, model: str, host: str | None, timeout: float) -> None:
        if not model or not model.strip():
            raise ConfigError(f"empty Ollama {self.role} model name")
        self.model = model.strip()
        self.host = ollama_host(host)
        self.timeout = float(timeout)
        self._client: ollama.Client | None = None

    @property
    def client(self) -> "ollama.Client":
        """The ``ollama.Client`` (created on first use; imports ``ollama`` then)."""
        if self._client is None:
            try:
                import httpx
                import ollama
            except ImportError as exc:  # pragma: no cover - a declared dependency
                raise ModelUnavailable(f"the ollama package is not installed ({exc})") from None
            # Loopback never goes through an HTTP proxy (httpx would otherwise honour HTTP_PROXY), and
            # plain http on loopback needs no TLS context (building the default one costs ~100 ms).
            loopback = _is_loopback(self.host)
            plain = loopback and self.host.startswith("http://")
            self._client = ollama.Client(
                host=self.host,
                timeout=httpx.Timeout(self.timeout, connect=min(self.timeout, 1.0)),
                trust_env=not loopback,
                **({"verify": False} if plain else {}),
            )
        return self._client

    def close(self) -> None:
        """Close the HTTP connection pool (optional; it is also closed when garbage-collected)."""
        if self._client is not None:
            self._client.close()
            self._client = None

    def __repr__(self) -> str:
        return f"{type(self).__name__}(model={self.model!r}, host={self.host!r}, timeout={self.timeout:g})"

    def _call(self, what: str, fn: Callable[[], T]) -> T:
        """Run one client request, turning every failure into a one-line ModelError/ModelUnavailable."""
        import httpx
        import ollama
        import pydantic

        try:
            return fn()
        except ollama.ResponseError as exc:
            status = exc.status_code
            message = _one_line(exc.error)
            if status == 404 or "not found" in message.lower():
                raise ModelUnavailable(
                    f"ollama model {self.model!r} not found at {self.host}: run `ollama pull {self.model}`"
                ) from None
            raise ModelError(f"ollama {what} with {self.model!r} failed: HTTP {status}: {message}") from None
        except httpx.TimeoutException:
            raise ModelUnavailable(
                f"ollama at {self.host} did not answer the {what} request within {self.timeout:g}s"
            ) from None
        except ConnectionError:  # the client's translation of httpx.ConnectError
            raise ModelUnavailable(f"ollama is not reachable at {self.host} (connection refused)") from None
        except httpx.HTTPError as exc:
            raise ModelUnavailable(
                _one_line(f"ollama at {self.host} dropped the {what} request: {type(exc).__name__}: {exc}")
            ) from None
        except (ValueError, pydantic.ValidationError) as exc:  # JSONDecodeError is a ValueError
            raise ModelError(
                _one_line(f"ollama {what} with {self.model!r} returned a malformed reply: {type(exc).__name__}")
            ) from None
        except ollama.RequestError as exc:
            raise ModelError(_one_line(f"ollama {what} request rejected: {exc}")) from None
        except OSError as exc:
            raise ModelUnavailable(_one_line(f"ollama at {self.host}: {exc}")) from None


# ----------------------------------------------------------------------------------------------
# Embedder
# ----------------------------------------------------------------------------------------------


class OllamaEmbedder(_OllamaBase):
    """Embeddings from Ollama's ``/api/embed`` (default ``nomic-embed-text``, 768 dims).

    ``dim`` is known up front for the models in :data:`KNOWN_EMBEDDING_DIMS`; for any other model it
    is discovered lazily: reading ``dim`` before any embedding was made sends one short embedding
    request (and so may raise ModelUnavailable; note that on Python < 3.12 ``isinstance(x, Embedder)``
    reads ``dim`` too). Every reply is checked against ``dim`` — a model
    that answers with another dimension raises ModelError rather than corrupting the vector table.

    nomic-embed-text is trained with task prefixes, so documents are sent as
    ``"search_document: …"`` and queries as ``"search_query: …"`` (texts already carrying a prefix are
    left alone). Vectors are returned as float32 and L2-normalised.
    """

    role = "embedding"

    def __init__(self, model: str | None = None, host: str | None = None, timeout: float | None = None,
                 batch_size: int = EMBED_BATCH) -> None:
        super().__init__(
            model or _configured("embedding_model") or DEFAULT_EMBEDDING_MODEL,
            host,
            timeout if timeout is not None else ollama_timeout(EMBED_TIMEOUT),
        )
        self.batch_size = max(1, int(batch_size))
        self._dim: int | None = KNOWN_EMBEDDING_DIMS.get(_base_name(self.model))
        self._nomic = _base_name(self.model).startswith("nomic-embed-text")

    @property
    def dim(self) -> int:
        """Output dimension (may send one request for a model not in KNOWN_EMBEDDING_DIMS)."""
        if self._dim is None:
            self._embed(["dimension probe"])
        assert self._dim is not None
        return self._dim

    @property
    def key(self) -> str:
        """``"ollama:<model>:<dim>"``: the identity the store keeps with these vectors."""
        return f"{self.name}:{self.model}:{self.dim}"

    def _prefixed(self, texts: Sequence[str], prefix: str) -> list[str]:
        if not self._nomic:
            return list(texts)
        out = []
        for text in texts:
            stripped = text.lstrip().lower()
            has_prefix = stripped.startswith(("search_document:", "search_query:", "clustering:", "classification:"))
            out.append(text if has_prefix else prefix + text)
        return out

    def _embed(self, texts: list[str]) -> np.ndarray:
        """Embed already-prefixed texts in batches; returns normalised float32 rows."""
        rows: list[np.ndarray] = []
        for start in range(0, len(texts), self.batch_size):
            batch = texts[start : start + self.batch_size]
            response = self._call("embed", functools.partial(self.client.embed, model=self.model, input=batch))
            vectors = response.embeddings
            if vectors is None or len(vectors) != len(batch):
                got = 0 if vectors is None else len(vectors)
                raise ModelError(f"ollama embed with {self.model!r} returned {got} vectors for {len(batch)} texts")
            try:
                matrix = np.asarray(vectors, dtype=np.float32)
            except (ValueError, TypeError):
                raise ModelError(f"ollama embed with {self.model!r} returned ragged vectors") from None
            if matrix.ndim != 2 or matrix.shape[1] == 0:
                raise ModelError(f"ollama embed with {self.model!r} returned vectors of shape {matrix.shape}")
            if self._dim is None:
                self._dim = int(matrix.shape[1])
            elif matrix.shape[1] != self._dim:
                raise ModelError(
                    f"ollama embed with {self.model!r} returned {matrix.shape[1]}-dim vectors, expected {self._dim}"
                )
            if not np.isfinite(matrix).all():
                raise ModelError(f"ollama embed with {self.model!r} returned non-finite values")
            rows.append(l2_normalise(matrix))
        return np.concatenate(rows, axis=0) if rows else np.zeros((0, self._dim or 0), dtype=np.float32)

    def embed_documents(self, texts: Sequence[str]) -> np.ndarray:
        """``(n, dim)`` float32, rows L2-normalised. An empty list returns ``(0, dim)`` without a request
        (``(0, 0)`` if the dimension is not yet known). Raises ModelError / ModelUnavailable."""
        if isinstance(texts, str):
            raise TypeError("embed_documents takes a sequence of texts, not a single string")
        if len(texts) == 0:
            return np.zeros((0, self._dim or 0), dtype=np.float32)
        return self._embed(self._prefixed(texts, NOMIC_DOCUMENT_PREFIX))

    def embed_query(self, text: str) -> np.ndarray:
        """``(dim,)`` float32, L2-normalised. Raises ModelError / ModelUnavailable."""
        return self._embed(self._prefixed([text], NOMIC_QUERY_PREFIX))[0]


# ----------------------------------------------------------------------------------------------
# Extractor
# ----------------------------------------------------------------------------------------------

EXTRACTION_SCHEMA: dict[str, Any] = {
    "type": "object",
    "properties": {
        "facts": {
            "type": "array",
            "items": {
                "type": "object",
                "properties": {
                    "subject": {"type": "string"},
                    "predicate": {"type": "string"},
                    "object": {"type": "string"},
                },
                "required": ["subject", "predicate", "object"],
                "additionalProperties": False,
            },
        }
    },
    "required": ["facts"],
    "additionalProperties": False,
}
"""The JSON schema sent in ``format``; Ollama constrains decoding to it and crib re-checks the reply."""

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


def validate_facts(content: Any, max_facts: int = MAX_FACTS) -> list[Triple]:
    """Parse and strictly validate an extraction reply against :data:`EXTRACTION_SCHEMA`.

    The reply must be a JSON object with exactly the key ``facts``, a list of objects with exactly
    the string keys ``subject``, ``predicate``, ``object``, each non-empty after stripping whitespace.
    Any violation raises ``ModelError("extraction model returned invalid JSON: …")`` — the reply is
    rejected, never repaired. Exact duplicates (after stripping) are dropped, keeping the first; at
    most ``max_facts`` facts are kept.
    """

    def invalid(reason: str) -> ModelError:
        return ModelError(_one_line(f"extraction model returned invalid JSON: {reason}"))

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
        if not isinstance(item, dict):
            raise invalid(f"facts[{i}] is {type(item).__name__}, not an object")
        keys = set(item)
        if keys != {"subject", "predicate", "object"}:
            missing = sorted({"subject", "predicate", "object"} - keys)
            extra = sorted(keys - {"subject", "predicate", "object"})
            raise invalid(f"facts[{i}] missing {missing}" if missing else f"facts[{i}] has unexpected keys {extra}")
        values = []
        for key in ("subject", "predicate", "object"):
            value = item[key]
            if not isinstance(value, str):
                raise invalid(f"facts[{i}].{key} is {type(value).__name__}, not a string")
            value = value.strip()
            if not value:
                raise invalid(f"facts[{i}].{key} is empty")
            values.append(value)
        triple = Triple(*values)
        if triple not in seen:
            seen.add(triple)
            triples.append(triple)
    return triples[:max_facts]


class OllamaExtractor(_OllamaBase):
    """Fact triples from a small Ollama chat model (default ``gemma3:1b``), deterministically.

    Each call sends one ``/api/chat`` request: a system prompt defining triples, three few-shot
    exchanges, the text; ``format`` = :data:`EXTRACTION_SCHEMA`; ``options`` = temperature 0, seed 42
    and a bound on generated tokens; ``stream=False``. The reply goes through :func:`validate_facts`
    (invalid → ModelError, never guessed). Empty text returns ``[]`` without a request.
    """

    role = "extraction"
    max_tokens = 1024

    def __init__(self, model: str | None = None, host: str | None = None, timeout: float | None = None,
                 max_facts: int = MAX_FACTS) -> None:
        super().__init__(
            model or _configured("extraction_model") or DEFAULT_EXTRACTION_MODEL,
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
        response = self._call(
            "extraction",
            lambda: self.client.chat(
                model=self.model,
                messages=self.messages(text),
                format=EXTRACTION_SCHEMA,
                options=self.options,
                stream=False,
            ),
        )
        content = response.message.content if response.message is not None else None
        return validate_facts(content.strip() if isinstance(content, str) else content, self.max_facts)


# ----------------------------------------------------------------------------------------------
# Reranker
# ----------------------------------------------------------------------------------------------

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


class OllamaReranker(_OllamaBase):
    """Pointwise relevance grades from a small Ollama chat model (default ``gemma3:1b``).

    For each candidate one ``/api/chat`` request asks for ``{"score": 0..10}`` (JSON schema in
    ``format``, temperature 0, seed 42); up to :data:`RERANK_WORKERS` run concurrently. Returns one
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
            model or _configured("rerank_model") or DEFAULT_RERANK_MODEL,
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
        response = self._call(
            "rerank",
            lambda: self.client.chat(
                model=self.model,
                messages=self.messages(query, candidate),
                format=RERANK_SCHEMA,
                options=self.options,
                stream=False,
            ),
        )
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
