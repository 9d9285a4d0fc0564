"""How a deep-recall result is shown: plain text for a person or an agent, JSON for a program.

A result nothing synthesised says so on its first line, in words, so neither a reader nor an agent
takes a ranked list for an answer.
"""

from __future__ import annotations

from typing import Any

from .loop import DeepResult, label
from .manifest import snippet

UNSYNTHESISED = "NOT SYNTHESISED"


def why_unsynthesised(result: DeepResult) -> str:
    if result.model is None:
        return "no model ran (set CRIB_DEEP_MODEL or CRIB_JUDGE_MODEL to an Ollama model)"
    return result.stopped or "the model gave no answer"


def to_json(result: DeepResult) -> dict[str, Any]:
    """The result as JSON: answer and citations (or why there is none), the evidence, what was spent."""
    manifest = result.manifest
    data: dict[str, Any] = {
        "question": result.question,
        "synthesised": result.synthesised,
        "answer": result.answer,
        "cites": result.cites,
        "complete": result.complete,
        "model": result.model,
        "stopped": result.stopped,
        "waves": result.waves,
        "spent": {"calls": result.calls, "tokens": result.tokens, "seconds": result.seconds},
        "terms": [t.text for t in manifest.terms] if manifest else [],
        "types": list(manifest.types) if manifest else [],
        "gated_out": len(manifest.gated_out) if manifest else 0,
        "findings": [{"id": f.key, "relevant": f.relevant, "finding": f.text} for f in result.findings],
        "evidence": [c.to_json() for c in result.evidence()],
    }
    if not result.synthesised:
        data["note"] = f"{UNSYNTHESISED}: {why_unsynthesised(result)}; the evidence is ranked and grep-gated, not read by a model"
    return data


def to_text(result: DeepResult) -> str:
    """The result as text (``crib recall --deep``)."""
    lines: list[str] = []
    spent = f"{result.calls} model calls, {result.tokens} tokens, {result.seconds:g} s"
    if result.synthesised:
        lines.append(f"Answer ({result.model}, {result.waves} wave{'s' * (result.waves != 1)}, {spent}"
                     f"{'' if result.complete else '; the model says it may be incomplete'}):")
        lines.append(result.answer or "")
        lines.append("Rests on: " + (", ".join(result.cites) or "no memory it read (treat with care)"))
    else:
        lines.append(f"{UNSYNTHESISED}: {why_unsynthesised(result)}. Below is the ranked evidence that passed the grep "
                     "gate, with snippets; nothing read or summarised it. `crib show ID` prints one memory in full.")
    if result.stopped and result.synthesised:
        lines.append(f"Stopped early: {result.stopped}.")
    manifest = result.manifest
    if manifest is not None:
        types = f"; preferring type {', '.join(manifest.types)}" if manifest.types else ""
        lines.append(f"Terms: {', '.join(t.text for t in manifest.terms) or '—'}{types}; "
                     f"{len(manifest.candidates)} candidates passed the gate, {len(manifest.gated_out)} gated out.")
    for n, cand in enumerate(result.evidence(), start=1):
        mark = f" superseded by {cand.superseded_by}" if cand.superseded_by is not None else ""
        confirms = ", ".join(t.text for t in cand.confirmed)
        lines.append(f"{n:>2}. [{label(cand)}] {cand.created_at[:10]} {cand.type}{mark} ({confirms}): {snippet(cand.content)}")
    return "\n".join(lines)


__all__ = ["to_json", "to_text", "UNSYNTHESISED"]
