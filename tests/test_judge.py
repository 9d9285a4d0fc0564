"""The judge (``CRIB_JUDGE`` / ``CRIB_JUDGE_MODEL``): a model picks the block from the offline block
and the best candidates from before the gate — against the loopback fake Ollama, plus one test
against a real Ollama that skips unless ``OLLAMA_HOST`` answers with the model.
"""

from __future__ import annotations

import json
import os
import re
import time
from pathlib import Path
from typing import Any

import pytest

from crib_plugin.core.errors import ModelError
from crib_plugin.models.base import Candidate
from crib_plugin.models.ollama.judge import OllamaJudge, judge_schema, parse_picks

try:
    from fake_ollama import FakeOllama, live_host, live_model
except ImportError:  # pragma: no cover - run from the repository root
    from tests.fake_ollama import FakeOllama, live_host, live_model

MODEL = "qwen2.5:3b"

MEMORIES = [
    ("preference", "Don't add new dependencies without asking first; say which package and its licence.",
     "adding a new dependency or library to any project"),
    ("decision", "The billing service uses PostgreSQL 15 with asyncpg.", "choosing the billing database"),
    ("error", "ERR_DOCKET_LEASE_7 when two workers claimed the same job; fixed with a compare-and-swap update.", ""),
    ("note", "The docs site is built with mkdocs-material and published on every tag.", ""),
]
SHUT_PROMPT = "add lodash to apps/web for a debounce helper"  # no word, no cosine: the offline gate shuts


@pytest.fixture
def judged(fake_ollama_env: FakeOllama, monkeypatch: pytest.MonkeyPatch, memory: Any) -> FakeOllama:
    """A store of :data:`MEMORIES` and ``CRIB_JUDGE_MODEL`` set (the memory re-reads its settings)."""
    for kind, text, cue in MEMORIES:
        memory.write(text, type=kind, metadata={"when": cue} if cue else None)
    fake_ollama_env.add_model(MODEL)
    monkeypatch.setenv("CRIB_JUDGE_MODEL", MODEL)
    _reload_settings(memory)
    return fake_ollama_env


def _asked(fake: FakeOllama) -> list[Any]:
    """The judge's requests (writes with Ollama answering also chat, to extract facts)."""
    return [r for r in fake.requests_to("/api/chat") if "relevant" in (r.json.get("format") or {}).get("properties", {})]


def _reload_settings(memory: Any) -> None:
    from crib_plugin.core.config import get_settings

    memory.settings = get_settings()


def _pick_lines_with(word: str) -> Any:
    """A fake reply: the numbers of the listed memories whose line contains ``word``."""
    def reply(request: Any) -> dict[str, list[int]]:
        listing = request.json["messages"][-1]["content"]
        return {"relevant": [int(n) for n, line in re.findall(r"^(\d+)\. (.*)$", listing, re.M) if word in line]}
    return reply


def test_a_reply_is_parsed_and_anything_else_refused() -> None:
    assert parse_picks('{"relevant": [2, 1, 2]}', 3) == [1, 0]  # 0-based, no repeats, in the order given
    assert parse_picks({"relevant": []}, 3) == []
    for bad in ("not json", '{"relevant": "1"}', '{"relevant": [true]}', '{"picks": [1]}', '{"relevant": [4]}', '{"relevant": [0]}'):
        with pytest.raises(ModelError):
            parse_picks(bad, 3)
    assert parse_picks('{"relevant": [1, 4, 3]}', 3) == [0, 2]  # a number past the list is dropped, the rest kept


def test_the_model_reads_a_bounded_prompt_and_short_candidates() -> None:
    judge = OllamaJudge(model=MODEL, host="http://127.0.0.1:9")
    shown = judge.messages("x" * 50_000 + " the end", [Candidate("note", "y" * 5_000, "when z")])[-1]["content"]
    assert len(shown) < 3_000 and shown.rstrip().endswith("(comes back when: when z)") and "the end" in shown


def test_the_model_is_told_today_and_each_memory_s_date(monkeypatch: pytest.MonkeyPatch) -> None:
    """"what did we decide yesterday?" can only be judged with dates; "now" is CRIB_NOW when set."""
    monkeypatch.setenv("CRIB_NOW", "2026-03-10T12:00:00Z")
    judge = OllamaJudge(model=MODEL, host="http://127.0.0.1:9")
    shown = judge.messages("what did we decide yesterday?", [Candidate("decision", "Use uv.", "", "2026-03-09T10:00:00Z")])
    assert "Today: 2026-03-10" in shown[-1]["content"] and "1. [2026-03-09 decision] Use uv." in shown[-1]["content"]


def test_the_judge_opens_a_prompt_the_gate_shut_on(judged: FakeOllama, memory: Any, monkeypatch: pytest.MonkeyPatch) -> None:
    judged.respond_with(_pick_lines_with("dependencies"))
    block = memory.retrieve(SHUT_PROMPT)
    assert "without asking first" in block and "PostgreSQL" not in block
    (request,) = _asked(judged)
    body = request.json
    count = len(re.findall(r"^\d+\. ", body["messages"][-1]["content"], re.M))
    assert body["format"] == judge_schema(count) and body["options"]["temperature"] == 0 and body["model"] == MODEL
    assert body["format"]["properties"]["relevant"]["items"]["maximum"] == count  # no number past the list
    assert body["keep_alive"] == "30m"  # the model stays loaded between prompts
    listing = body["messages"][-1]["content"]
    assert SHUT_PROMPT in listing and "(comes back when: adding a new dependency" in listing  # the cue helps the model
    assert re.search(r"^Today: \d{4}-\d\d-\d\d$", listing, re.M) and re.search(r"^1\. \[\d{4}-\d\d-\d\d ", listing, re.M)  # dates, for time prompts
    assert any("picked by judge" in why and "offline cut had left it out" in why for _, why in memory.last_retrieval.notes)
    monkeypatch.delenv("CRIB_JUDGE_MODEL")
    _reload_settings(memory)
    assert memory.retrieve(SHUT_PROMPT) == ""  # offline: the gate shuts on it


def test_an_empty_pick_silences_what_the_offline_block_would_inject(judged: FakeOllama, memory: Any) -> None:
    judged.script({"relevant": []})
    assert memory.retrieve("ERR_DOCKET_LEASE_7 again") == ""
    assert any("did not pick it" in why for _, why in memory.last_retrieval.dropped)


@pytest.mark.parametrize("fault", ["http", "malformed", "slow", "out of range"])
def test_a_failing_judge_keeps_the_offline_block(judged: FakeOllama, memory: Any, monkeypatch: pytest.MonkeyPatch, fault: str) -> None:
    if fault == "slow":
        monkeypatch.setenv("CRIB_JUDGE_DEADLINE", "0.3")
        _reload_settings(memory)
    if not judged.break_chat(fault):
        judged.script({"relevant": [99]})
    block = memory.retrieve("ERR_DOCKET_LEASE_7 again")
    assert "compare-and-swap" in block
    assert any("failed open, the offline block kept" in why for _, why in memory.last_retrieval.notes)


def test_the_judge_gives_up_in_time_for_the_hook_s_own_deadline(judged: FakeOllama, memory: Any,
                                                                monkeypatch: pytest.MonkeyPatch) -> None:
    """Inside a hook, the judge waits only as long as the hook's deadline allows, so the offline
    block is still printed (the hook itself would be killed, printing nothing)."""
    from crib_plugin.core import deadline

    judged.slow(3, path="/api/chat")
    monkeypatch.setattr(deadline, "_hard_deadline", time.monotonic() + 0.6)
    assert "compare-and-swap" in memory.retrieve("ERR_DOCKET_LEASE_7 again")
    (note,) = [why for _, why in memory.last_retrieval.notes if "failed open" in why]
    waited = float(re.search(r"within ([\d.]+)s", note).group(1))
    assert waited < 0.6  # not CRIB_JUDGE_DEADLINE's 1.5
    monkeypatch.setattr(deadline, "_hard_deadline", time.monotonic() - 1)
    assert "compare-and-swap" in memory.retrieve("ERR_DOCKET_LEASE_7 again")
    assert any("no time left in the hook's budget" in why for _, why in memory.last_retrieval.notes)


def test_a_slow_judge_never_costs_the_hook_its_answer(judged: FakeOllama, crib_cold: Any, db: Path) -> None:
    """The real hook in a fresh process: a judge that would take 10 s, allowed 30, within a 3 s hook."""
    judged.slow(10, path="/api/chat")
    payload = json.dumps({"session_id": "s1", "hook_event_name": "UserPromptSubmit", "prompt": "ERR_DOCKET_LEASE_7 again",
                          "cwd": os.getcwd(), "permission_mode": "default"})
    result = crib_cold("hook", "user-prompt-submit", input=payload,
                       env={"CRIB_DB": str(db), "CRIB_JUDGE_MODEL": MODEL, "CRIB_JUDGE_DEADLINE": "30", "CRIB_HOOK_TIMEOUT": "3"})
    assert result.returncode == 0 and "compare-and-swap" in result.stdout


def test_nothing_is_asked_without_the_setting(fake_ollama_env: FakeOllama, memory: Any) -> None:
    memory.write("ERR_DOCKET_LEASE_7 when two workers claimed the same job.", type="error")
    assert "ERR_DOCKET_LEASE_7" in memory.retrieve("ERR_DOCKET_LEASE_7 again")
    assert _asked(fake_ollama_env) == []


def test_the_ollama_judge_needs_its_model(fake_ollama_env: FakeOllama, memory: Any, monkeypatch: pytest.MonkeyPatch) -> None:
    memory.write("ERR_DOCKET_LEASE_7 when two workers claimed the same job.", type="error")
    monkeypatch.setenv("CRIB_JUDGE", "ollama")
    _reload_settings(memory)
    assert "ERR_DOCKET_LEASE_7" in memory.retrieve("ERR_DOCKET_LEASE_7 again")
    assert any("needs CRIB_JUDGE_MODEL" in why for _, why in memory.last_retrieval.notes)
    assert _asked(fake_ollama_env) == []


def test_explain_shows_the_judge(judged: FakeOllama, crib: Any, db: Path) -> None:
    judged.respond_with(_pick_lines_with("dependencies"))
    result = crib("retrieve", "--explain", input=SHUT_PROMPT, env={"CRIB_DB": str(db), "CRIB_JUDGE_MODEL": MODEL})
    assert "without asking first" in result.stdout
    assert "picked by judge qwen2.5:3b" in result.stderr and "Traceback" not in result.stderr


@pytest.mark.ollama_live
def test_live_judge_picks_within_range_and_is_deterministic() -> None:
    model = live_model("CRIB_JUDGE_MODEL", MODEL)
    judge = OllamaJudge(model=model, host=live_host(model), timeout=120)
    candidates = [Candidate(kind, text, cue) for kind, text, cue in MEMORIES]
    first = judge.pick(SHUT_PROMPT, candidates)
    assert first == judge.pick(SHUT_PROMPT, candidates) and all(0 <= i < len(candidates) for i in first)
