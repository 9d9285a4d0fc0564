"""The one fake embedder the tests share: deterministic hashed bag-of-words vectors.

Offline, fast and stable across runs (md5 of each word picks a dimension), so writes get vectors
without loading MiniLM. ``conftest.py`` registers it as a plugin (``register_embedders``) under the
name ``fake`` through the ``fake_embedder`` fixture, the way a third-party embedder would be.
"""

from __future__ import annotations

import hashlib
from typing import Any, Sequence

import numpy as np

from crib_plugin import hookimpl

NAME = "fake"


class FakeEmbedder:
    """Hashed bag-of-words: texts sharing words get close vectors; nothing else is modelled."""

    name = NAME
    model = "hash"
    dim = 32
    multilingual = False
    default_floor = 0.99  # the vector channel stays out of the way unless a test lowers it

    def _vec(self, text: str) -> np.ndarray:
        vec = np.zeros(self.dim, dtype=np.float32)
        for word in text.lower().split():
            vec[int(hashlib.md5(word.encode()).hexdigest(), 16) % self.dim] += 1.0
        norm = np.linalg.norm(vec)
        return vec / norm if norm else vec

    def embed_documents(self, texts: Sequence[str]) -> np.ndarray:
        return np.stack([self._vec(t) for t in texts]).astype(np.float32)

    def embed_query(self, text: str) -> np.ndarray:
        return self._vec(text)


class FakeEmbedderPlugin:
    """A plugin object registering :class:`FakeEmbedder` as ``fake``."""

    @hookimpl
    def register_embedders(self, register: Any) -> None:
        register(NAME, FakeEmbedder)
