"""Tests for crib's Ollama embedder, extractor, reranker and probe, against the fake Ollama server.

The ``ollama_live`` tests at the end run against a real Ollama when ``OLLAMA_HOST`` is set and answers.
"""

from __future__ import annotations

import json
import subprocess
import sys
import time
from typing import Any

import numpy as np
import ollama  # noqa: F401 - imported up front so timing assertions do not include its import cost
import pytest

from crib_plugin.core.errors import ConfigError, ModelError, ModelUnavailable
from crib_plugin.core.records import Triple
from crib_plugin.models.base import Embedder, Extractor, Reranker, embedder_key
from crib_plugin.models.ollama_models import (
    EXTRACTION_SCHEMA,
    EXTRACTION_SYSTEM_PROMPT,
    MAX_FACTS,
    RERANK_SCHEMA,
    OllamaEmbedder,
    OllamaExtractor,
    OllamaReranker,
    model_available,
    ollama_host,
    ollama_timeout,
    probe_ollama,
    validate_facts,
)

try:
    from fake_ollama import FAKE_VERSION, LIVE_HOST, NO_LIVE, FakeOllama, closed_host, fake_ollama, live_model, live_server  # noqa: F401
except ImportError:  # tests/ is a package in this checkout
    from tests.fake_ollama import FAKE_VERSION, LIVE_HOST, NO_LIVE, FakeOllama, closed_host, fake_ollama, live_model, live_server  # noqa: F401

ENV_VARS = ("OLLAMA_HOST", "CRIB_EMBEDDING_MODEL", "CRIB_EXTRACTION_MODEL", "CRIB_RERANK_MODEL", "CRIB_OLLAMA_TIMEOUT")


@pytest.fixture(autouse=True)
def _clean_env(monkeypatch: pytest.MonkeyPatch) -> None:
    for var in ENV_VARS:
        monkeypatch.delenv(var, raising=False)


def assert_one_line(exc: BaseException) -> None:
    """Clean errors: one line, no chained httpx traceback."""
    message = str(exc)
    assert message and "\n" not in message
    assert exc.__cause__ is None
    assert exc.__context__ is None or exc.__suppress_context__
    assert "Traceback" not in message


def cos(a: np.ndarray, b: np.ndarray) -> float:
    return float(np.dot(a, b) / (np.linalg.norm(a) * np.linalg.norm(b)))


# ------------------------------------------------------------------------------------------------
# Host, timeout, probe
# ------------------------------------------------------------------------------------------------


@pytest.mark.parametrize(
    "raw, expected",
    [
        (None, "http://127.0.0.1:11434"),
        ("", "http://127.0.0.1:11434"),
        ("localhost:1234", "http://localhost:1234"),
        ("10.0.0.5", "http://10.0.0.5:11434"),
        (":5555", "http://127.0.0.1:5555"),
        ("0.0.0.0", "http://127.0.0.1:11434"),
        ("0.0.0.0:9999", "http://127.0.0.1:9999"),
        ("http://example.com", "http://example.com:80"),
        ("https://example.com", "https://example.com:443"),
        ("https://example.com:8443/ollama/", "https://example.com:8443/ollama"),
        ("http://127.0.0.1:11434/", "http://127.0.0.1:11434"),
        ("[::1]:7000", "http://[::1]:7000"),
        ("[::1]", "http://[::1]:11434"),
    ],
)
def test_ollama_host_normalises(raw: str | None, expected: str, monkeypatch: pytest.MonkeyPatch) -> None:
    if raw is not None:
        monkeypatch.setenv("OLLAMA_HOST", raw)
    assert ollama_host() == expected


def test_ollama_host_argument_beats_env(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("OLLAMA_HOST", "elsewhere:1")
    assert ollama_host("127.0.0.1:2") == "http://127.0.0.1:2"


def test_ollama_host_bad_port_is_config_error() -> None:
    with pytest.raises(ConfigError):
        ollama_host("localhost:abc")


def test_timeout_env(monkeypatch: pytest.MonkeyPatch) -> None:
    assert ollama_timeout(2.0) == 2.0
    monkeypatch.setenv("CRIB_OLLAMA_TIMEOUT", "0.75")
    assert ollama_timeout(2.0) == 0.75
    assert OllamaEmbedder().timeout == 0.75
    assert OllamaExtractor().timeout == 0.75
    assert OllamaReranker().timeout == 0.75
    for bad in ("abc", "0", "-1", "nan"):
        monkeypatch.setenv("CRIB_OLLAMA_TIMEOUT", bad)
        with pytest.raises(ConfigError):
            ollama_timeout(2.0)


def test_default_timeouts_are_short_on_the_hook_path() -> None:
    assert OllamaEmbedder().timeout <= 2.0
    assert OllamaReranker().timeout <= 2.0
    assert OllamaEmbedder(timeout=0.1).timeout == 0.1


def test_probe_reachable(fake_ollama: FakeOllama) -> None:
    info = probe_ollama(fake_ollama.host, timeout=5)
    assert info["reachable"] is True
    assert info["error"] is None
    assert info["version"] == FAKE_VERSION
    assert "nomic-embed-text:latest" in info["models"]
    assert "gemma3:1b" in info["models"]
    assert info["host"] == fake_ollama.host
    assert [r.path for r in fake_ollama.requests] == ["/api/version", "/api/tags"]


def test_probe_reads_env_and_is_cache_free(fake_ollama: FakeOllama, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("OLLAMA_HOST", fake_ollama.host.replace("http://", ""))
    # the host comes from the environment; a longer timeout than the hooks' 0.5 s, so a loaded
    # machine (the whole suite on two cores) cannot turn a slow answer into "unreachable"
    assert probe_ollama(timeout=5)["reachable"]
    fake_ollama.remove_model("gemma3:1b")
    assert "gemma3:1b" not in probe_ollama(timeout=5)["models"]
    assert len(fake_ollama.requests_to("/api/tags")) == 2


def test_probe_unreachable_is_fast_and_never_raises() -> None:
    start = time.monotonic()
    info = probe_ollama(closed_host())
    assert time.monotonic() - start < 1.0
    assert info["reachable"] is False
    assert info["version"] is None and info["models"] == []
    assert isinstance(info["error"], str) and "\n" not in info["error"]


def test_probe_of_a_closed_loopback_port_never_loads_urllib_request() -> None:
    """The offline default (nothing on Ollama's port): a bare TCP knock answers, so a write or a
    SessionStart hook does not pay for importing ``urllib.request`` (≈ 24 ms) to learn it."""
    code = (
        "import sys; from crib_plugin.models.ollama_host import probe_ollama; "
        f"info = probe_ollama({closed_host()!r}); "
        "print(info['reachable'], 'urllib.request' in sys.modules, info['error'])"
    )
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True).stdout.split(" ", 2)
    assert out[:2] == ["False", "False"], out
    assert out[2].startswith("cannot reach http://127.0.0.1:")


def test_probe_timeout(fake_ollama: FakeOllama) -> None:
    fake_ollama.slow(5)
    start = time.monotonic()
    info = probe_ollama(fake_ollama.host, timeout=0.2)
    assert time.monotonic() - start < 1.5
    assert info["reachable"] is False and info["error"]


def test_probe_http_error_and_garbage(fake_ollama: FakeOllama) -> None:
    fake_ollama.fail(500, path="/api/tags")
    info = probe_ollama(fake_ollama.host, timeout=5)
    assert info["reachable"] is False and "500" in info["error"]
    fake_ollama.reset()
    fake_ollama.malformed(path="/api/tags")
    assert probe_ollama(fake_ollama.host)["reachable"] is False
    assert probe_ollama("localhost:notaport")["reachable"] is False


def test_model_available() -> None:
    names = ["nomic-embed-text:latest", "gemma3:1b"]
    assert model_available("nomic-embed-text", names)
    assert model_available("gemma3:1b", names)
    assert not model_available("gemma3", names)  # gemma3 means gemma3:latest
    assert not model_available("llama3.2", names)


# ------------------------------------------------------------------------------------------------
# Embedder
# ------------------------------------------------------------------------------------------------


def test_embedder_defaults_need_no_network() -> None:
    emb = OllamaEmbedder(host=closed_host())
    assert emb.name == "ollama"
    assert emb.model == "nomic-embed-text"
    assert emb.dim == 768  # known without asking the server
    assert isinstance(emb, Embedder)
    assert embedder_key(emb) == "ollama:nomic-embed-text:768"


def test_embedder_model_from_env(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("CRIB_EMBEDDING_MODEL", "all-minilm")
    emb = OllamaEmbedder()
    assert emb.model == "all-minilm" and emb.dim == 384
    assert OllamaEmbedder(model="mxbai-embed-large").model == "mxbai-embed-large"


def test_embed_documents_shape_normalisation_and_prefix(fake_ollama: FakeOllama) -> None:
    emb = OllamaEmbedder(host=fake_ollama.host)
    texts = ["We chose SQLite for storage", "The deploy runs on Fridays", "Dana lives in Lisbon"]
    matrix = emb.embed_documents(texts)
    assert matrix.shape == (3, 768)
    assert matrix.dtype == np.float32
    np.testing.assert_allclose(np.linalg.norm(matrix, axis=1), 1.0, atol=1e-5)
    (req,) = fake_ollama.requests_to("/api/embed")
    assert req.body["model"] == "nomic-embed-text"
    assert req.body["input"] == [f"search_document: {t}" for t in texts]


def test_embed_query_prefix_and_similarity(fake_ollama: FakeOllama) -> None:
    emb = OllamaEmbedder(host=fake_ollama.host)
    docs = emb.embed_documents(["We chose SQLite for storage", "The deploy runs on Fridays"])
    query = emb.embed_query("which storage did we choose, SQLite?")
    assert query.shape == (768,) and query.dtype == np.float32
    assert abs(float(np.linalg.norm(query)) - 1.0) < 1e-5
    assert fake_ollama.last.body["input"] == ["search_query: which storage did we choose, SQLite?"]
    assert cos(query, docs[0]) > cos(query, docs[1])


def test_embed_is_deterministic_and_not_double_prefixed(fake_ollama: FakeOllama) -> None:
    emb = OllamaEmbedder(host=fake_ollama.host)
    a = emb.embed_query("same text")
    b = emb.embed_query("same text")
    np.testing.assert_array_equal(a, b)
    emb.embed_documents(["search_document: already prefixed"])
    assert fake_ollama.last.body["input"] == ["search_document: already prefixed"]


def test_embed_without_prefix_for_other_models(fake_ollama: FakeOllama) -> None:
    emb = OllamaEmbedder(model="all-minilm", host=fake_ollama.host)
    vec = emb.embed_query("plain query")
    assert vec.shape == (384,)
    assert fake_ollama.last.body["input"] == ["plain query"]


def test_embed_batches_preserve_order(fake_ollama: FakeOllama) -> None:
    emb = OllamaEmbedder(host=fake_ollama.host, batch_size=2)
    texts = [f"text number {i} about topic {i % 3}" for i in range(5)]
    matrix = emb.embed_documents(texts)
    assert matrix.shape == (5, 768)
    assert [len(r.body["input"]) for r in fake_ollama.requests_to("/api/embed")] == [2, 2, 1]
    single = OllamaEmbedder(host=fake_ollama.host, batch_size=32).embed_documents(texts)
    np.testing.assert_allclose(matrix, single, atol=1e-6)


def test_embed_empty_list_sends_nothing(fake_ollama: FakeOllama) -> None:
    emb = OllamaEmbedder(host=fake_ollama.host)
    assert emb.embed_documents([]).shape == (0, 768)
    assert fake_ollama.requests == []
    with pytest.raises(TypeError):
        emb.embed_documents("not a list")  # type: ignore[arg-type]


def test_embed_unknown_model_discovers_dim_lazily(fake_ollama: FakeOllama) -> None:
    fake_ollama.add_model("house-embedder:v2", dim=256)
    emb = OllamaEmbedder(model="house-embedder:v2", host=fake_ollama.host)
    assert fake_ollama.requests == []  # construction is free
    assert emb.dim == 256
    assert len(fake_ollama.requests_to("/api/embed")) == 1
    assert emb.embed_query("x").shape == (256,)
    assert emb.key == "ollama:house-embedder:v2:256"


def test_embed_wrong_dimension_is_model_error(fake_ollama: FakeOllama) -> None:
    fake_ollama.add_model("nomic-embed-text", dim=512)
    emb = OllamaEmbedder(host=fake_ollama.host)
    with pytest.raises(ModelError, match="512-dim vectors, expected 768") as info:
        emb.embed_query("hello")
    assert not isinstance(info.value, ModelUnavailable)
    assert_one_line(info.value)


def test_embed_wrong_count_and_non_finite(fake_ollama: FakeOllama) -> None:
    emb = OllamaEmbedder(host=fake_ollama.host)
    fake_ollama.fail(200, body=json.dumps({"model": "nomic-embed-text", "embeddings": []}), times=1)
    with pytest.raises(ModelError, match="0 vectors for 1 texts"):
        emb.embed_query("hello")
    nan_body = '{"model": "nomic-embed-text", "embeddings": [[' + ", ".join(["NaN"] * 768) + "]]}"
    fake_ollama.fail(200, body=nan_body, times=1)
    with pytest.raises(ModelError, match="non-finite"):
        emb.embed_query("hello")
    assert emb.embed_query("hello").shape == (768,)  # faults used up: healthy again


def test_embed_connection_refused_is_unavailable_and_fast() -> None:
    emb = OllamaEmbedder(host=closed_host())
    start = time.monotonic()
    with pytest.raises(ModelUnavailable, match="not reachable") as info:
        emb.embed_query("hello")
    assert time.monotonic() - start < 1.0
    assert_one_line(info.value)


def test_embed_model_not_found_is_unavailable(fake_ollama: FakeOllama) -> None:
    fake_ollama.remove_model("nomic-embed-text")
    emb = OllamaEmbedder(host=fake_ollama.host)
    start = time.monotonic()
    with pytest.raises(ModelUnavailable, match="ollama pull nomic-embed-text") as info:
        emb.embed_documents(["a"])
    assert time.monotonic() - start < 1.0
    assert_one_line(info.value)


def test_embed_timeout_is_unavailable(fake_ollama: FakeOllama) -> None:
    fake_ollama.slow(5, path="/api/embed")
    emb = OllamaEmbedder(host=fake_ollama.host, timeout=0.3)
    start = time.monotonic()
    with pytest.raises(ModelUnavailable, match="within 0.3s") as info:
        emb.embed_query("hello")
    assert time.monotonic() - start < 1.5
    assert_one_line(info.value)


@pytest.mark.parametrize(
    "inject, error",
    [
        (lambda f: f.fail(500, "llama runner process has terminated: exit status 2"), ModelError),
        (lambda f: f.malformed(), ModelError),
        (lambda f: f.hang_up(), ModelUnavailable),
    ],
    ids=["http-500", "malformed-json", "hang-up"],
)
def test_embed_server_faults(fake_ollama: FakeOllama, inject, error) -> None:
    inject(fake_ollama)
    emb = OllamaEmbedder(host=fake_ollama.host)
    with pytest.raises(error) as info:
        emb.embed_query("hello")
    assert_one_line(info.value)
    if error is ModelError:
        assert not isinstance(info.value, ModelUnavailable)


def test_embed_http_500_message_is_ollamas(fake_ollama: FakeOllama) -> None:
    fake_ollama.fail(500, "llama runner process has terminated: exit status 2")
    with pytest.raises(ModelError, match="HTTP 500: llama runner process has terminated"):
        OllamaEmbedder(host=fake_ollama.host).embed_query("x")


def test_embed_with_chat_model_is_model_error(fake_ollama: FakeOllama) -> None:
    with pytest.raises(ModelError, match="does not support embeddings"):
        OllamaEmbedder(model="gemma3:1b", host=fake_ollama.host).embed_query("x")


# ------------------------------------------------------------------------------------------------
# Extractor
# ------------------------------------------------------------------------------------------------


def facts_reply(*triples: tuple[str, str, str]) -> dict:
    return {"facts": [{"subject": s, "predicate": p, "object": o} for s, p, o in triples]}


def test_extractor_defaults(monkeypatch: pytest.MonkeyPatch) -> None:
    ext = OllamaExtractor()
    assert ext.name == "ollama" and ext.model == "gemma3:1b"
    assert isinstance(ext, Extractor)
    monkeypatch.setenv("CRIB_EXTRACTION_MODEL", "qwen2.5:0.5b")
    assert OllamaExtractor().model == "qwen2.5:0.5b"
    assert OllamaExtractor(model="llama3.2:1b").model == "llama3.2:1b"


def test_extraction_schema_is_strict() -> None:
    assert EXTRACTION_SCHEMA["required"] == ["facts"]
    assert EXTRACTION_SCHEMA["additionalProperties"] is False
    item = EXTRACTION_SCHEMA["properties"]["facts"]["items"]
    assert item["required"] == ["subject", "predicate", "object"]
    assert item["additionalProperties"] is False
    assert all(p == {"type": "string", "minLength": 1} for p in item["properties"].values())  # "" is no fact
    assert "snake_case" in EXTRACTION_SYSTEM_PROMPT and "not_" in EXTRACTION_SYSTEM_PROMPT


def test_extract_sends_schema_temperature_and_seed(fake_ollama: FakeOllama) -> None:
    fake_ollama.script(facts_reply(("Acme", "payment_terms", "net 60")))
    ext = OllamaExtractor(host=fake_ollama.host)
    facts = ext.extract("Acme moved to net 60 payment terms.")
    assert facts == [Triple("Acme", "payment_terms", "net 60")]
    (req,) = fake_ollama.requests_to("/api/chat")
    body = req.body
    assert body["model"] == "gemma3:1b"
    assert body["format"] == EXTRACTION_SCHEMA
    assert body["stream"] is False
    assert body["options"]["temperature"] == 0
    assert body["options"]["seed"] == 42
    assert body["messages"][0]["role"] == "system"
    assert body["messages"][-1] == {"role": "user", "content": "Note: Acme moved to net 60 payment terms."}
    # few-shot examples: user/assistant pairs whose answers themselves validate
    shots = body["messages"][1:-1]
    assert len(shots) >= 4 and [m["role"] for m in shots[:2]] == ["user", "assistant"]
    for message in shots[1::2]:
        validate_facts(message["content"])


def test_extract_strips_dedupes_and_caps(fake_ollama: FakeOllama) -> None:
    fake_ollama.script(
        facts_reply(("  Acme ", "uses", " Postgres  "), ("Acme", "uses", "Postgres"), ("Acme", "not_use", "MySQL"))
    )
    ext = OllamaExtractor(host=fake_ollama.host)
    assert ext.extract("Acme uses Postgres, not MySQL.") == [
        Triple("Acme", "uses", "Postgres"),
        Triple("Acme", "not_use", "MySQL"),
    ]
    many = facts_reply(*[(f"service{i}", "uses", f"lib{i}") for i in range(MAX_FACTS + 8)])
    fake_ollama.script(many)
    facts = ext.extract("a long note")
    assert len(facts) == MAX_FACTS
    assert facts[0] == Triple("service0", "uses", "lib0")


def test_extract_same_text_twice_is_identical(fake_ollama: FakeOllama) -> None:
    def responder(req):
        note = req.body["messages"][-1]["content"]
        return facts_reply(("Maya", "lives_in", "Lisbon")) if "Lisbon" in note else facts_reply()

    fake_ollama.respond_with(responder)
    ext = OllamaExtractor(host=fake_ollama.host)
    text = "Maya lives in Lisbon now."
    first, second = ext.extract(text), ext.extract(text)
    assert first == second == [Triple("Maya", "lives_in", "Lisbon")]
    a, b = fake_ollama.requests_to("/api/chat")
    assert a.body == b.body
    assert a.raw == b.raw
    # and a fresh extractor sends the very same request
    OllamaExtractor(host=fake_ollama.host).extract(text)
    assert fake_ollama.last.raw == a.raw


def test_extract_default_reply_is_schema_valid(fake_ollama: FakeOllama) -> None:
    assert OllamaExtractor(host=fake_ollama.host).extract("Nothing to see here.") == []


def test_extract_empty_text_sends_nothing(fake_ollama: FakeOllama) -> None:
    ext = OllamaExtractor(host=fake_ollama.host)
    assert ext.extract("") == [] and ext.extract("   \n") == []
    assert fake_ollama.requests == []


BAD_EXTRACTIONS = {
    "not-json": "Sure! Here are the facts: Acme uses Postgres",
    "truncated": '{"facts": [{"subject": "Acme", "predicate": "uses"',
    "fenced": '```json\n{"facts": []}\n```',
    "array-top": json.dumps([{"subject": "a", "predicate": "b", "object": "c"}]),
    "missing-facts": json.dumps({}),
    "extra-top-key": json.dumps({"facts": [], "notes": "x"}),
    "facts-not-list": json.dumps({"facts": {"subject": "a", "predicate": "b", "object": "c"}}),
}

BAD_ITEMS = {
    "item-not-object": "Acme uses Postgres",
    "missing-field": {"subject": "a", "predicate": "b"},
    "extra-field": {"subject": "a", "predicate": "b", "object": "c", "confidence": 1},
    "non-string": {"subject": "a", "predicate": "b", "object": 30},
    "null-field": {"subject": None, "predicate": "b", "object": "c"},
    "empty-field": {"subject": "a", "predicate": "  ", "object": "c"},
}


@pytest.mark.parametrize("item", list(BAD_ITEMS.values()), ids=list(BAD_ITEMS))
def test_extract_drops_a_bad_item_and_keeps_the_rest(fake_ollama: FakeOllama, item: Any) -> None:
    """One item a model got wrong (an empty object, a number) costs that item, not the reply's other facts."""
    good = {"subject": "Acme", "predicate": "uses", "object": "Postgres"}
    fake_ollama.script(json.dumps({"facts": [item, good]}))
    assert OllamaExtractor(host=fake_ollama.host).extract("Acme uses Postgres.") == [Triple("Acme", "uses", "Postgres")]
    dropped: list[str] = []
    assert validate_facts(json.dumps({"facts": [item]}), dropped=dropped) == [] and dropped[0].startswith("facts[0] ")


@pytest.mark.parametrize("reply", list(BAD_EXTRACTIONS.values()), ids=list(BAD_EXTRACTIONS))
def test_extract_rejects_invalid_output(fake_ollama: FakeOllama, reply: str) -> None:
    fake_ollama.script(reply)
    with pytest.raises(ModelError, match="^extraction model returned invalid JSON: ") as info:
        OllamaExtractor(host=fake_ollama.host).extract("Acme uses Postgres.")
    assert not isinstance(info.value, ModelUnavailable)
    assert_one_line(info.value)


def test_extract_model_not_found_and_refused(fake_ollama: FakeOllama) -> None:
    ext = OllamaExtractor(model="llama-nope:7b", host=fake_ollama.host)
    start = time.monotonic()
    with pytest.raises(ModelUnavailable, match="ollama pull llama-nope:7b") as info:
        ext.extract("Acme uses Postgres.")
    assert_one_line(info.value)
    with pytest.raises(ModelUnavailable, match="not reachable"):
        OllamaExtractor(host=closed_host()).extract("Acme uses Postgres.")
    assert time.monotonic() - start < 1.5


def test_extract_transport_faults(fake_ollama: FakeOllama) -> None:
    ext = OllamaExtractor(host=fake_ollama.host, timeout=0.3)
    fake_ollama.fail(500, "unexpected server status", times=1)
    with pytest.raises(ModelError, match="HTTP 500") as info:
        ext.extract("x is y")
    assert not isinstance(info.value, ModelUnavailable)
    fake_ollama.malformed(times=1)
    with pytest.raises(ModelError, match="malformed reply"):
        ext.extract("x is y")
    fake_ollama.slow(5, times=1)
    with pytest.raises(ModelUnavailable, match="within 0.3s"):
        ext.extract("x is y")
    fake_ollama.script(facts_reply(("x", "is", "y")))
    assert ext.extract("x is y") == [Triple("x", "is", "y")]


def test_extract_with_embedding_model_is_model_error(fake_ollama: FakeOllama) -> None:
    with pytest.raises(ModelError, match="does not support chat"):
        OllamaExtractor(model="nomic-embed-text", host=fake_ollama.host).extract("x is y")


# ------------------------------------------------------------------------------------------------
# Reranker
# ------------------------------------------------------------------------------------------------


def memory_of(req) -> str:
    return req.body["messages"][-1]["content"].split("Memory: ", 1)[1]


def test_reranker_defaults(monkeypatch: pytest.MonkeyPatch) -> None:
    rr = OllamaReranker()
    assert rr.name == "ollama" and rr.model == "gemma3:1b"
    assert isinstance(rr, Reranker)
    monkeypatch.setenv("CRIB_RERANK_MODEL", "qwen3:0.6b")
    assert OllamaReranker().model == "qwen3:0.6b"


def test_rerank_scores_in_candidate_order(fake_ollama: FakeOllama) -> None:
    grades = {"We chose SQLite": 9, "Lunch is at noon": 1, "SQLite runs in WAL mode": 6, "Deploys on Friday": 0}

    def responder(req):
        time.sleep(0.01 * (len(memory_of(req)) % 5))  # finish out of order under concurrency
        return {"score": grades[memory_of(req)]}

    fake_ollama.respond_with(responder)
    rr = OllamaReranker(host=fake_ollama.host)
    scores = rr.score("which database did we choose?", list(grades))
    assert scores == [9.0, 1.0, 6.0, 0.0]
    assert all(isinstance(s, float) for s in scores)
    reqs = fake_ollama.requests_to("/api/chat")
    assert len(reqs) == 4
    for req in reqs:
        assert req.body["format"] == RERANK_SCHEMA
        assert req.body["options"]["temperature"] == 0
        assert req.body["options"]["seed"] == 42
        assert req.body["stream"] is False
        assert "Question: which database did we choose?" in req.body["messages"][-1]["content"]


def test_rerank_schema() -> None:
    score = RERANK_SCHEMA["properties"]["score"]
    assert score == {"type": "integer", "minimum": 0, "maximum": 10}
    assert RERANK_SCHEMA["required"] == ["score"] and RERANK_SCHEMA["additionalProperties"] is False


@pytest.mark.parametrize(
    "bad",
    ["not json", '{"score": 11}', '{"score": -1}', '{"score": 7.5}', '{"score": "8"}', '{"score": true}',
     '{"score": 8, "rewritten": "We chose Postgres"}', '{"relevance": 8}', "[8]"],
)
def test_rerank_invalid_reply_scores_zero_for_that_candidate(fake_ollama: FakeOllama, bad: str) -> None:
    fake_ollama.respond_with(lambda req: bad if memory_of(req) == "second" else {"score": 7})
    rr = OllamaReranker(host=fake_ollama.host, workers=1)
    assert rr.score("q", ["first", "second", "third"]) == [7.0, 0.0, 7.0]


def test_rerank_never_rewrites_memory(fake_ollama: FakeOllama) -> None:
    candidates = ["We chose SQLite on 2026-11-01", "Dana owns billing"]
    snapshot = list(candidates)
    fake_ollama.respond_with(lambda req: "Memory: We chose Postgres (corrected). Score 10")
    rr = OllamaReranker(host=fake_ollama.host)
    scores = rr.score("database?", candidates)
    assert scores == [0.0, 0.0]
    assert candidates == snapshot
    assert all(type(s) is float for s in scores)
    # the memory text is sent verbatim (inside the prompt), never altered on the way
    sent = sorted(memory_of(r) for r in fake_ollama.requests_to("/api/chat"))
    assert sent == sorted(snapshot)


def test_rerank_empty_sends_nothing(fake_ollama: FakeOllama) -> None:
    assert OllamaReranker(host=fake_ollama.host).score("q", []) == []
    assert fake_ollama.requests == []


def test_rerank_unavailable(fake_ollama: FakeOllama) -> None:
    start = time.monotonic()
    with pytest.raises(ModelUnavailable, match="not reachable") as info:
        OllamaReranker(host=closed_host()).score("q", ["a", "b", "c"])
    assert_one_line(info.value)
    with pytest.raises(ModelUnavailable, match="ollama pull missing:1b"):
        OllamaReranker(model="missing:1b", host=fake_ollama.host).score("q", ["a", "b"])
    assert time.monotonic() - start < 1.5


def test_rerank_timeout_bounded_by_concurrency(fake_ollama: FakeOllama) -> None:
    fake_ollama.slow(5, path="/api/chat")
    rr = OllamaReranker(host=fake_ollama.host, timeout=0.3)
    start = time.monotonic()
    with pytest.raises(ModelUnavailable, match="within 0.3s"):
        rr.score("q", ["a", "b", "c", "d"])
    assert time.monotonic() - start < 1.5


def test_rerank_http_error_is_model_error(fake_ollama: FakeOllama) -> None:
    fake_ollama.fail(500, "out of memory")
    with pytest.raises(ModelError, match="HTTP 500: out of memory") as info:
        OllamaReranker(host=fake_ollama.host).score("q", ["a"])
    assert not isinstance(info.value, ModelUnavailable)


# ------------------------------------------------------------------------------------------------
# The fake server itself (so other test files can rely on it)
# ------------------------------------------------------------------------------------------------


def test_fake_server_speaks_the_ollama_client(fake_ollama: FakeOllama) -> None:
    client = ollama.Client(host=fake_ollama.host)
    listed = client.list()
    assert {m.model for m in listed.models} >= {"nomic-embed-text:latest", "gemma3:1b"}
    emb = client.embed(model="nomic-embed-text", input="hello")
    assert len(emb.embeddings) == 1 and len(emb.embeddings[0]) == 768
    assert len(client.embed(model="nomic-embed-text", input="hi", dimensions=64).embeddings[0]) == 64
    fake_ollama.script("plain text reply", {"a": 1})
    assert client.chat(model="gemma3:1b", messages=[{"role": "user", "content": "hi"}]).message.content == (
        "plain text reply"
    )
    assert json.loads(client.generate(model="gemma3:1b", prompt="hi").response) == {"a": 1}
    chunks = list(client.chat(model="gemma3:1b", messages=[{"role": "user", "content": "hi"}], stream=True))
    assert chunks[-1].done and "".join(c.message.content or "" for c in chunks) == "OK."
    with pytest.raises(ollama.ResponseError) as info:
        client.chat(model="nope", messages=[{"role": "user", "content": "hi"}])
    assert info.value.status_code == 404 and info.value.error == 'model "nope" not found, try pulling it first'
    assert [r.path for r in fake_ollama.requests][:2] == ["/api/tags", "/api/embed"]


# ------------------------------------------------------------------------------------------------
# Live Ollama (skipped unless OLLAMA_HOST answers)
# ------------------------------------------------------------------------------------------------


@pytest.fixture
def live_ollama() -> dict:
    """The probe of a real Ollama at $OLLAMA_HOST; skips when it is unset or does not answer."""
    if not LIVE_HOST:
        pytest.skip(NO_LIVE)
    host = live_server()
    info = probe_ollama(host, timeout=2.0)
    if not info["reachable"]:
        pytest.skip(f"OLLAMA_HOST={host} does not answer /api/tags: {info['error']}")
    return info




def _need(info: dict, model: str) -> None:
    if not model_available(model, info["models"]):
        pytest.skip(f"model {model} is not pulled on {info['host']} (ollama pull {model})")


@pytest.mark.ollama_live
def test_live_embedder(live_ollama: dict) -> None:
    _need(live_ollama, "nomic-embed-text")
    emb = OllamaEmbedder(host=live_ollama["host"], timeout=30)
    docs = emb.embed_documents(["We chose SQLite for storage", "The cat sat on the mat"])
    assert docs.shape == (2, 768)
    query = emb.embed_query("Which database did we pick?")
    assert cos(query, docs[0]) > cos(query, docs[1])


@pytest.mark.ollama_live
def test_live_extractor_is_deterministic(live_ollama: dict) -> None:
    model = live_model("CRIB_EXTRACTION_MODEL", "gemma3:1b")
    _need(live_ollama, model)
    ext = OllamaExtractor(model=model, host=live_ollama["host"], timeout=120)
    text = "Acme Corp pays on net 60 terms. The billing service uses PostgreSQL."
    first = ext.extract(text)
    assert first == ext.extract(text)
    assert all(isinstance(t, Triple) and t.subject and t.predicate and t.object for t in first)


@pytest.mark.ollama_live
def test_live_reranker(live_ollama: dict) -> None:
    model = live_model("CRIB_RERANK_MODEL", "gemma3:1b")
    _need(live_ollama, model)
    rr = OllamaReranker(model=model, host=live_ollama["host"], timeout=60)
    scores = rr.score("Which database does the billing service use?",
                      ["The billing service uses PostgreSQL.", "Lunch is served at noon on Fridays."])
    assert len(scores) == 2 and all(0.0 <= s <= 10.0 for s in scores)
    assert scores[0] >= scores[1]


def test_tokens_spent_estimates_what_the_server_left_out() -> None:
    """A prompt served from Ollama's cache comes back without ``prompt_eval_count`` (some versions):
    the cost is estimated from the prompt's length rather than counted as nothing."""
    from types import SimpleNamespace

    from crib_plugin.models.ollama.client import tokens_spent

    assert tokens_spent(SimpleNamespace(prompt_eval_count=120, eval_count=30), 4_000, 400) == 150
    assert tokens_spent(SimpleNamespace(prompt_eval_count=None, eval_count=30), 4_000, 400) == 1_030
    assert tokens_spent(SimpleNamespace(), 4_000, 400) == 1_100


def test_the_reranker_sends_one_request_at_a_time_by_default(fake_ollama: FakeOllama) -> None:
    """A CPU-only Ollama has one slot: parallel grades would only queue there, each request's
    timeout spent waiting for the others. Each grade is asked once the one before has answered."""
    fake_ollama.slow(0.3, path="/api/chat")
    fake_ollama.respond_with(lambda req: {"score": 5})
    rr = OllamaReranker(host=fake_ollama.host)
    assert rr.score("q", ["a", "b", "c"]) == [5.0, 5.0, 5.0]
    times = [r.at for r in fake_ollama.requests_to("/api/chat")]
    assert len(times) == 3 and all(later - earlier >= 0.28 for earlier, later in zip(times, times[1:]))
    assert all(r.json["keep_alive"] == "30m" for r in fake_ollama.requests_to("/api/chat"))
