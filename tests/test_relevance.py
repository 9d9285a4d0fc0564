"""The relevance gate and calibration: unrelated prompts inject nothing, related ones do."""

from __future__ import annotations

import json

CODING = [
    "type=decision Chose SQLite for storage. Zero dependencies.",
    "type=error The task queue crashed when two workers claimed the same job; fixed with a row lock.",
    "type=correction Dates are stored in UTC, not local time as the old README said.",
    "The logger writes one JSON line per event to .state/log.jsonl.",
    "type=decision Ruff replaces flake8, isort and black: one tool, one config block.",
]


def _seed(memory) -> None:
    for text in CODING:
        memory.write(text)


def test_unrelated_prompts_inject_nothing(memory) -> None:
    _seed(memory)
    for prompt in (
        "how long should sourdough proof?",
        "recommend a good pasta recipe for dinner",
        "how do I file a tax extension with the IRS?",
        "why is my car's check engine light blinking?",
    ):
        assert memory.retrieve(prompt) == "", prompt
        assert memory.last_retrieval.gate is not None and not memory.last_retrieval.gate.open


def test_related_prompts_open_the_gate(memory) -> None:
    _seed(memory)
    assert "Chose SQLite" in memory.retrieve("what database did we choose?")
    assert "task queue crashed" in memory.retrieve("what went wrong with the task queue?")
    assert "Ruff replaces" in memory.retrieve("which linter replaced flake8?")


def test_search_shows_raw_ranking_without_gate(memory) -> None:
    _seed(memory)
    # `search` is an explicit lookup: the vector channel's best guess is still listed.
    assert memory.search("how long should sourdough proof?", channels=["vector"]) == []  # below floor
    assert memory.search("task queue", channels=["fts"])


def test_irregular_verb_forms_match(memory) -> None:
    _seed(memory)
    retrieval = memory.recall("what did we choose?", channels=["fts"])
    assert retrieval.hits and "Chose SQLite" in retrieval.hits[0].entry.content


def test_gate_reason_is_explained(crib) -> None:
    for text in CODING:
        crib("write", input=text)
    result = crib("retrieve", "--explain", input="how long should sourdough proof?")
    assert result.stdout == ""
    assert "relevance gate SHUT" in result.stderr


def test_calibrate_writes_gate_from_probes(memory, crib) -> None:
    from crib_plugin.hosts.calibrate import calibrate

    for i in range(25):
        memory.write(f"Build note {i}: the CI pipeline for service {i} runs pytest then ruff on every push.")
    report = calibrate(memory, write=True)
    key = memory.embedder_key()
    assert report["written"] is True and report["entries"] == 25
    stored = float(memory.store.get_setting(f"gate:{key}"))
    assert abs(stored - report["gate"]) < 1e-3
    assert report["off_topic_best_cosine"]["p95"] < stored <= 0.75
    from crib_plugin.read.gate.levels import vector_floor

    assert abs(vector_floor(memory) - (stored - 0.10)) < 1e-6


def test_calibrate_keeps_default_on_tiny_store(memory) -> None:
    from crib_plugin.hosts.calibrate import calibrate

    _seed(memory)
    report = calibrate(memory)
    assert report["written"] is False and "fewer than" in report["reason"]


def test_calibrate_cli_dry_run_and_reset(crib) -> None:
    for text in CODING:
        crib("write", input=text)
    report = json.loads(crib("calibrate", "--dry-run").stdout)
    assert report["written"] is False and "off_topic_best_cosine" in report
    assert json.loads(crib("calibrate", "--reset").stdout) == {"reset": True}


def test_calibrate_never_lowers_the_gate_on_a_small_store(memory) -> None:
    """Issue 12: calibrating a 20-entry store lowered the gate and made injection noisier."""
    from crib_plugin.hosts.calibrate import calibrate
    from crib_plugin.read.gate.levels import default_gate, vector_gate

    for i in range(22):
        memory.write(f"Build note {i}: the CI pipeline for service {i} runs pytest then ruff on every push.")
    shipped = default_gate(memory.embedder_key(), memory.store.count_entries())
    report = calibrate(memory, write=True)
    assert report["gate"] >= round(shipped, 3) - 1e-3
    memory.store.set_setting(f"gate:{memory.embedder_key()}", "0.05")  # an old calibration that lowered it
    assert vector_gate(memory) == shipped
