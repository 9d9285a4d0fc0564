"""``crib doctor --models``: is the configured judge or reranker good enough to be used?

A local model that answers in the right shape is not thereby useful. Measured on a real
Qwen2.5-Coder-1.5B, a judge picked 8 of 8 candidates on most prompts (it never says "none") and a
reranker graded only 0 or 5: used blindly, the first injects everything the offline gate kept out,
the second reorders at random. This check asks the configured model a short built-in set of coding
memories (:data:`JUDGE_CASES`, :data:`RERANK_CASES`: written for this check, not taken from any
evaluation) and says, per job, whether it is fit:

* **judge** — on prompts that need one memory, does it pick it (recall) and little else
  (precision)? On prompts no memory answers, does it ever say ``[]``? Too weak when it never says
  no, or its precision or recall is below :data:`JUDGE_FLOOR`.
* **reranker** — does it grade the memory that answers a question above another one, unrelated
  or a near miss of the same project (separation)? Too weak below :data:`RERANK_FLOOR`.

It also times each call against the job's deadline (``CRIB_JUDGE_DEADLINE``,
``CRIB_RERANK_DEADLINE``): a fit model that cannot answer in time fails open on every prompt. The
verdict recommends a larger model when this one is too weak; the check itself is how to confirm one.
"""

from __future__ import annotations

import functools
import statistics
import time
from dataclasses import dataclass
from typing import Any, Callable, Sequence

from ..core.errors import CribError
from ..models.base import Candidate
from ..models.ollama.judge import OllamaJudge
from ..models.ollama.reranker import OllamaReranker

JUDGE_FLOOR = 0.6
"""Precision and recall a judge must reach on the built-in cases (and it must say no at least once)."""
RERANK_FLOOR = 0.8
"""Share of (relevant, unrelated) pairs a reranker must order correctly."""
RECOMMENDATION = ("use a larger instruct model (7B class, e.g. qwen2.5:7b or qwen2.5-coder:7b) for this job and run "
                  "`crib doctor --models` again, or leave the job to the offline path")

MEMORIES: dict[str, tuple[str, str, str]] = {
    "deps": ("preference", "Ask the user before adding any new dependency to package.json or pyproject.toml.",
             "adding a package or library; installing a dependency"),
    "uv": ("preference", "Use uv, not pip, for every Python environment in this repo: uv add, uv run pytest.",
           "installing a Python package; running Python tests"),
    "migr": ("decision", "Database migrations are written with Alembic and reviewed by Dana before merge.",
             "changing the database schema; writing a migration"),
    "ci": ("error", "CI hung on the redis fixture; fixed with REDIS_URL=redis://localhost:6390 in ci.env.",
           "tests hang in CI; setting up Redis for tests"),
    "deploy": ("decision", "Production deploys go through the release branch on Thursdays only, never on Fridays.",
               "deploying to production; planning a release"),
    "lint": ("preference", "Run ruff format before committing; the pre-commit hook rejects unformatted files.",
             "committing code; a pre-commit hook fails"),
    "logo": ("note", "The marketing site's logo is an SVG in public/brand/logo.svg, 240 px wide.",
             "changing the logo; editing the marketing site"),
    "tz": ("decision", "All timestamps are stored in UTC and converted to the user's zone only in the UI.",
           "storing dates or times; a timezone bug"),
}
"""Small coding memories, each with its recall cue."""

JUDGE_CASES: list[tuple[str, list[str], set[str]]] = [
    ("add lodash to apps/web", ["logo", "deps", "tz", "ci", "deploy"], {"deps"}),
    ("install httpx and write a quick test for the client", ["uv", "logo", "deploy", "tz", "lint"], {"uv"}),
    ("the test suite hangs forever on CI again", ["deploy", "ci", "logo", "migr", "tz"], {"ci"}),
    ("add a created_at column to the orders table", ["lint", "logo", "migr", "deploy", "uv"], {"migr"}),
    ("what is the capital of Australia?", ["deps", "uv", "migr", "ci", "logo"], set()),
    ("write a haiku about autumn leaves", ["tz", "deploy", "lint", "deps", "ci"], set()),
    ("rename the variable x to count in utils.py", ["migr", "deploy", "logo", "tz", "uv"], set()),
    ("explain what a Python list comprehension is", ["deploy", "migr", "logo", "ci", "deps"], set()),
]
"""(prompt, candidates shown, the ones it needs): four that need one memory, four that need none."""

RERANK_CASES: list[tuple[str, str, str]] = [
    ("Which tool manages Python environments here?", "uv", "logo"),
    ("Why did CI hang?", "ci", "deploy"),
    ("Can I deploy on Friday?", "deploy", "lint"),
    ("How are timestamps stored?", "tz", "deps"),
    ("Who reviews database migrations?", "migr", "logo"),
    ("What happens if I commit unformatted code?", "lint", "tz"),
    ("Which tool manages Python environments here?", "uv", "lint"),
    ("Why did CI hang?", "ci", "lint"),
    ("Can I deploy on Friday?", "deploy", "migr"),
    ("How are timestamps stored?", "tz", "migr"),
    ("Who reviews database migrations?", "migr", "tz"),
    ("What happens if I commit unformatted code?", "lint", "deps"),
]
"""(question, the memory that answers it, another memory): six unrelated, then six near misses of
the same project and kind — what a reranker over budget actually orders, since every candidate it
sees was retrieved for the prompt."""


@dataclass
class Check:
    """One job's verdict: ``fit`` or ``too weak``, with the figures behind it."""

    job: str
    model: str
    verdict: str
    figures: dict[str, Any]
    why: str
    recommendation: str | None = None

    def as_dict(self) -> dict[str, Any]:
        out = {"job": self.job, "model": self.model, "verdict": self.verdict, "why": self.why, **self.figures,
               "ok": self.verdict == "fit"}
        if self.recommendation:
            out["recommendation"] = self.recommendation
        return out


def _candidate(key: str) -> Candidate:
    kind, text, cue = MEMORIES[key]
    return Candidate(kind, text, cue)


def _timed(fn: Callable[[], Any]) -> tuple[Any, float]:
    started = time.monotonic()
    value = fn()
    return value, time.monotonic() - started


def judge_figures(pick: Callable[[str, list[Candidate]], Sequence[int]]) -> dict[str, Any]:
    """Precision, recall, how often it says no when it should, and its latency, on :data:`JUDGE_CASES`."""
    picked = right = needed = said_no = no_cases = errors = 0
    seconds: list[float] = []
    for prompt, shown, wanted in JUDGE_CASES:
        try:
            picks, took = _timed(functools.partial(pick, prompt, [_candidate(k) for k in shown]))
        except CribError:
            errors += 1
            continue
        seconds.append(took)
        chosen = {shown[i] for i in list(picks) if 0 <= i < len(shown)}
        picked += len(chosen)
        right += len(chosen & wanted)
        needed += len(wanted)
        if not wanted:
            no_cases += 1
            said_no += not chosen
    return {
        "cases": len(JUDGE_CASES), "errors": errors,
        "precision": round(right / picked, 3) if picked else None,
        "recall": round(right / needed, 3) if needed else None,
        "said_no": f"{said_no} of {no_cases}",
        "picks_per_prompt": round(picked / max(1, len(seconds)), 2),
        "median_seconds": round(statistics.median(seconds), 2) if seconds else None,
    }


def judge_verdict(model: str, figures: dict[str, Any], deadline: float) -> Check:
    """``too weak`` when it never says no, or its precision or recall is under :data:`JUDGE_FLOOR`."""
    said_no = int(str(figures["said_no"]).split(" of ")[0])
    problems = []
    if figures["errors"] > len(JUDGE_CASES) // 2:
        problems.append(f"{figures['errors']} of {len(JUDGE_CASES)} calls failed")
    if said_no == 0:
        problems.append("it never answered [] on a prompt no memory answers: it would inject memories into every prompt")
    for name in ("precision", "recall"):
        value = figures.get(name)
        if value is None or value < JUDGE_FLOOR:
            problems.append(f"{name} {value} below {JUDGE_FLOOR}")
    slow = figures.get("median_seconds") is not None and figures["median_seconds"] > deadline
    if problems:
        return Check("judge", model, "too weak", figures, "; ".join(problems), RECOMMENDATION)
    why = f"precision {figures['precision']}, recall {figures['recall']}, said no {figures['said_no']}"
    if slow:
        why += f"; but its median answer ({figures['median_seconds']} s) is over CRIB_JUDGE_DEADLINE ({deadline:g} s): raise it"
    return Check("judge", model, "fit", figures, why)


def rerank_figures(score: Callable[[str, list[str]], Sequence[float]]) -> dict[str, Any]:
    """How often the answering memory is graded above an unrelated one, the grades used, latency."""
    ordered = errors = 0
    grades: set[float] = set()
    seconds: list[float] = []
    for question, good, bad in RERANK_CASES:
        try:
            found, took = _timed(functools.partial(score, question, [MEMORIES[good][1], MEMORIES[bad][1]]))
        except CribError:
            errors += 1
            continue
        seconds.append(took / 2)
        found = list(found)
        grades.update(found)
        ordered += found[0] > found[1]
    return {"pairs": len(RERANK_CASES), "errors": errors, "separation": round(ordered / len(RERANK_CASES), 3),
            "distinct_grades": sorted(grades), "median_seconds_per_grade": round(statistics.median(seconds), 2) if seconds else None}


def rerank_verdict(model: str, figures: dict[str, Any]) -> Check:
    if figures["separation"] < RERANK_FLOOR:
        why = (f"it graded the answering memory above the other one in {figures['separation']:.0%} of pairs "
               f"(needs {RERANK_FLOOR:.0%}); grades used: {figures['distinct_grades']}")
        return Check("reranker", model, "too weak", figures, why, RECOMMENDATION)
    return Check("reranker", model, "fit", figures, f"separation {figures['separation']:.0%}")


def check_models(settings: Any, timeout: float = 120.0) -> list[dict[str, Any]]:
    """The verdicts for the configured Ollama judge and reranker (none configured: ``[]``)."""
    out: list[dict[str, Any]] = []
    if settings.judge_model:
        judge = OllamaJudge(model=settings.judge_model, timeout=timeout)
        out.append(judge_verdict(judge.model, judge_figures(judge.pick), float(settings.judge_deadline)).as_dict())
    if settings.rerank_model:
        reranker = OllamaReranker(model=settings.rerank_model, timeout=timeout)
        out.append(rerank_verdict(reranker.model, rerank_figures(reranker.score)).as_dict())
    return out


__all__ = ["check_models", "judge_figures", "judge_verdict", "rerank_figures", "rerank_verdict", "JUDGE_CASES", "RERANK_CASES"]
