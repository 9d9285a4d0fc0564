"""all-MiniLM-L6-v2 in plain numpy, the offline embedder (no torch).

:mod:`.embedder` holds :class:`MiniLMEmbedder` (batching, pooling, threads, and the notes on parity
with sentence-transformers), :mod:`.bert` the forward pass and the safetensors loader,
:mod:`.tokenizer` text → token ids, :mod:`.blas` OpenBLAS's thread count. The names other modules
and the tests use are re-exported here, so ``crib_plugin.models.minilm`` stays the import path.
"""

from __future__ import annotations

from .bert import erf, gelu_, load_safetensors
from .blas import BLAS_THREADS
from .embedder import MiniLMEmbedder, plan_batches
from .tokenizer import TextEncoder, load_tokenizer

__all__ = ["MiniLMEmbedder", "erf", "gelu_", "load_safetensors", "BLAS_THREADS", "plan_batches", "load_tokenizer", "TextEncoder"]
