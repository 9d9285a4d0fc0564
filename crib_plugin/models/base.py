"""The interfaces every embedder, extractor, reranker and judge implements.

Plugins register implementations through the ``register_embedders`` / ``register_extractors`` /
``register_rerankers`` hooks; the rest of crib only ever sees these protocols.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING, Protocol, Sequence, runtime_checkable

if TYPE_CHECKING:  # pragma: no cover - annotations only: the prefetch worker embeds without
    import numpy as np  # crib's records, and the per-prompt parent never imports numpy

    from ..core.records import Triple


@runtime_checkable
class Embedder(Protocol):
    """Turns text into L2-normalised float32 vectors.

    ``key`` is what the store remembers (``"<name>:<model>:<dim>"``) so vectors of different
    models never mix. Documents and queries are embedded separately because some models
    (nomic-embed-text) want a different prefix for each.
    """

    name: str
    model: str
    dim: int

    def embed_documents(self, texts: Sequence[str]) -> np.ndarray:
        """Return an ``(n, dim)`` float32 array, each row L2-normalised. Raises ModelError."""
        ...

    def embed_query(self, text: str) -> np.ndarray:
        """Return a ``(dim,)`` float32 vector, L2-normalised. Raises ModelError."""
        ...


def embedder_key(embedder: Embedder) -> str:
    """The identity a store records for vectors: name, model and dimension."""
    return f"{embedder.name}:{embedder.model}:{embedder.dim}"


@runtime_checkable
class Extractor(Protocol):
    """Turns free text into fact triples. Deterministic: the same text yields the same triples."""

    name: str

    def extract(self, text: str) -> list[Triple]:
        """Return the facts stated in ``text``; raises ModelError on a model failure."""
        ...


@runtime_checkable
class Reranker(Protocol):
    """Scores candidate memory texts against a prompt; never rewrites them."""

    name: str

    def score(self, query: str, candidates: Sequence[str]) -> list[float]:
        """One relevance score per candidate, higher is better."""
        ...


@dataclass(frozen=True)
class Candidate:
    """What a judge is shown of one memory: its type, its text, its recall cue (may be empty) and
    when it was written (ISO UTC; may be empty) — "what did we decide yesterday?" is judged by date."""

    type: str
    content: str
    cue: str = ""
    created_at: str = ""


class Judge(Protocol):
    """Picks, from a few candidate memories, those that bear on a prompt (``CRIB_JUDGE``,
    :mod:`crib_plugin.read.gate.judging`); reads them, never rewrites them. A judge may also have a ``depth``
    attribute: how many candidates it wants to be shown (default
    :data:`crib_plugin.read.gate.judging.JUDGE_DEPTH`)."""

    def pick(self, prompt: str, candidates: Sequence[Candidate]) -> list[int]:
        """The candidates (0-based) that bear on ``prompt``; ``[]`` when none does. Raises
        ModelError / ModelUnavailable when it cannot say."""
        ...


def l2_normalise(matrix: np.ndarray) -> np.ndarray:
    """Row-wise L2 normalisation that leaves all-zero rows at zero instead of dividing by 0."""
    # deferred: the UserPromptSubmit hook would import it up front (555 ms)
    import numpy as np

    matrix = np.asarray(matrix, dtype=np.float32)
    if matrix.ndim == 1:
        norm = float(np.linalg.norm(matrix))
        return matrix / norm if norm > 0 else matrix
    norms = np.linalg.norm(matrix, axis=1, keepdims=True)
    norms[norms == 0] = 1.0
    return (matrix / norms).astype(np.float32)
