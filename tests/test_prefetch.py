"""The prefetch worker: a cold retrieve embeds the prompt in a forked child, with identical results.

Every check compares the parallel path with the in-process one on a real store with real MiniLM
vectors: the worker may only make retrieval faster, never different.
"""

from __future__ import annotations

import os
import subprocess
import sys
import textwrap
import time
from pathlib import Path
from typing import Any, Callable

import pytest
from conftest import copy_store

from crib_plugin.core.config import load_settings
from crib_plugin.core.errors import ConfigError, ModelError, ModelUnavailable
from crib_plugin.memory import Memory
from crib_plugin.plugins.default_plugins.models import EMBEDDERS
from crib_plugin.read import prefetch

pytestmark = pytest.mark.skipif(not hasattr(os, "fork"), reason="the prefetch worker needs os.fork")

ENTRIES = [
    "type=decision Chose SQLite for storage. Zero dependencies.",
    "type=error The task queue crashed with ERR_QUEUE_4412 when a duplicate job id was enqueued.",
    "The user wants answers in British English and short commit messages.",
    "type=decision Timestamps are stored in UTC and rendered in the user's timezone.",
    "type=correction Use the staging runner for backups, not the production one.",
    "数据库每天凌晨两点备份一次。",
]

PROMPTS = [
    "what database did we choose?",
    "which storage engine did we pick?",  # no shared words: only vectors find it
    "ERR_QUEUE_4412",
    "how long should sourdough proof?",  # nothing relevant
    "数据库备份多久一次？",  # CJK: the English-only embedder does not run
    "which runner should the backups use?",
]


_BUILT: list[Path] = []  # the store of ENTRIES as this process's first test wrote it


@pytest.fixture
def store(db: Path, tmp_path_factory: pytest.TempPathFactory) -> Path:
    """A closed store holding ENTRIES, each written through ``Memory.write``: by this process's
    first test that asks, then copied (the writes' embeddings were most of each test's setup)."""
    if not _BUILT:
        with Memory(db) as memory:
            for text in ENTRIES:
                memory.write(text)
        kept = tmp_path_factory.mktemp("prefetch-store") / db.name
        copy_store(db, kept)
        _BUILT.append(kept)
    else:
        copy_store(_BUILT[0], db)
    return db


def _retrieve(prompt: str, parallel: str, monkeypatch: pytest.MonkeyPatch) -> tuple[Any, bool, Memory]:
    monkeypatch.setenv("CRIB_PARALLEL", parallel)
    memory = Memory(create=False)
    started = memory.prefetch(prompt)
    retrieval = memory.select(memory.recall(prompt))
    return retrieval, started, memory


def _summary(retrieval: Any) -> tuple[Any, ...]:
    return (
        [(h.entry.id, round(h.score, 12), tuple(h.channels)) for h in retrieval.hits],
        [(c.channel, c.ran, c.note, [(x.entry_id, round(x.score, 6)) for x in c.hits]) for c in retrieval.channels],
        [f.id for f in retrieval.facts],
        retrieval.gate,
    )


@pytest.mark.parametrize("prompt", PROMPTS)
def test_parallel_recall_equals_in_process(store: Path, prompt: str, monkeypatch: pytest.MonkeyPatch) -> None:
    serial, started_serial, m1 = _retrieve(prompt, "0", monkeypatch)
    parallel, started_parallel, m2 = _retrieve(prompt, "1", monkeypatch)
    try:
        assert not started_serial and started_parallel
        assert _summary(parallel) == _summary(serial)
        worker = m2.embedder()
        assert not worker.fell_back  # everything came from the worker
        # a CJK prompt needs only the identity (the English-only model does not run on it)
        assert worker.prefetched == (not parallel.query.cjk)
    finally:
        m1.close()
        m2.close()


def test_vector_only_prompt_is_found_through_the_worker(store: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("CRIB_CHANNEL", "vector")
    retrieval, started, memory = _retrieve("which storage engine did we pick?", "1", monkeypatch)
    with memory:
        assert started and memory.embedder().prefetched
        (vector,) = retrieval.channels
        top = memory.entry(vector.hits[0].entry_id)
        assert vector.ran and top is not None and top.content == "Chose SQLite for storage. Zero dependencies."


def test_the_parent_never_imports_numpy(store: Path) -> None:
    """A cold `crib retrieve` whose worker answered leaves numpy out of the main process."""
    script = textwrap.dedent(
        """
        import sys
        from crib_plugin.hosts.cli.retrieve import run_retrieve
        run_retrieve("the staging runner for backups and SQLite for storage")
        sys.stdout.flush()
        print("NUMPY" if "numpy" in sys.modules else "CLEAN", file=sys.stderr)
        """
    )
    # a budget too small for every hit: the offline reranker runs too (the prompt names two
    # memories, so both pass the per-entry cut)
    env = dict(os.environ, CRIB_PARALLEL="1", CRIB_BUDGET="300", CRIB_LOG=str(store.parent / "log.jsonl"))
    done = subprocess.run([sys.executable, "-c", script], capture_output=True, text=True, env=env, timeout=60)
    assert "<memory" in done.stdout
    assert "reranked by mmr" in (store.parent / "log.jsonl").read_text()
    assert done.stderr.strip().splitlines()[-1] == "CLEAN", done.stderr


def test_cli_output_is_the_same_with_and_without_the_worker(store: Path, crib: Callable[..., Any]) -> None:
    for prompt in PROMPTS:
        outputs = []
        for parallel in ("0", "1"):
            done = crib("retrieve", input=prompt, env={"CRIB_PARALLEL": parallel})
            assert done.returncode == 0 and "Traceback" not in done.stderr
            outputs.append([line for line in done.stdout.splitlines() if "context_time" not in line])
        assert outputs[0] == outputs[1], prompt


def _swap_factory(monkeypatch: pytest.MonkeyPatch, factory: Callable[[], Any]) -> None:
    """Register ``factory`` as the MiniLM embedder for this test."""
    from crib_plugin.plugins.manager import registry

    monkeypatch.setitem(registry().embedders, "minilm", factory)


# Factories travel to the worker by pickle (a reference to their class), so they live at module level.


class DiesInWorker:
    """Kills the worker without a word; builds the real embedder in the parent."""

    def __init__(self) -> None:
        self.parent = os.getpid()

    def __call__(self) -> Any:
        if os.getpid() != self.parent:
            os._exit(3)
        return EMBEDDERS["minilm"]()


class SlowInWorker(DiesInWorker):
    def __call__(self) -> Any:
        if os.getpid() != self.parent:
            time.sleep(30)
        return EMBEDDERS["minilm"]()


class FailsToMake:
    def __call__(self) -> Any:
        raise ModelUnavailable("weights cannot be fetched: no network")


class FailsToEmbed:
    """An embedder with an identity whose every query fails."""

    name, model, dim, multilingual = "minilm", "all-MiniLM-L6-v2", 384, False

    def __call__(self) -> Any:
        return self

    def embed_query(self, text: str) -> Any:
        raise ModelError("the model returned garbage")


def test_a_worker_that_dies_falls_back_to_the_real_embedder(store: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    serial, _, m1 = _retrieve("which storage engine did we pick?", "0", monkeypatch)
    _swap_factory(monkeypatch, DiesInWorker())
    parallel, started, m2 = _retrieve("which storage engine did we pick?", "1", monkeypatch)
    with m1, m2:
        assert started
        assert _summary(parallel) == _summary(serial)
        assert m2.embedder().fell_back and not m2.embedder().prefetched  # it had to embed in-process


@pytest.mark.parametrize("factory", [FailsToMake(), FailsToEmbed()], ids=["make", "embed"])
def test_a_worker_error_reads_as_the_in_process_error(store: Path, monkeypatch: pytest.MonkeyPatch, factory: Any) -> None:
    _swap_factory(monkeypatch, factory)
    serial, _, m1 = _retrieve("which storage engine did we pick?", "0", monkeypatch)
    parallel, started, m2 = _retrieve("which storage engine did we pick?", "1", monkeypatch)
    with m1, m2:
        assert started
        vector = {c.channel: c for c in parallel.channels}["vector"]
        assert not vector.ran
        expected = "weights cannot be fetched" if isinstance(factory, FailsToMake) else "the model returned garbage"
        assert expected in vector.note
        assert _summary(parallel) == _summary(serial)


def test_a_factory_that_cannot_travel_runs_in_process(store: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    serial, _, m1 = _retrieve("what database did we choose?", "0", monkeypatch)
    _swap_factory(monkeypatch, lambda: EMBEDDERS["minilm"]())  # a lambda does not pickle
    parallel, started, m2 = _retrieve("what database did we choose?", "1", monkeypatch)
    with m1, m2:
        assert not started
        assert _summary(parallel) == _summary(serial)


def _assert_gone(pid: int) -> None:
    """The worker was stopped and, once stragglers are collected, leaves no zombie behind."""
    prefetch.reap_finished(wait=True)
    assert pid not in prefetch.unreaped
    with pytest.raises(ChildProcessError):
        os.waitpid(pid, os.WNOHANG)


def test_a_slow_worker_is_given_up_and_killed(store: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """Past its deadline the worker is killed and the vector channel reports the embedder as not
    answering; the other channels are exactly what they are without it (embedding here instead
    would only take longer still)."""
    _swap_factory(monkeypatch, SlowInWorker())
    monkeypatch.setattr(prefetch, "DEADLINE", 0.3)
    serial, _, m1 = _retrieve("which storage engine did we pick?", "0", monkeypatch)
    started_at = time.monotonic()
    parallel, started, m2 = _retrieve("which storage engine did we pick?", "1", monkeypatch)
    with m1, m2:
        assert started and time.monotonic() - started_at < 20
        by_name = {c.channel: c for c in parallel.channels}
        assert not by_name["vector"].ran and "did not answer in time" in by_name["vector"].note
        others = [c for c in _summary(serial)[1] if c[0] != "vector"]
        assert [c for c in _summary(parallel)[1] if c[0] != "vector"] == others
        assert not m2.embedder().fell_back
        _assert_gone(m2.embedder().worker_pid)


def test_give_up_at_bounds_the_wait_for_the_vector(store: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """A hook passes the moment its budget allows no more waiting; full text still answers."""
    _swap_factory(monkeypatch, SlowToEmbed())
    monkeypatch.setenv("CRIB_PARALLEL", "1")
    started_at = time.perf_counter()
    with Memory(create=False) as memory:
        assert memory.prefetch("which runner should the backups use?", give_up_at=started_at + 0.5)
        retrieval = memory.recall("which runner should the backups use?")
        waited = time.perf_counter() - started_at
        by_name = {c.channel: c for c in retrieval.channels}
        assert not by_name["vector"].ran and "did not answer in time" in by_name["vector"].note
        assert by_name["fts"].ran and by_name["fts"].hits
        assert waited < 5


def test_a_worker_that_is_not_needed_exits(store: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """Forked before the store is read, then told the embedder is unknown: it leaves, reaped."""
    monkeypatch.setenv("CRIB_PARALLEL", "1")
    worker = prefetch.fork_for(load_settings(), "what database did we choose?")
    assert worker is not None
    pid = worker.pid
    from crib_plugin.plugins.manager import registry

    monkeypatch.delitem(registry().embedders, "minilm")
    with Memory(create=False) as memory:
        assert not memory.prefetch("what database did we choose?", worker=worker)
    _assert_gone(pid)


def test_an_unasked_worker_is_reaped_on_close(store: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("CRIB_PARALLEL", "1")
    memory = Memory(create=False)
    assert memory.prefetch("what database did we choose?")
    pid = memory.embedder().worker_pid
    started = time.monotonic()
    memory.close()
    assert time.monotonic() - started < 1  # closing does not wait for the worker to finish
    _assert_gone(pid)


def test_no_worker_when_off_or_when_vectors_are_not_asked_for(store: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    for env in ({"CRIB_PARALLEL": "0"}, {"CRIB_PARALLEL": "1", "CRIB_CHANNEL": "fts,triples"}):
        for name, value in env.items():
            monkeypatch.setenv(name, value)
        with Memory(create=False) as memory:
            assert not memory.prefetch("what database did we choose?")
        monkeypatch.delenv("CRIB_CHANNEL", raising=False)
    monkeypatch.setenv("CRIB_PARALLEL", "1")
    with Memory(create=False) as memory:
        assert not memory.prefetch("")  # nothing to embed


def test_parallel_setting_is_validated(monkeypatch: pytest.MonkeyPatch) -> None:
    for value, mode in (("auto", "auto"), ("1", "on"), ("YES", "on"), ("0", "off"), ("off", "off")):
        monkeypatch.setenv("CRIB_PARALLEL", value)
        assert load_settings().parallel == mode
    monkeypatch.setenv("CRIB_PARALLEL", "sometimes")
    with pytest.raises(ConfigError, match="CRIB_PARALLEL"):
        load_settings()


def test_auto_needs_two_cpus(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(prefetch, "_cpus", lambda: 1)
    assert not prefetch.enabled("auto") and prefetch.enabled("on") and not prefetch.enabled("off")
    monkeypatch.setattr(prefetch, "_cpus", lambda: 2)
    assert prefetch.enabled("auto")


def test_vector_channel_runs_last_but_reports_in_order(store: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    from crib_plugin.read import recall as recall_mod

    ran: list[str] = []
    original = recall_mod.run_channel

    def spy(memory: Memory, name: str, query: Any, limit: int) -> Any:
        ran.append(name)
        return original(memory, name, query, limit)

    monkeypatch.setattr(recall_mod, "run_channel", spy)
    with Memory(create=False) as memory:
        retrieval = memory.recall("what database did we choose?")
    assert ran[-1] == "vector"
    assert [c.channel for c in retrieval.channels] == list(memory.registry.channels)


class SlowToEmbed:
    """An English-only embedder whose identity is instant and whose embedding never comes."""

    name, model, dim, multilingual = "minilm", "all-MiniLM-L6-v2", 384, False

    def __call__(self) -> Any:
        return self

    def embed_query(self, text: str) -> Any:
        time.sleep(30)
        raise ModelError("too late")


def test_a_cjk_prompt_does_not_wait_for_an_english_only_embedding(store: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """The worker sends the embedder's identity before the vector: for a CJK prompt and an
    English-only model, the vector channel stops at the identity."""
    _swap_factory(monkeypatch, SlowToEmbed())
    started_at = time.monotonic()
    retrieval, started, memory = _retrieve("数据库备份多久一次？", "1", monkeypatch)
    with memory:
        assert started and time.monotonic() - started_at < 10
        vector = {c.channel: c for c in retrieval.channels}["vector"]
        assert not vector.ran and "English-only" in vector.note
        assert [h.entry.content for h in retrieval.hits] == ["数据库每天凌晨两点备份一次。"]
