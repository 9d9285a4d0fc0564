"""all-MiniLM-L6-v2 in plain numpy: the offline embedder, no torch.

``crib retrieve`` is a fresh process for every prompt, and importing sentence-transformers +
torch costs several seconds, so the BERT forward pass is done here with numpy and the
safetensors file mapped straight into memory; text is tokenized by a small Python WordPiece
when it is ASCII and by the Rust ``tokenizers`` library otherwise (see :class:`TextEncoder`).
It reproduces sentence-transformers' output for this model (token embeddings → 6 post-LN BERT
layers with exact-erf GELU and LayerNorm eps 1e-12 → mean pooling over real tokens → L2
normalisation), proven against stored reference vectors in ``tests/test_minilm.py``.

Two details matter for parity:

* the ``tokenizer.json`` shipped with the weights pads every text to 128 tokens and truncates at
  128, while the reference model truncates at 256 and never pads a single text; padding is turned
  off here (batches are padded to their own longest text, and pad tokens are masked out);
* GELU uses the exact error function, not the tanh approximation.

Importing this module reads no weights; they are loaded on the first ``embed_*`` call.
"""

from __future__ import annotations

import json
import os
import threading
from collections.abc import Sequence
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

import numpy as np

from ...core.errors import ModelError
from ..base import l2_normalise
from ..weights import ensure_minilm
from .bert import Bert, load_safetensors
from .blas import BLAS_THREADS
from .tokenizer import TextEncoder

# --------------------------------------------------------------------------------------------
# The embedder


class MiniLMEmbedder:
    """all-MiniLM-L6-v2 sentence embeddings (384 dims, L2-normalised) with numpy only.

    ``model_dir`` names a folder holding ``model.safetensors``, ``tokenizer.json`` and
    ``config.json``; without it the weights come from :func:`crib_plugin.models.weights.ensure_minilm`
    (the user cache, fetched on first need unless ``download`` is false). Nothing is read until
    the first ``embed_*`` call. Texts are embedded in batches of ``batch_size``, sorted by length
    so each batch pads as little as possible; results come back in the input order.

    Batches run on up to ``workers`` threads (default: the number of CPUs, at most 4), each with
    single-threaded BLAS (see :class:`_BlasThreads`); one batch runs in the calling thread.
    """

    name = "minilm"
    model = "all-MiniLM-L6-v2"
    dim = 384
    multilingual = False  # trained on English; CJK texts all land close together

    def __init__(
        self,
        model_dir: Path | str | None = None,
        *,
        batch_size: int = 16,
        workers: int | None = None,
        download: bool = True,
    ) -> None:
        if batch_size < 1:
            raise ValueError("batch_size must be at least 1")
        if workers is not None and workers < 1:
            raise ValueError("workers must be at least 1")
        self._model_dir = Path(model_dir) if model_dir is not None else None
        self._download = download
        self.batch_size = batch_size
        self.workers = workers if workers is not None else max(1, min(4, os.cpu_count() or 1))
        self._encoder: TextEncoder | None = None
        self._bert: Bert | None = None
        self._lock = threading.Lock()

    # -- public API ------------------------------------------------------------------------

    def embed_documents(self, texts: Sequence[str]) -> np.ndarray:
        """Return an ``(n, 384)`` float32 array of L2-normalised embeddings, in input order."""
        if isinstance(texts, str):
            raise TypeError("embed_documents takes a sequence of texts, not one string")
        texts = list(texts)
        if not texts:
            return np.zeros((0, self.dim), dtype=np.float32)
        for text in texts:
            if not isinstance(text, str):
                raise TypeError(f"texts must be str, got {type(text).__name__}")
        encoder, bert = self._loaded()
        ids = [np.asarray(encoder.encode(text), dtype=np.int64) for text in texts]
        chunks = plan_batches([len(seq) for seq in ids], self.batch_size)
        out = np.empty((len(ids), self.dim), dtype=np.float32)

        def run(chunk: list[int]) -> None:
            out[chunk] = self._embed_ids(bert, [ids[i] for i in chunk])

        with BLAS_THREADS.single():
            if len(chunks) == 1 or self.workers == 1:
                for chunk in chunks:
                    run(chunk)
            else:
                # imported here: concurrent.futures pulls in logging (~10 ms), and the
                # per-prompt path (one query, one batch) never needs it
                with ThreadPoolExecutor(max_workers=min(self.workers, len(chunks))) as pool:
                    list(pool.map(run, chunks))  # list(): re-raises a worker's exception
        return out

    def embed_query(self, text: str) -> np.ndarray:
        """Return one ``(384,)`` float32 L2-normalised embedding."""
        return self.embed_documents([text])[0]

    def load(self) -> None:
        """Read the tokenizer and weights now instead of on the first embed (for warm-up)."""
        self._loaded()

    # -- internals -------------------------------------------------------------------------

    def _embed_ids(self, bert: Bert, batch: list[np.ndarray]) -> np.ndarray:
        """Embed token-id arrays (one batch): pad to the longest, forward, mean-pool, normalise."""
        length = max(len(ids) for ids in batch)
        ids = np.zeros((len(batch), length), dtype=np.int64)
        mask = np.zeros((len(batch), length), dtype=np.float32)
        for row, seq in enumerate(batch):
            ids[row, : len(seq)] = seq
            mask[row, : len(seq)] = 1.0
        hidden = bert(ids, mask)
        summed = np.einsum("bld,bl->bd", hidden, mask)
        summed /= np.maximum(mask.sum(axis=1, keepdims=True), 1e-9)
        return l2_normalise(summed)

    def _loaded(self) -> tuple[TextEncoder, Bert]:
        """The text encoder and the BERT weights, loaded on first use (thread-safe)."""
        if self._bert is None or self._encoder is None:
            with self._lock:
                if self._bert is None or self._encoder is None:
                    folder = self._resolve_dir()
                    config = _read_json(folder / "config.json")
                    self._encoder = TextEncoder(folder, int(config.get("vocab_size", 0)))
                    self._bert = Bert(load_safetensors(folder / "model.safetensors"), config)
        return self._encoder, self._bert

    def _resolve_dir(self) -> Path:
        """The model folder: the one given, else the verified cache (fetching if allowed)."""
        if self._model_dir is not None:
            return self._model_dir

        return ensure_minilm(download=self._download)


def plan_batches(
    lengths: Sequence[int], batch_size: int, max_waste: float = 0.25, free_pad: int = 16
) -> list[list[int]]:
    """Group text indices into batches of similar token length.

    Texts are sorted longest first; a batch closes when it holds ``batch_size`` texts or when
    the next text would need more than ``max_waste`` of the batch's longest row in padding (and
    more than ``free_pad`` tokens, which cost next to nothing). So one 256-token text no longer
    drags fifteen short ones to 256, while short texts still share batches.
    """
    order = sorted(range(len(lengths)), key=lambda i: lengths[i], reverse=True)
    batches: list[list[int]] = []
    for index in order:
        current = batches[-1] if batches else None
        if current is not None:
            longest = lengths[current[0]]
            padding = longest - lengths[index]
        if (
            current is None
            or len(current) >= batch_size
            or (padding > free_pad and padding > max_waste * longest)
        ):
            batches.append([index])
        else:
            current.append(index)
    return batches


def _read_json(path: Path) -> dict:
    """A small JSON file as a dict, or ModelError."""
    try:
        return json.loads(path.read_text(encoding="utf-8"))
    except (OSError, ValueError) as exc:
        raise ModelError(f"cannot read {path}: {exc}") from exc
