"""The BERT forward pass of all-MiniLM-L6-v2 in numpy: safetensors loading, exact-erf GELU, the layers.

Split from :mod:`crib_plugin.models.minilm` (the embedder: batching, pooling, threads). It must give
the same vectors as sentence-transformers (parity is tested in ``tests/test_minilm.py``).
"""

from __future__ import annotations

import json
import mmap
from pathlib import Path

import numpy as np

from ...core.errors import ModelError

LAYER_NORM_EPS = 1e-12


#: safetensors dtype names → numpy dtypes (the format is little-endian whatever the machine)
_DTYPES = {"F32": "<f4", "F16": "<f2", "F64": "<f8", "I64": "<i8", "I32": "<i4"}


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
        # deferred: `crib retrieve` when nothing is shown would import it up front (4 ms)
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


class Bert:
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
