"""The Ollama embedder (``nomic-embed-text`` by default): batched, L2-normalised, dimension checked.

Split from :mod:`crib_plugin.models.ollama_models`, which re-exports it.
"""

from __future__ import annotations

import functools
from typing import Sequence

import numpy as np

from ...core.errors import ModelError
from ..base import l2_normalise
from ..ollama_host import (
    DEFAULT_EMBEDDING_MODEL,
    base_name,
    ollama_timeout,
)
from .client import (
    EMBED_BATCH,
    EMBED_TIMEOUT,
    OllamaBase,
    configured,
)

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


class OllamaEmbedder(OllamaBase):
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
            model or configured("embedding_model") or DEFAULT_EMBEDDING_MODEL,
            host,
            timeout if timeout is not None else ollama_timeout(EMBED_TIMEOUT),
        )
        self.batch_size = max(1, int(batch_size))
        self._dim: int | None = KNOWN_EMBEDDING_DIMS.get(base_name(self.model))
        self._nomic = base_name(self.model).startswith("nomic-embed-text")

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
            response = self._call("embed", functools.partial(self.client.embed, model=self.model, input=batch, keep_alive=self.keep_alive))
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
