"""all-MiniLM-L6-v2 in plain numpy, the offline embedder (no torch).

:mod:`.embedder` holds :class:`MiniLMEmbedder` (batching, pooling, threads, and the notes on parity
with sentence-transformers), :mod:`.bert` the forward pass and the safetensors loader,
:mod:`.tokenizer` text → token ids, :mod:`.blas` OpenBLAS's thread count. The names other modules
and the tests use are re-exported here, so ``crib_plugin.models.minilm`` stays the import path.
"""

from __future__ import annotations

from .bert import erf, gelu_, load_safetensors
from .blas import _BLAS
from .embedder import MiniLMEmbedder, _plan_batches
from .tokenizer import _load_tokenizer, _TextEncoder

__all__ = ["MiniLMEmbedder", "erf", "gelu_", "load_safetensors", "_BLAS", "_plan_batches", "_load_tokenizer", "_TextEncoder"]
