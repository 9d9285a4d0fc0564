"""all-MiniLM-L6-v2 in plain numpy: the offline embedder, no torch.

``crib retrieve`` is a fresh process for every prompt, and importing sentence-transformers +
torch costs several seconds, so the BERT forward pass is done here with numpy and the
safetensors file mapped straight into memory; text is tokenized by a small Python WordPiece
when it is ASCII and by the Rust ``tokenizers`` library otherwise (see :class:`_TextEncoder`).
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

import contextlib
import json
import mmap
import os
import re
import sys
import threading
from collections.abc import Callable, Iterator, Sequence
from pathlib import Path
from typing import TYPE_CHECKING

import numpy as np

from ..errors import ModelError
from .base import l2_normalise

if TYPE_CHECKING:  # pragma: no cover
    from tokenizers import Tokenizer

MAX_TOKENS = 256  # sentence-transformers' max_seq_length for this model
LAYER_NORM_EPS = 1e-12

#: safetensors dtype names → numpy dtypes (the format is little-endian whatever the machine)
_DTYPES = {"F32": "<f4", "F16": "<f2", "F64": "<f8", "I64": "<i8", "I32": "<i4"}


# --------------------------------------------------------------------------------------------
# Exact-erf GELU


# erf(z) ≈ z·P(z²)/Q(z²) on [-4, 4] (±1 beyond). The rational approximation is the one Eigen
# and XLA use for float32 erf; evaluated in float64 its largest error over the real line is
# 6.5e-8 (9.5e-8 after rounding to float32). Evaluated in float32 the rounding of Horner's
# scheme alone would reach 4e-7, so the polynomial runs in float64 on cache-sized slices,
# which costs about 8 % more forward-pass time than float32 would.
_ERF_P = (
    -2.72614225801306e-10,
    2.77068142495902e-08,
    -2.10102402082508e-06,
    -5.69250639462346e-05,
    -7.34990630326855e-04,
    -2.95459980854025e-03,
    -1.60960333262415e-02,
)  # highest power first
_ERF_Q = (
    -1.45660718464996e-05,
    -2.13374055278905e-04,
    -1.68282697438203e-03,
    -7.37332916720468e-03,
    -1.42647390514189e-02,
)
_SQRT1_2 = 0.7071067811865476

#: Elementwise work runs over slices of this many values (128 KiB of float64 per scratch
#: buffer, three buffers fit a 512 KiB L2): big enough that numpy's per-call overhead vanishes,
#: small enough that the scratch stays in cache and is reused. Whole-array temporaries (17 MB
#: for a batch) were freshly allocated and page-faulted in on every call: GELU ran 3x slower.
_CHUNK = 16384


def erf(x: np.ndarray) -> np.ndarray:
    """The error function, elementwise, as float64 (numpy has none; scipy is not a dependency).

    Absolute error below 1e-7 everywhere.
    """
    z = np.array(x, dtype=np.float64).reshape(-1)  # a copy: _erf_into overwrites it
    p, q = np.empty_like(z), np.empty_like(z)
    _erf_into(z, p, q)
    return p.reshape(np.shape(x))


def _erf_into(z: np.ndarray, p: np.ndarray, q: np.ndarray) -> None:
    """``p[:] = erf(z)`` for 1-D float64 arrays of equal size; ``z`` is overwritten and ``q`` is
    scratch. Horner's scheme in z² with in-place ops, so nothing is allocated."""
    np.clip(z, -4.0, 4.0, out=z)
    z2 = q  # q holds z² while the numerator is built; then z takes it over and q is free
    np.multiply(z, z, out=z2)
    np.multiply(z2, _ERF_P[0], out=p)
    p += _ERF_P[1]
    for c in _ERF_P[2:]:
        p *= z2
        p += c
    p *= z  # p is the numerator; z is no longer needed, so it takes over z²
    np.copyto(z, z2)
    np.multiply(z, _ERF_Q[0], out=q)
    q += _ERF_Q[1]
    for c in _ERF_Q[2:]:
        q *= z
        q += c
    p /= q


def gelu_(x: np.ndarray) -> np.ndarray:
    """GELU with the exact erf, ``x·½·(1 + erf(x/√2))``, in place on a float32 array, slice by
    slice (see ``_CHUNK``); the factor is computed in float64, the result stored as float32."""
    if not x.flags.c_contiguous:
        x[...] = gelu_(np.ascontiguousarray(x, dtype=np.float32))
        return x
    flat = x.reshape(-1)
    size = max(1, min(_CHUNK, flat.size))
    z_buf, p_buf, q_buf = (np.empty(size, dtype=np.float64) for _ in range(3))
    for start in range(0, flat.size, size):
        xs = flat[start : start + size]
        n = xs.size
        z, p = z_buf[:n], p_buf[:n]
        np.multiply(xs, _SQRT1_2, out=z, dtype=np.float64)
        _erf_into(z, p, q_buf[:n])
        p += 1.0
        p *= 0.5
        np.multiply(xs, p, out=xs, casting="same_kind")
    return x


# --------------------------------------------------------------------------------------------
# Weights


def load_safetensors(path: Path) -> dict[str, np.ndarray]:
    """Map a safetensors file into read-only numpy arrays without copying.

    The format is an 8-byte little-endian header length, a JSON header (name → dtype, shape,
    byte range) and the raw tensor bytes; reading it by hand lets the OS page in only the
    parts that are used (for the 47 MB token-embedding matrix, a few rows per query), which is
    what keeps a cold ``crib retrieve`` fast. Anything unexpected falls back to
    ``safetensors.numpy.load_file``.
    """
    try:
        with open(path, "rb") as handle:
            buffer = mmap.mmap(handle.fileno(), 0, access=mmap.ACCESS_READ)
        header_len = int.from_bytes(buffer[:8], "little")
        header = json.loads(buffer[8 : 8 + header_len])
        base = 8 + header_len
        tensors: dict[str, np.ndarray] = {}
        for name, info in header.items():
            if name == "__metadata__":
                continue
            dtype = np.dtype(_DTYPES[info["dtype"]])  # KeyError (e.g. BF16): library fallback
            start, end = info["data_offsets"]
            count = (end - start) // dtype.itemsize
            array = np.frombuffer(buffer, dtype=dtype, count=count, offset=base + start)
            tensors[name] = array.reshape(info["shape"])
        return tensors
    except (ValueError, KeyError, TypeError):
        return _load_with_safetensors(path)
    except OSError as exc:
        raise ModelError(f"cannot read MiniLM weights {path}: {exc}") from exc


def _load_with_safetensors(path: Path) -> dict[str, np.ndarray]:
    """The library loader (copies the file into memory); used when the fast path declines."""
    try:
        from safetensors.numpy import load_file

        return load_file(str(path))
    except Exception as exc:
        raise ModelError(f"cannot read MiniLM weights {path}: {exc}") from exc


class _Layer:
    """One BERT encoder layer's weights as transposed views of the mapped file (``x @ W``).

    Query, key and value stay three matrices written into one output: fusing them into one
    matrix copies 10 MB at load, which cost a cold process ~10 ms and gained nothing
    measurable in bulk.
    """

    __slots__ = (
        "down_b",
        "down_w",
        "ln1_b",
        "ln1_g",
        "ln2_b",
        "ln2_g",
        "out_b",
        "out_w",
        "qkv_b",
        "qkv_w",
        "up_b",
        "up_w",
    )

    def __init__(self, w: dict[str, np.ndarray], prefix: str) -> None:
        att = f"{prefix}.attention"
        qkv = ("query", "key", "value")
        # transposed views: BLAS reads them in place, no copy
        self.qkv_w = tuple(_f32(w[f"{att}.self.{n}.weight"]).T for n in qkv)
        self.qkv_b = np.concatenate([_f32(w[f"{att}.self.{n}.bias"]) for n in qkv])
        self.out_w = _f32(w[f"{att}.output.dense.weight"]).T
        self.out_b = _f32(w[f"{att}.output.dense.bias"])
        self.ln1_g = _f32(w[f"{att}.output.LayerNorm.weight"])
        self.ln1_b = _f32(w[f"{att}.output.LayerNorm.bias"])
        self.up_w = _f32(w[f"{prefix}.intermediate.dense.weight"]).T
        self.up_b = _f32(w[f"{prefix}.intermediate.dense.bias"])
        self.down_w = _f32(w[f"{prefix}.output.dense.weight"]).T
        self.down_b = _f32(w[f"{prefix}.output.dense.bias"])
        self.ln2_g = _f32(w[f"{prefix}.output.LayerNorm.weight"])
        self.ln2_b = _f32(w[f"{prefix}.output.LayerNorm.bias"])


def _f32(array: np.ndarray) -> np.ndarray:
    """The array as float32, without a copy when it already is."""
    return np.asarray(array, dtype=np.float32)


class _Bert:
    """The MiniLM-L6-H384 BERT encoder: weights plus the numpy forward pass."""

    def __init__(self, weights: dict[str, np.ndarray], config: dict) -> None:
        try:
            self.heads = int(config["num_attention_heads"])
            self.hidden = int(config["hidden_size"])
            self.eps = float(config.get("layer_norm_eps", LAYER_NORM_EPS))
            self.word = _f32(weights["embeddings.word_embeddings.weight"])
            self.position = _f32(weights["embeddings.position_embeddings.weight"])
            self.token_type0 = _f32(weights["embeddings.token_type_embeddings.weight"][0])
            self.emb_ln_g = _f32(weights["embeddings.LayerNorm.weight"])
            self.emb_ln_b = _f32(weights["embeddings.LayerNorm.bias"])
            self.layers = [
                _Layer(weights, f"encoder.layer.{i}")
                for i in range(int(config["num_hidden_layers"]))
            ]
        except (KeyError, IndexError, ValueError, TypeError) as exc:
            raise ModelError(
                f"MiniLM weights do not match the expected BERT layout: {exc}"
            ) from exc
        self.head_dim = self.hidden // self.heads
        self.scale = np.float32(1.0 / np.sqrt(self.head_dim))

    def __call__(self, ids: np.ndarray, mask: np.ndarray) -> np.ndarray:
        """Last hidden states ``(batch, length, hidden)`` for token ids and a 0/1 attention mask."""
        batch, length = ids.shape
        h = self.word[ids]  # gather: copies only the rows used
        h += self.position[:length]
        h += self.token_type0
        h = h.reshape(batch * length, self.hidden)
        self._layer_norm(h, self.emb_ln_g, self.emb_ln_b)
        bias = None
        if not mask.all():  # padded batch: pad keys get a large negative score
            bias = np.where(mask[:, None, None, :] > 0, 0.0, np.finfo(np.float32).min)
            bias = bias.astype(np.float32)
        for layer in self.layers:
            h = self._layer(h, layer, batch, length, bias)
        return h.reshape(batch, length, self.hidden)

    def _layer(
        self, h: np.ndarray, layer: _Layer, batch: int, length: int, bias: np.ndarray | None
    ) -> np.ndarray:
        """One post-LN encoder layer on flattened hidden states ``(batch·length, hidden)``."""
        width = self.hidden
        qkv = np.empty((h.shape[0], 3 * width), dtype=np.float32)
        for i, w in enumerate(layer.qkv_w):
            np.matmul(h, w, out=qkv[:, i * width : (i + 1) * width])
        qkv += layer.qkv_b
        # (batch·length, 3·hidden) → three (batch, heads, length, head_dim) views
        qkv = qkv.reshape(batch, length, 3, self.heads, self.head_dim).transpose(2, 0, 3, 1, 4)
        q, k, v = qkv[0], qkv[1], qkv[2]
        scores = q @ k.transpose(0, 1, 3, 2)
        scores *= self.scale
        if bias is not None:
            scores += bias
        _softmax_(scores)
        context = (scores @ v).transpose(0, 2, 1, 3).reshape(batch * length, self.hidden)
        attn = context @ layer.out_w
        attn += layer.out_b
        attn += h
        self._layer_norm(attn, layer.ln1_g, layer.ln1_b)
        up = attn @ layer.up_w
        up += layer.up_b
        gelu_(up)
        out = up @ layer.down_w
        out += layer.down_b
        out += attn
        self._layer_norm(out, layer.ln2_g, layer.ln2_b)
        return out

    def _layer_norm(self, x: np.ndarray, gamma: np.ndarray, beta: np.ndarray) -> None:
        """LayerNorm over the last axis, in place (biased variance, eps inside the sqrt)."""
        x -= x.mean(axis=-1, keepdims=True)
        var = np.einsum("ij,ij->i", x, x)[:, None]
        var /= x.shape[-1]
        var += self.eps
        np.sqrt(var, out=var)
        x /= var
        x *= gamma
        x += beta


def _softmax_(scores: np.ndarray) -> None:
    """Softmax over the last axis, in place on a C-contiguous array, a block of rows at a time
    (see ``_CHUNK``)."""
    rows = scores.reshape(-1, scores.shape[-1])
    step = max(1, _CHUNK // rows.shape[1])
    for start in range(0, rows.shape[0], step):
        block = rows[start : start + step]
        block -= block.max(axis=1, keepdims=True)
        np.exp(block, out=block)
        block /= block.sum(axis=1, keepdims=True)


# --------------------------------------------------------------------------------------------
# BLAS threads


class _BlasThreads:
    """Runs the forward pass with single-threaded OpenBLAS, restoring the old setting after.

    Why: OpenBLAS splits each matrix multiply across all cores and then waits for every
    thread. When another process keeps a core busy (a build, a test run, the agent itself),
    each multiply stalls for a scheduler time slice: measured here, a 3-token query went from
    15 ms to 650 ms and bulk embedding ran 2x slower. Single-threaded BLAS plus one Python
    worker per batch (numpy releases the GIL) uses the cores just as well when they are free
    and degrades gently when they are not.

    The setting is process-wide, so nested/concurrent users are reference-counted. Where the
    BLAS is not OpenBLAS (Accelerate, MKL) or cannot be found, this is a no-op.
    """

    def __init__(self) -> None:
        self._lock = threading.Lock()
        self._depth = 0
        self._saved = 0
        self._funcs: tuple[Callable[[], int], Callable[[int], None]] | None | bool = False

    @contextlib.contextmanager
    def single(self) -> Iterator[None]:
        """Within the block, OpenBLAS uses one thread."""
        with self._lock:
            funcs = self._resolve()
            if funcs and self._depth == 0:
                self._saved = int(funcs[0]())
                funcs[1](1)
            self._depth += 1
        try:
            yield
        finally:
            with self._lock:
                self._depth -= 1
                if funcs and self._depth == 0 and self._saved > 1:
                    funcs[1](self._saved)

    def _resolve(self) -> tuple[Callable[[], int], Callable[[int], None]] | None:
        """Find OpenBLAS's get/set_num_threads in the loaded libraries, once."""
        if self._funcs is False:
            self._funcs = _find_openblas()
        return self._funcs or None  # type: ignore[return-value]


def _find_openblas() -> tuple[Callable[[], int], Callable[[int], None]] | None:
    """``(get_num_threads, set_num_threads)`` of the OpenBLAS numpy loaded, or None."""
    import ctypes

    for path in _loaded_openblas_paths():
        try:
            lib = ctypes.CDLL(path)
        except OSError:
            continue
        for prefix in ("scipy_openblas", "openblas"):
            for suffix in ("64_", ""):
                getter = getattr(lib, f"{prefix}_get_num_threads{suffix}", None)
                setter = getattr(lib, f"{prefix}_set_num_threads{suffix}", None)
                if getter is not None and setter is not None:
                    getter.restype = ctypes.c_int
                    setter.argtypes = [ctypes.c_int]
                    setter.restype = None
                    return getter, setter
    return None


def _loaded_openblas_paths() -> list[str]:
    """Paths of OpenBLAS libraries mapped into this process (Linux), else those bundled next
    to numpy (other platforms' wheels)."""
    paths: list[str] = []
    if sys.platform.startswith("linux"):
        with (
            contextlib.suppress(OSError),
            open("/proc/self/maps", encoding="utf-8", errors="replace") as maps,
        ):
            for line in maps:
                path = line.rstrip("\n").split(maxsplit=5)[-1]
                if "openblas" in path.lower() and path.startswith("/") and path not in paths:
                    paths.append(path)
        return paths
    numpy_dir = Path(np.__file__).parent
    for folder in (numpy_dir.parent / "numpy.libs", numpy_dir / ".libs", numpy_dir / ".dylibs"):
        if folder.is_dir():
            paths.extend(str(p) for p in sorted(folder.iterdir()) if "openblas" in p.name.lower())
    return paths


_BLAS = _BlasThreads()


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
        self._encoder: _TextEncoder | None = None
        self._bert: _Bert | None = None
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
        chunks = _plan_batches([len(seq) for seq in ids], self.batch_size)
        out = np.empty((len(ids), self.dim), dtype=np.float32)

        def run(chunk: list[int]) -> None:
            out[chunk] = self._embed_ids(bert, [ids[i] for i in chunk])

        with _BLAS.single():
            if len(chunks) == 1 or self.workers == 1:
                for chunk in chunks:
                    run(chunk)
            else:
                # imported here: concurrent.futures pulls in logging (~10 ms), and the
                # per-prompt path (one query, one batch) never needs it
                from concurrent.futures import ThreadPoolExecutor

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

    def _embed_ids(self, bert: _Bert, batch: list[np.ndarray]) -> np.ndarray:
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

    def _loaded(self) -> tuple[_TextEncoder, _Bert]:
        """The text encoder and the BERT weights, loaded on first use (thread-safe)."""
        if self._bert is None or self._encoder is None:
            with self._lock:
                if self._bert is None or self._encoder is None:
                    folder = self._resolve_dir()
                    config = _read_json(folder / "config.json")
                    self._encoder = _TextEncoder(folder, int(config.get("vocab_size", 0)))
                    self._bert = _Bert(load_safetensors(folder / "model.safetensors"), config)
        return self._encoder, self._bert

    def _resolve_dir(self) -> Path:
        """The model folder: the one given, else the verified cache (fetching if allowed)."""
        if self._model_dir is not None:
            return self._model_dir
        from .weights import ensure_minilm

        return ensure_minilm(download=self._download)


def _plan_batches(
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


# --------------------------------------------------------------------------------------------
# Tokenizing


class _TextEncoder:
    """Text → token ids exactly as the reference tokenizer makes them (at most 256 ids).

    ASCII text, which is most prompts and code, is tokenized here in Python from
    ``vocab.txt``: loading that takes ~3 ms, while loading the Rust ``tokenizers`` library and
    its ``tokenizer.json`` takes 25–80 ms, the largest part of a cold ``crib retrieve``. The
    rules for ASCII are short (drop control characters, lowercase, split on spaces and
    punctuation, the five special tokens, greedy WordPiece) and tests check them against the
    Rust tokenizer. Any other text goes to the Rust tokenizer, loaded the first time it is
    needed, so Unicode normalisation, accents and CJK stay the library's job.
    """

    def __init__(self, folder: Path, vocab_size: int) -> None:
        self._folder = folder
        self._vocab = _read_vocab(folder / "vocab.txt", vocab_size)
        self._pieces: dict[str, list[int]] = {}
        self._rust: Tokenizer | None = None
        self._lock = threading.Lock()

    def encode(self, text: str) -> list[int]:
        """Token ids of ``text`` with [CLS] … [SEP], truncated to 256 ids in all."""
        if self._vocab is not None and text.isascii():
            return self._encode_ascii(text, self._vocab)
        return self._rust_tokenizer().encode(text).ids

    def _encode_ascii(self, text: str, vocab: dict[str, int]) -> list[int]:
        """BERT's uncased tokenizer restricted to ASCII input (see the class docstring)."""
        ids: list[int] = []
        budget = MAX_TOKENS - 2
        for n, segment in enumerate(_SPECIAL_TOKENS.split(text)):
            if n % 2:  # a literal special token such as [SEP]: matched before normalising
                ids.append(vocab[segment])
            else:
                for word in _ASCII_WORDS.findall(segment.translate(_ASCII_NORMALISE)):
                    ids.extend(self._wordpiece(word, vocab))
                    if len(ids) >= budget:
                        break
            if len(ids) >= budget:
                break
        return [vocab["[CLS]"], *ids[:budget], vocab["[SEP]"]]

    def _wordpiece(self, word: str, vocab: dict[str, int]) -> list[int]:
        """The word's WordPiece ids, memoised (bulk text repeats its words a lot)."""
        pieces = self._pieces.get(word)
        if pieces is None:
            pieces = _greedy_pieces(word, vocab)
            if len(self._pieces) < _PIECE_CACHE:
                self._pieces[word] = pieces
        return pieces

    def _rust_tokenizer(self) -> Tokenizer:
        """The ``tokenizers`` library's tokenizer, loaded on first use (thread-safe)."""
        if self._rust is None:
            with self._lock:
                if self._rust is None:
                    self._rust = _load_tokenizer(self._folder / "tokenizer.json")
        return self._rust


_MAX_WORD_CHARS = 100  # WordPiece's max_input_chars_per_word in tokenizer.json
_PIECE_CACHE = 100_000  # memoised words; beyond that, new words are just not remembered
#: the special tokens, matched on the raw text as the library does (normalized: false)
_SPECIAL_TOKENS = re.compile(r"(\[(?:PAD|UNK|CLS|SEP|MASK)\])")
#: BertNormalizer on ASCII: drop control characters (not tab/newline/CR, which become
#: spaces), lowercase; accents and CJK handling do not apply
_ASCII_NORMALISE: dict[int, int | None] = {
    c: None for c in (*range(9), 11, 12, *range(14, 32), 127)
}
_ASCII_NORMALISE.update({9: 32, 10: 32, 13: 32})
_ASCII_NORMALISE.update({c: c + 32 for c in range(ord("A"), ord("Z") + 1)})
#: BertPreTokenizer on normalised ASCII: runs of letters/digits, and each punctuation
#: character on its own (spaces only separate)
_ASCII_WORDS = re.compile(r"[a-z0-9]+|[!-/:-@\[-`{-~]")


def _greedy_pieces(word: str, vocab: dict[str, int]) -> list[int]:
    """Greedy longest-match-first WordPiece (continuations prefixed ``##``). A word it cannot
    cover, or one longer than 100 characters, becomes a single [UNK], as in the library."""
    unknown = [vocab["[UNK]"]]
    if len(word) > _MAX_WORD_CHARS:
        return unknown
    pieces: list[int] = []
    start = 0
    while start < len(word):
        end = len(word)
        while end > start:
            token_id = vocab.get(word[start:end] if start == 0 else "##" + word[start:end])
            if token_id is not None:
                pieces.append(token_id)
                break
            end -= 1
        else:
            return unknown
        start = end
    return pieces


def _read_vocab(path: Path, vocab_size: int) -> dict[str, int] | None:
    """``vocab.txt`` as token → id, or None (Rust tokenizer only) when it is missing or does
    not look like this model's vocabulary."""
    try:
        tokens = path.read_text(encoding="utf-8").split("\n")
    except (OSError, UnicodeDecodeError):
        return None
    if tokens and tokens[-1] == "":
        tokens.pop()
    vocab = {token: i for i, token in enumerate(tokens)}
    expected = {"[PAD]": 0, "[UNK]": 100, "[CLS]": 101, "[SEP]": 102, "[MASK]": 103}
    if len(vocab) != len(tokens) or len(tokens) != vocab_size:
        return None
    if any(vocab.get(token) != i for token, i in expected.items()):
        return None
    return vocab


def _load_tokenizer(path: Path) -> Tokenizer:
    """The library's WordPiece tokenizer, with the shipped file's pad-to-128/truncate-at-128
    replaced by no padding and truncation at 256 tokens, as the reference model does."""
    try:
        from tokenizers import Tokenizer

        tokenizer = Tokenizer.from_file(str(path))
    except Exception as exc:
        raise ModelError(f"cannot load the MiniLM tokenizer {path}: {exc}") from exc
    tokenizer.no_padding()
    tokenizer.enable_truncation(max_length=MAX_TOKENS)
    return tokenizer


def _read_json(path: Path) -> dict:
    """A small JSON file as a dict, or ModelError."""
    try:
        return json.loads(path.read_text(encoding="utf-8"))
    except (OSError, ValueError) as exc:
        raise ModelError(f"cannot read {path}: {exc}") from exc
