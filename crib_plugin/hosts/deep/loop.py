"""The deep-recall loop: expand, gate, read in graduated waves, synthesise — within budgets.

Seed 001's recursive-language-model pattern over crib's store. The orchestrator (this loop, or
Claude with the MCP tools and the ``deep-recall`` subagent) works from the manifest
(:mod:`crib_plugin.hosts.deep.manifest`); readers open one gated memory each and return a bounded
finding; after each wave a synthesis answers from the findings, citing entry ids, and says whether
the question is covered. Another wave is sent only while it is not — the best ``CRIB_DEEP_WAVE``
(5) first — and the terms the synthesis names as missing re-rank what is left (through the same
grep gate: a memory that confirms none of the terms is never read).

Three budgets bound a run, all in :class:`~crib_plugin.core.config.Settings`: model calls
(``CRIB_DEEP_CALLS``), tokens (``CRIB_DEEP_TOKENS``: a call is not made when its estimate would
cross it) and wall time (``CRIB_DEEP_SECONDS``: each call is abandoned at the deadline). Whichever
stops the loop is named in :attr:`DeepResult.stopped`, and what was found so far is kept.

With no model (none configured, or it failed) the result is the ranked, gated evidence with its
snippets, and :attr:`DeepResult.synthesised` is false: nothing read or summarised it.
"""

from __future__ import annotations

import functools
import re
import time
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Callable, Protocol, Sequence, TypeVar

from ...core.config import get_settings
from ...core.deadline import call_within
from ...core.errors import CribError
from .expand import expansion_terms, merge_terms
from .manifest import Candidate, Manifest, build_manifest, gate
from .ollama import ENTRY_CHARS, Finding, Synthesis

T = TypeVar("T")
EVIDENCE = 25
"""Gated candidates a result without a synthesis lists (the evidence recall@25 is measured on)."""


class DeepModel(Protocol):
    """What the loop needs of a model (:class:`~crib_plugin.hosts.deep.ollama.OllamaDeep`, or a test's)."""

    model: str

    def expand(self, question: str) -> tuple[list[str], int]: ...  # pragma: no cover
    def read(self, question: str, key: str, date: str, kind: str, text: str) -> tuple[Finding, int]: ...  # pragma: no cover
    def synthesise(self, question: str, findings: Sequence[Finding]) -> tuple[Synthesis, int]: ...  # pragma: no cover


@dataclass
class Budget:
    """Calls, tokens and seconds one deep recall may spend; what it has spent so far."""

    calls: int
    tokens: int
    seconds: float
    used_calls: int = 0
    used_tokens: int = 0
    started: float = field(default_factory=time.monotonic)

    def left(self) -> float:
        return self.seconds - (time.monotonic() - self.started)

    def refuse(self, estimate: int) -> str | None:
        """Why the next call (expected to cost ``estimate`` tokens) may not be made; None when it may."""
        if self.used_calls >= self.calls:
            return f"call budget reached: {self.used_calls} of {self.calls} model calls made (CRIB_DEEP_CALLS)"
        if self.used_tokens + estimate > self.tokens:
            return (f"token budget reached: {self.used_tokens} of {self.tokens} tokens spent and the next call needs "
                    f"about {estimate} (CRIB_DEEP_TOKENS)")
        if self.left() <= 0:
            return f"time budget reached: {self.seconds:g} s (CRIB_DEEP_SECONDS)"
        return None


def label(cand: Candidate) -> str:
    """The id a model and a citation use: ``12`` in the project store, ``g12`` in the global one."""
    return f"g{cand.id}" if cand.scope == "global" else str(cand.id)


@dataclass
class DeepResult:
    """What one deep recall found, read and concluded, and what it spent."""

    question: str
    manifest: Manifest | None = None
    model: str | None = None
    findings: list[Finding] = field(default_factory=list)
    read: list[Candidate] = field(default_factory=list)
    waves: int = 0
    answer: str | None = None
    cites: list[str] = field(default_factory=list)
    complete: bool = False
    stopped: str | None = None
    calls: int = 0
    tokens: int = 0
    seconds: float = 0.0

    @property
    def synthesised(self) -> bool:
        return self.answer is not None

    def evidence(self, limit: int = EVIDENCE) -> list[Candidate]:
        """The ranked, gated candidates (read ones first, in reading order, when a model read any)."""
        if self.manifest is None:
            return []
        read = {c.key for c in self.read}
        return (self.read + [c for c in self.manifest.candidates if c.key not in read])[:limit]


def _ask(budget: Budget, result: DeepResult, estimate: int, call: Callable[[], tuple[T, int]]) -> T | None:
    """One model call within the budgets; None (and ``result.stopped`` set) when it may not or did not answer."""
    refusal = budget.refuse(estimate)
    if refusal is not None:
        result.stopped = refusal
        return None
    budget.used_calls += 1
    try:
        value, spent = call_within(budget.left(), call, name="crib-deep", what="model answer")
    except TimeoutError:
        result.stopped = f"time budget reached: {budget.seconds:g} s (CRIB_DEEP_SECONDS)"
        return None
    except CribError as exc:
        result.stopped = f"model failed: {exc}"
        return None
    budget.used_tokens += spent
    return value


def _estimate(*texts: str, reply: int) -> int:
    return (sum(len(t) for t in texts) + 600) // 4 + reply


def _wave(model: DeepModel, question: str, wave: Sequence[Candidate], budget: Budget, result: DeepResult) -> bool:
    """Read one wave; False when a budget or the model stopped the loop."""
    for cand in wave:
        text = cand.content[:ENTRY_CHARS]
        finding = _ask(budget, result, _estimate(question, text, reply=128),
                       functools.partial(model.read, question, label(cand), cand.created_at[:10], cand.type, text))
        if finding is None:
            return False
        result.findings.append(finding)
        result.read.append(cand)
    return True


_CITE = re.compile(r"\b(g?\d+)\b", re.IGNORECASE)
_CITED_IN_TEXT = re.compile(r"\[\s*((?:g?\d+)(?:\s*,\s*g?\d+)*)\s*\]", re.IGNORECASE)


def normalise_cites(cites: Sequence[Any], answer: str, known: set[str]) -> list[str]:
    """The ids ``cites`` and the answer's ``[30]``/``[12, g4]`` markers name, as labels of memories
    read (``known``), in order, without repeats. A model writes a citation the way the findings
    show it (``"[30]"``), or as ``"#30"``, ``"memory 30"``, ``30``; an id never read is dropped (not evidence)."""
    found: list[str] = []
    for cite in cites:
        found += [m.lower() for m in _CITE.findall(str(cite))]
    for group in _CITED_IN_TEXT.findall(answer or ""):
        found += [m.strip().lower() for m in group.split(",")]
    return [c for c in dict.fromkeys(found) if c in known]


def _synthesise(model: DeepModel, question: str, budget: Budget, result: DeepResult) -> Synthesis | None:
    relevant = [f for f in result.findings if f.relevant]
    synthesis = _ask(budget, result, _estimate(question, *(f.text for f in relevant), reply=384),
                     lambda: model.synthesise(question, relevant))
    if synthesis is not None:
        known = {label(c) for c in result.read}
        result.answer, result.complete = synthesis.answer, synthesis.complete
        result.cites = normalise_cites(synthesis.cites, synthesis.answer, known)  # an id never read is not evidence
    return synthesis


def dispatch(model: DeepModel, manifest: Manifest, budget: Budget, result: DeepResult, size: int) -> None:
    """Graduated dispatch: waves of ``size`` gated candidates while the synthesis says gaps remain."""
    pool = manifest.candidates + manifest.gated_out
    queue = list(manifest.candidates)
    terms = list(manifest.terms)
    while queue:
        wave, queue = queue[:size], queue[size:]
        result.waves += 1
        if not _wave(model, manifest.question, wave, budget, result):
            return
        synthesis = _synthesise(model, manifest.question, budget, result)
        if synthesis is None or synthesis.complete:
            return
        if synthesis.missing:  # re-rank what is left by the gaps, through the same gate
            terms = merge_terms(terms, expansion_terms(synthesis.missing, "gap"))
            read = {c.key for c in result.read}
            queue = gate(manifest.question, terms, [c for c in pool if c.key not in read], manifest.types).candidates


def deep_recall(question: str, *, model: DeepModel | None = None, settings: Any = None, scope: str = "all",
                cwd: Path | None = None) -> DeepResult:
    """Run deep recall for ``question`` (see the module docstring); ``model=None``: evidence only."""
    settings = settings or get_settings()
    budget = Budget(settings.deep_calls, settings.deep_tokens, settings.deep_seconds)
    result = DeepResult(question, model=model.model if model is not None else None)
    extra = []
    if model is not None:
        terms = _ask(budget, result, _estimate(question, reply=96), lambda: model.expand(question))
        extra = expansion_terms(terms or [], "model")
    result.manifest = build_manifest(question, scope=scope, cwd=cwd, extra=extra)
    if model is not None and result.stopped is None:
        dispatch(model, result.manifest, budget, result, settings.deep_wave)
    result.calls, result.tokens = budget.used_calls, budget.used_tokens
    result.seconds = round(time.monotonic() - budget.started, 3)
    return result


__all__ = ["Budget", "DeepModel", "DeepResult", "deep_recall", "dispatch", "label", "EVIDENCE"]
