"""Failing models (issue 10, item 7), against the loopback fake Ollama (tests/fake_ollama.py).

Ollama down, refusing, slower than its budget, or answering garbage: the write keeps the entry and
queues the work it could not do, ``crib doctor`` shows the queue per kind, ``crib reindex``
drains it, and retrieval answers with the channels that work while saying — on stderr and in
``--explain`` — which did not run and why.
"""

from __future__ import annotations

import time
from pathlib import Path
from typing import Any, Callable

import pytest

from crib_plugin import Memory
from crib_plugin.store.sqlite import EXTRACT_QUEUE

SLOW = 30.0  # the fake's delay: far beyond every budget below


@pytest.fixture
def ollama_store(fake_ollama_env: Any, monkeypatch: pytest.MonkeyPatch, db: Path) -> Any:
    """A store whose embedder is Ollama (the fake), with one entry embedded while it worked."""
    monkeypatch.setenv("CRIB_EMBEDDER", "ollama")
    monkeypatch.setenv("CRIB_OLLAMA_TIMEOUT", "60")  # only crib's own budgets may cut a request short
    monkeypatch.setenv("CRIB_EMBED_BUDGET", "300")  # a loaded machine must not queue the setup's vector
    monkeypatch.setenv("CRIB_EXTRACT_BUDGET", "300")
    with Memory(db) as memory:
        memory.write("We chose SQLite with WAL mode for the store.")
        assert memory.last_write is not None and memory.last_write.embedded
    return fake_ollama_env


def queue(memory: Memory) -> dict[str, int]:
    return memory.store.pending_counts()


@pytest.mark.parametrize("fault", ["refuse", "garbage", "hang_up"])
def test_write_keeps_the_entry_and_queues_its_vector(ollama_store: Any, db: Path, fault: str) -> None:
    {"refuse": lambda: ollama_store.fail(500, "out of memory", path="/api/embed"),
     "garbage": lambda: ollama_store.malformed(path="/api/embed"),
     "hang_up": lambda: ollama_store.hang_up(path="/api/embed")}[fault]()
    with Memory(db) as memory:
        entry_id = memory.write("Alice prefers tabs over spaces.")
        report = memory.last_write
        assert report is not None and not report.embedded and not report.duplicate
        assert any("queued for `crib reindex`" in note for note in report.notes)
        assert memory.entry(entry_id) is not None
        assert queue(memory) == {"embedding:ollama": 1}


def test_slow_embedder_never_holds_the_write_past_its_budget(ollama_store: Any, db: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("CRIB_EMBED_BUDGET", "1")
    ollama_store.slow(SLOW, path="/api/embed")
    with Memory(db) as memory:
        started = time.monotonic()
        entry_id = memory.write("The deploy runs at noon.")
        elapsed = time.monotonic() - started
        assert memory.entry(entry_id) is not None
        assert queue(memory) == {"embedding:ollama": 1}
        assert "budget of 1s" in " ".join(memory.last_write.notes)  # type: ignore[union-attr]
    assert elapsed < SLOW / 2, elapsed  # the budget (1 s) plus a generous margin, not the model's 30 s


def test_slow_extractor_is_queued_and_reindex_drains_both_queues(ollama_store: Any, db: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("CRIB_EXTRACTOR", "ollama")
    monkeypatch.setenv("CRIB_EXTRACT_BUDGET", "1")
    monkeypatch.setenv("CRIB_EMBED_BUDGET", "1")
    ollama_store.slow(SLOW, path="/api/chat")
    ollama_store.slow(SLOW, path="/api/embed")
    with Memory(db) as memory:
        started = time.monotonic()
        entry_id = memory.write("Bob owns the billing service.")
        assert time.monotonic() - started < SLOW / 2
        assert memory.entry(entry_id) is not None
        assert queue(memory) == {"embedding:ollama": 1, "extraction": 1}
        assert memory.store.pending(EXTRACT_QUEUE) == [entry_id]
    from crib_plugin.hosts.doctor import run_doctor

    assert run_doctor()["database"]["queue"] == {"embedding:ollama": 1, "extraction": 1}
    ollama_store.reset()  # the model is back
    ollama_store.script({"facts": [{"subject": "Bob", "predicate": "owns", "object": "billing service"}]})
    with Memory(db) as memory:
        result = memory.reindex()
        assert result["facts_extracted"] == 1 and result["pending"] == 0
        assert queue(memory) == {}
        assert memory.store.vector_count(memory.store.vector_space(memory.embedder_key())[0]) == 2


def test_retrieve_answers_without_ollama_and_says_why(ollama_store: Any, db: Path, crib: Callable[..., Any]) -> None:
    ollama_store.close()  # Ollama is down now
    result = crib("retrieve", "--explain", "which database did we choose for the store?", timeout=180)
    assert result.returncode == 0
    assert "SQLite" in result.stdout  # the full-text channel still answers
    assert "crib: channel vector did not run:" in result.stderr
    assert "channel vector: did not run (ollama is not reachable" in result.stderr  # the --explain report
    assert "Traceback" not in result.stderr


def test_write_cli_with_ollama_down_keeps_the_entry(ollama_store: Any, db: Path, crib: Callable[..., Any]) -> None:
    ollama_store.close()
    result = crib("write", "The cache is evicted hourly.", timeout=180)
    assert result.returncode == 0, result.stderr
    assert "no vector (queued)" in result.stdout
    assert "queued for `crib reindex`" in result.stderr
    doctor = crib("doctor", timeout=180)
    assert '"embedding:ollama": 1' in doctor.stdout
