"""``crib doctor --models``: a judge or reranker that answers in shape but cannot tell relevant from
unrelated is called too weak; one that can is called fit. The model is a callable here (and the
loopback fake behind the CLI); the real 1.5B model's verdict is the ``ollama_live`` test at the end."""

from __future__ import annotations

import json
from typing import Any, Sequence

import pytest

from crib_plugin.hosts.model_check import (
    JUDGE_CASES,
    MEMORIES,
    RERANK_CASES,
    judge_figures,
    judge_verdict,
    rerank_figures,
    rerank_verdict,
)
from crib_plugin.models.base import Candidate

try:
    from fake_ollama import FakeOllama
except ImportError:  # pragma: no cover - run from the repository root
    from tests.fake_ollama import FakeOllama

NEEDED = {prompt: {MEMORIES[k][1] for k in wanted} for prompt, _shown, wanted in JUDGE_CASES}
ANSWERS = {question: MEMORIES[good][1] for question, good, _bad in RERANK_CASES}


def oracle(prompt: str, candidates: Sequence[Candidate]) -> list[int]:
    return [i for i, c in enumerate(candidates) if c.content in NEEDED[prompt]]


def picks_everything(prompt: str, candidates: Sequence[Candidate]) -> list[int]:
    return list(range(len(candidates)))


def test_a_judge_that_picks_everything_is_too_weak_and_a_good_one_is_fit() -> None:
    weak = judge_verdict("tiny", judge_figures(picks_everything), deadline=1.5)
    assert weak.verdict == "too weak" and "never answered []" in weak.why and weak.recommendation
    assert weak.figures["recall"] == 1.0 and weak.figures["precision"] < 0.3  # catching everything is not enough
    good = judge_verdict("big", judge_figures(oracle), deadline=1.5)
    assert good.verdict == "fit" and good.figures["said_no"] == "4 of 4" and good.figures["precision"] == 1.0


def test_a_judge_that_always_says_no_is_too_weak() -> None:
    silent = judge_verdict("mute", judge_figures(lambda p, c: []), deadline=1.5)
    assert silent.verdict == "too weak" and "recall 0.0" in silent.why


def test_a_reranker_that_cannot_separate_is_too_weak() -> None:
    flat = rerank_verdict("tiny", rerank_figures(lambda q, texts: [5.0 for _ in texts]))
    assert flat.verdict == "too weak" and flat.figures["separation"] == 0.0
    good = rerank_verdict("big", rerank_figures(lambda q, texts: [10.0 if t == ANSWERS[q] else 1.0 for t in texts]))
    assert good.verdict == "fit" and good.figures["separation"] == 1.0


def test_doctor_models_reports_the_verdict_and_fails(fake_ollama_env: FakeOllama, crib: Any, monkeypatch: pytest.MonkeyPatch) -> None:
    fake_ollama_env.add_model("tiny:1b")
    monkeypatch.setenv("CRIB_JUDGE_MODEL", "tiny:1b")
    fake_ollama_env.respond_with(lambda request: {"relevant": [1, 2, 3, 4, 5]})  # picks everything
    result = crib("doctor", "--models")
    report = json.loads(result.stdout)
    (check,) = report["model_quality"]["checks"]
    assert check["job"] == "judge" and check["verdict"] == "too weak" and "recommendation" in check
    assert result.returncode == 1 and report["ok"] is False and "Traceback" not in result.stderr
    asked = fake_ollama_env.requests_to("/api/chat")
    assert len(asked) == len(JUDGE_CASES) and all(r.json["keep_alive"] for r in asked)
