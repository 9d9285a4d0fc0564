"""A write never waits on a model: with Ollama extraction or a cue model the entry is stored at once,
its facts and cue are queued in its own transaction, and the background worker writes them.

The detached worker process is replaced by a record of its start (``started``), and the worker's
``run`` is called in this process, so each test decides when the worker runs — or that it never
does (a kill), after which ``crib reindex`` finishes the queue.
"""

from __future__ import annotations

import json
import time
from pathlib import Path
from typing import Any

import pytest

from crib_plugin import Memory
from crib_plugin.hosts import embed_worker
from crib_plugin.store.facts import facts_for_entries
from crib_plugin.store.sqlite_rows import EXTRACT_QUEUE
from crib_plugin.write import deferred

try:
    from fake_ollama import FakeOllama
except ImportError:  # pragma: no cover - run from the repository root
    from tests.fake_ollama import FakeOllama

MODEL = "gemma3:1b"
TEXT = "The billing service stores invoices in PostgreSQL 16; Dana Lee owns it."
CUE = "changing how invoices are stored; asking who owns billing"


def _reply(request: Any) -> Any:
    """Facts for an extraction request, a cue for a cue request (told apart by their schemas)."""
    properties = (request.json.get("format") or {}).get("properties", {})
    if "facts" in properties:
        return {"facts": [{"subject": "billing service", "predicate": "stores_invoices_in", "object": "PostgreSQL 16"},
                          {"subject": "billing service", "predicate": "owner", "object": ""}]}  # one bad item, dropped
    return {"when": CUE}


@pytest.fixture
def models(fake_ollama_env: FakeOllama, monkeypatch: pytest.MonkeyPatch) -> FakeOllama:
    monkeypatch.setenv("CRIB_CUE_MODEL", MODEL)
    monkeypatch.setenv("CRIB_EXTRACTOR", "ollama")
    monkeypatch.setenv("CRIB_EXTRACTION_MODEL", MODEL)
    fake_ollama_env.respond_with(_reply)
    return fake_ollama_env


@pytest.fixture
def started(monkeypatch: pytest.MonkeyPatch) -> list[list[str]]:
    """The worker processes a write starts (recorded, not run)."""
    calls: list[list[str]] = []
    monkeypatch.setattr(deferred.subprocess, "Popen", lambda args, **kw: calls.append(list(args)))
    return calls


def _chats(fake: FakeOllama) -> int:
    return len(fake.requests_to("/api/chat"))


def test_a_write_returns_before_a_slow_model_and_the_worker_writes_facts_and_cue(
        models: FakeOllama, started: list[list[str]], db: Path) -> None:
    models.slow(20.0, path="/api/chat")  # every model call takes 20 s
    began = time.monotonic()
    with Memory(db) as memory:
        entry_id = memory.write(TEXT, type="decision")
        took = time.monotonic() - began
        assert took < 15, f"the write waited {took:.1f}s on the model"  # (it embeds inline: MiniLM's load on a busy machine)
        assert _chats(models) == 0  # nothing asked during the write
        assert memory.store.pending(EXTRACT_QUEUE) == [entry_id]  # queued in the entry's own transaction
        assert memory.store.pending_counts().get("extraction") == 1  # what `crib doctor` shows
        assert "when" not in memory.entry(entry_id).metadata
    assert started and started[0][-2:] == [deferred.WORKER_MODULE, str(db)]
    models.reset()
    models.respond_with(_reply)
    assert embed_worker.run(db) == 0
    with Memory(db, create=False) as memory:
        entry = memory.entry(entry_id)
        assert (entry.metadata["when"], entry.metadata["when_by"]) == (CUE, MODEL)
        facts = [(f.subject, f.predicate, f.object) for f in facts_for_entries(memory.store, [entry_id])]
        assert memory.store.pending(EXTRACT_QUEUE) == [] and memory.store.pending() == []
        assert facts == [("billing service", "stores_invoices_in", "PostgreSQL 16")]  # the empty "owner" item dropped
        assert "PostgreSQL 16" in memory.retrieve("changing how invoices are stored")  # found by its model-written cue


def test_a_killed_worker_leaves_the_queue_for_reindex(models: FakeOllama, started: list[list[str]], db: Path, crib: Any) -> None:
    with Memory(db) as memory:
        entry_id = memory.write(TEXT, type="decision")
    report = json.loads(crib("doctor").stdout)  # the worker never ran (killed before it started)
    assert report["database"]["queue"].get("extraction") == 1
    done = crib("reindex")
    assert done.returncode == 0, done.stderr
    with Memory(db, create=False) as memory:
        assert memory.store.pending(EXTRACT_QUEUE) == []
        assert memory.entry(entry_id).metadata["when"] == CUE
    assert json.loads(done.stdout.splitlines()[-1])["facts_extracted"] == 1


def test_a_model_down_in_the_worker_keeps_the_entry_and_its_queue(models: FakeOllama, started: list[list[str]], db: Path) -> None:
    with Memory(db) as memory:
        entry_id = memory.write(TEXT, type="decision")
    models.fail(500, "model crashed", path="/api/chat")
    assert embed_worker.run(db) == 0  # logged, not raised: the embedding still went ahead
    with Memory(db, create=False) as memory:
        assert memory.entry(entry_id).content == TEXT
        assert memory.store.pending(EXTRACT_QUEUE) == [entry_id]  # waits for the next worker or `crib reindex`
        assert memory.store.pending() == []  # the vector was stored
    assert _chats(models) == 2  # one cue try, one extraction try: no retry loop against a down model


def test_inline_asks_the_models_within_the_write(models: FakeOllama, started: list[list[str]], db: Path,
                                                 monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("CRIB_WRITE_MODELS", "inline")
    with Memory(db) as memory:
        entry_id = memory.write(TEXT, type="decision")
        assert memory.entry(entry_id).metadata["when"] == CUE and memory.store.pending(EXTRACT_QUEUE) == []
    assert _chats(models) == 2 and started == []


def test_without_a_model_nothing_is_deferred(fake_ollama_env: FakeOllama, started: list[list[str]], db: Path,
                                             monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("CRIB_EXTRACTOR", "rules")
    with Memory(db) as memory:
        entry_id = memory.write(TEXT, type="decision")
        assert memory.store.pending(EXTRACT_QUEUE) == [] and memory.last_write.facts >= 0
        assert memory.entry(entry_id).content == TEXT
    assert started == []


def test_the_worker_gives_a_model_longer_than_a_write_would(monkeypatch: pytest.MonkeyPatch) -> None:
    """Nobody waits on the worker: a request may take BACKGROUND_TIMEOUT (a busy CPU's 1.5B model
    took over the write path's 30 s to extract), unless CRIB_OLLAMA_TIMEOUT pins it."""
    from crib_plugin.models.ollama.extractor import OllamaExtractor
    from crib_plugin.write.model_work import BACKGROUND_TIMEOUT, patient

    assert patient(OllamaExtractor(model=MODEL, host="http://127.0.0.1:9")).timeout == BACKGROUND_TIMEOUT
    monkeypatch.setenv("CRIB_OLLAMA_TIMEOUT", "12")
    assert patient(OllamaExtractor(model=MODEL, host="http://127.0.0.1:9")).timeout == 12.0


def test_a_session_start_warms_the_prompt_path_s_models(fake_ollama_env: FakeOllama, monkeypatch: pytest.MonkeyPatch) -> None:
    """The judge and reranker models are loaded (Ollama's load request: a chat with no messages, with
    keep_alive) before the first prompt needs them; the same model once; nothing without one."""
    from crib_plugin.models.ollama.client import warm_configured

    assert warm_configured() == {} and fake_ollama_env.requests_to("/api/chat") == []
    fake_ollama_env.add_model("qwen2.5:3b")
    monkeypatch.setenv("CRIB_JUDGE_MODEL", "qwen2.5:3b")
    monkeypatch.setenv("CRIB_RERANK_MODEL", "qwen2.5:3b")
    monkeypatch.setenv("CRIB_OLLAMA_KEEP_ALIVE", "2h")
    warmed = warm_configured()
    assert list(warmed) == ["qwen2.5:3b"] and isinstance(warmed["qwen2.5:3b"], float)
    (request,) = fake_ollama_env.requests_to("/api/chat")
    assert request.json["messages"] == [] and request.json["keep_alive"] == "2h"


def test_the_session_start_hook_starts_the_warm_up(started: list[list[str]], monkeypatch: pytest.MonkeyPatch) -> None:
    from types import SimpleNamespace

    from crib_plugin.hosts.claude import fetch

    monkeypatch.setattr(fetch, "_detached", lambda code: started.append([code]))
    fetch.warm_models_in_background(SimpleNamespace(settings=SimpleNamespace(judge_model=None, rerank_model=None)))
    assert started == []
    fetch.warm_models_in_background(SimpleNamespace(settings=SimpleNamespace(judge_model="qwen2.5:3b", rerank_model=None)))
    assert started and "warm_configured" in started[0][0]
