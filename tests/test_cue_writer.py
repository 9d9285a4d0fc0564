"""The Ollama cue writer (``CRIB_CUE_MODEL``): a local model writes the recall cue of a memory
stored without one — against the loopback fake Ollama, plus one test against a real Ollama that
skips unless ``OLLAMA_HOST`` answers with the model.
"""

from __future__ import annotations

import json
from typing import Any

import pytest

from crib_plugin.core.errors import ModelError
from crib_plugin.models.ollama.cue_writer import CUE_SCHEMA, OllamaCueWriter, parse_cue

try:
    from fake_ollama import FakeOllama, live_host, live_model
except ImportError:  # pragma: no cover - run from the repository root
    from tests.fake_ollama import FakeOllama, live_host, live_model

MODEL = "gemma3:1b"
MEMORY = "When a command is destructive (drops data, deletes resources), show it and wait for an explicit yes."
CUE = "dropping a table or database; deleting cloud resources; running a destructive command"


@pytest.fixture
def cue_model(fake_ollama_env: FakeOllama, monkeypatch: pytest.MonkeyPatch) -> FakeOllama:
    """A cue model asked by the write itself (``CRIB_WRITE_MODELS=inline``; the default leaves it to
    the background worker: tests/test_model_work.py)."""
    monkeypatch.setenv("CRIB_CUE_MODEL", MODEL)
    monkeypatch.setenv("CRIB_WRITE_MODELS", "inline")
    return fake_ollama_env


def test_a_reply_is_parsed_onto_one_line_and_anything_else_refused() -> None:
    assert parse_cue('{"when": "  dropping a table;\\n deleting resources "}') == "dropping a table; deleting resources"
    assert parse_cue({"when": "a; b"}) == "a; b"
    for bad in ("not json", '{"when": ""}', '{"cue": "x"}', "[1, 2]", json.dumps({"when": "w" * 501})):
        with pytest.raises(ModelError):
            parse_cue(bad)


def test_a_memory_without_a_cue_gets_the_model_s_and_is_found_by_it(cue_model: FakeOllama, memory: Any) -> None:
    cue_model.script({"when": CUE})
    for kind, text in (("decision", "Staging nodes shut down at night to save money."), ("note", "Invoice PDFs use WeasyPrint.")):
        memory.write(text, type=kind, metadata={"when": "unrelated situations"})  # the agent's own cue: no model call
    entry_id = memory.write(MEMORY, type="preference")
    entry = memory.entry(entry_id)
    assert entry.metadata["when"] == CUE and entry.metadata["when_by"] == MODEL
    (request,) = cue_model.requests_to("/api/chat")
    body = request.json
    assert body["format"] == CUE_SCHEMA and body["options"]["temperature"] == 0 and body["model"].startswith("gemma3")
    assert body["messages"][-1]["content"] == f"preference: {MEMORY}"  # the model sees the memory alone
    assert "explicit yes" in memory.retrieve("drop the old usage_hourly table in staging")


def test_nothing_is_asked_without_the_setting(fake_ollama_env: FakeOllama, memory: Any) -> None:
    entry_id = memory.write(MEMORY, type="preference")
    assert "when" not in memory.entry(entry_id).metadata and fake_ollama_env.requests_to("/api/chat") == []


@pytest.mark.parametrize("fault", ["http", "malformed", "slow", "empty"])
def test_a_failing_model_loses_no_memory_and_says_why(cue_model: FakeOllama, memory: Any, monkeypatch: pytest.MonkeyPatch,
                                                     fault: str) -> None:
    if fault == "slow":  # 3 s of silence against a bulk budget of 10 x 0.1 s: well past it, never a race
        monkeypatch.setenv("CRIB_EXTRACT_BUDGET", "0.1")
    if not cue_model.break_chat(fault):
        cue_model.script({"when": "   "})
    entries = memory.write_many([_new(MEMORY), _new("A second memory about backups.")])
    assert len(entries) == 2 and all(not r.duplicate for r in entries)
    for report in entries:
        assert "when" not in memory.entry(report.entry_id).metadata
        assert any("no recall cue written" in n for n in report.notes), report.notes
    assert len(cue_model.requests_to("/api/chat")) == 1  # the first failure stops asking in this call


def test_a_secret_in_the_model_s_cue_is_redacted(cue_model: FakeOllama, memory: Any) -> None:
    cue_model.script({"when": "calling the API with key sk-proj-abcdefghijklmnopqrstuvwxyz0123456789ABCDEF"})
    entry_id = memory.write(MEMORY, type="preference")
    assert "sk-proj" not in memory.entry(entry_id).metadata["when"]


def _new(text: str) -> Any:
    from crib_plugin.memory import NewEntry

    return NewEntry(text, "note")


@pytest.mark.ollama_live
def test_live_cue_writer_is_deterministic() -> None:
    model = live_model("CRIB_CUE_MODEL", MODEL)
    writer = OllamaCueWriter(model=model, host=live_host(model), timeout=120)
    first = writer.write_cue(MEMORY, "preference")
    assert first == writer.write_cue(MEMORY, "preference") and 0 < len(first) <= 500


def test_reindex_write_cues_fills_the_missing_ones_and_keeps_the_agent_s(cue_model: FakeOllama, crib: Any,
                                                                         monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delenv("CRIB_CUE_MODEL")  # written without a model: no cues
    assert crib("write", "--type", "preference", input=MEMORY).returncode == 0
    assert crib("write", "--when", "the agent's own cue", input="Invoice PDFs use WeasyPrint.").returncode == 0
    monkeypatch.setenv("CRIB_CUE_MODEL", MODEL)
    cue_model.respond_with(lambda req: {"when": CUE})
    done = crib("reindex", "--write-cues")
    assert done.returncode == 0, done.stderr
    assert json.loads(done.stdout.splitlines()[-1])["cues_written"] == 1
    listed = {e["content"]: e["metadata"] for e in json.loads(crib("list", "--json").stdout)}
    assert (listed[MEMORY]["when"], listed[MEMORY]["when_by"]) == (CUE, MODEL)
    assert listed["Invoice PDFs use WeasyPrint."]["when"] == "the agent's own cue"  # never overwritten
    assert len(cue_model.requests_to("/api/chat")) == 1


def test_reindex_write_cues_needs_the_model_and_reports_how_far_it_got(cue_model: FakeOllama, crib: Any,
                                                                       monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delenv("CRIB_CUE_MODEL")
    for text in ("First memory about backups.", "Second memory about restores."):
        assert crib("write", input=text).returncode == 0
    unset = crib("reindex", "--write-cues")
    assert unset.returncode != 0 and "CRIB_CUE_MODEL" in unset.stderr and "Traceback" not in unset.stderr
    monkeypatch.setenv("CRIB_CUE_MODEL", MODEL)
    cue_model.script({"when": "backing up the database"}, {"when": "   "})
    half = crib("reindex", "--write-cues")
    assert half.returncode != 0 and "wrote 1 of 2 missing cues" in half.stderr and "Traceback" not in half.stderr
    cued = [e for e in json.loads(crib("list", "--json").stdout) if "when" in e["metadata"]]
    assert [e["metadata"]["when"] for e in cued] == ["backing up the database"]  # kept what it wrote


def test_the_same_memory_written_again_is_a_duplicate(cue_model: FakeOllama, memory: Any) -> None:
    cue_model.respond_with(lambda req: {"when": CUE})
    first = memory.write(MEMORY, type="preference")
    again = memory.write(MEMORY, type="preference")
    assert again == first and memory.last_write.duplicate and memory.store.count_entries() == 1
    assert len(cue_model.requests_to("/api/chat")) == 1  # the second copy is recognised by its text, before any cue is written
