"""The judge stage: with a judge configured (``CRIB_JUDGE_MODEL``, or a plugin's by ``CRIB_JUDGE``),
a model picks the block from the best few candidates (opt-in; "Ollama when it answers").

The offline gate and per-entry cut (:mod:`crib_plugin.read.gate.relevance`, :mod:`crib_plugin.read.gate.evidence`)
decide from words and cosines. What they cannot see — that "install httpx" is about adding a
Python package, that "review this PR" wants the user's review conventions — is what leaves hit
rate on a coding agent's memory short of its target. A judge model can see it. It is shown the
prompt, the offline block and up to :data:`JUDGE_DEPTH` more candidates taken *before* the gate
(the fused hits and the vector channel's best, even below its floor, alternately), so it can
answer prompts the gate shut on; its picks replace the offline block, and ``[]`` means nothing is
injected.

It fails open: no model, a model Ollama does not serve, an error, a malformed reply or no answer
within ``CRIB_JUDGE_DEADLINE`` seconds — less inside a Claude Code hook when its own deadline
comes sooner (:func:`crib_plugin.core.deadline.capped`) — keeps the offline block and adds a note that
``--explain`` shows. The judge only reads the candidates; the block is still made of the stored
entries, unchanged.
"""

from __future__ import annotations

from dataclasses import replace
from itertools import zip_longest
from typing import TYPE_CHECKING, Any

from ...core.cues import cue_of
from ...core.deadline import call_within
from ...core.records import Hit, Retrieval
from ...models.base import Candidate

if TYPE_CHECKING:  # pragma: no cover
    from ...models.base import Judge
    from ...plugins.contracts import MemoryLike

__all__ = ["JUDGE_DEPTH", "judge_pool", "apply_judge", "configured_judge", "judge_choice"]

JUDGE_DEPTH = 8
"""Candidates from before the gate that the judge is shown besides the offline block. A judge can
only pick what it is shown, and each irrelevant candidate is a chance of a false pick: on the
coding set (``python bench/judge_ceiling.py``), a perfect judge reaches hit 87.0 / 92.0 / 93.8 %
with 4 / 8 / 12 of them, and one that misses 10 % of relevant candidates and picks 1 % of the
others reaches hit 80.9 / 85.8 / 87.7, precision 98.9 / 97.6 / 93.9 and silence 96.9 / 96.9 / 93.8.
Shown 16 candidates from before the gate *instead of* the offline block, that judge gets hit
85.2, precision 90.3 and silence 87.5: the offline block holds relevant entries a short pool does
not (in the prompt's time window, successors), and a long pool invites false picks."""


def judge_pool(memory: "MemoryLike", retrieval: Retrieval, depth: int = JUDGE_DEPTH) -> list[Hit]:
    """The candidates a judge is shown, before the gate: the fused hits and the vector channel's
    best hits (below its floor too), alternately, without repeats, at most ``depth``."""
    fused = list(retrieval.hits)
    vector = next((c for c in retrieval.channels if c.channel == "vector" and c.ran), None)
    near = list(vector.hits) if vector else []
    entries = memory.store.get_entries([h.entry_id for h in near[:depth]])
    by_vector = [Hit(entries[h.entry_id], 0.0, {"vector": h}) for h in near[:depth] if h.entry_id in entries]
    pool: dict[int, Hit] = {}
    for pair in zip_longest(fused[:depth], by_vector):
        for hit in pair:
            if hit is not None and len(pool) < depth:
                pool.setdefault(hit.entry.id, hit)
    return list(pool.values())


def judge_choice(settings: Any) -> str | None:
    """The judge ``CRIB_JUDGE`` names: ``auto`` is the Ollama judge when ``CRIB_JUDGE_MODEL`` is
    set and none otherwise; ``off`` is none."""
    wanted = str(settings.judge)
    if wanted in ("off", "none", "no", "0", "false"):
        return None
    if wanted == "auto":
        return "ollama" if settings.judge_model else None
    return wanted


def configured_judge(memory: "MemoryLike", retrieval: Retrieval) -> "Judge | None":
    """The judge to ask for this retrieval, or ``None``: none configured (nothing is asked), or
    the named one cannot be made (a note says so and the offline block stands)."""
    name = judge_choice(memory.settings)
    if name is None:
        return None
    judge, why = memory.registry.try_make("judges", name)
    if judge is None:
        retrieval.notes.append((0, f"judge {name!r} unavailable ({why}); the offline block kept"))
    return judge


def apply_judge(memory: "MemoryLike", retrieval: Retrieval, pool: list[Hit], judge: "Judge", deadline: float) -> Retrieval:
    """``retrieval`` with its hits (the offline block) replaced by the judge's picks from the block and
    ``pool`` (the candidates from before the gate), in that order, only the facts one of them stated
    kept, and ``judged`` set. Unchanged but for a note (the offline block kept, ``judged`` not set)
    when the judge fails or misses ``deadline``."""
    name = getattr(judge, "model", None) or type(judge).__name__
    block = {h.entry.id for h in retrieval.hits}
    pool = [*retrieval.hits, *(h for h in pool if h.entry.id not in block)]
    if not pool:
        return replace(retrieval, judged=True)
    if deadline <= 0:
        retrieval.notes.append((0, f"judge {name} not asked: no time left in the hook's budget; the offline block kept"))
        return retrieval
    candidates = [Candidate(h.entry.type, h.entry.content, cue_of(h.entry.metadata) or "", h.entry.created_at) for h in pool]
    try:
        picks = call_within(deadline, lambda: list(judge.pick(retrieval.query.text, candidates)), name="crib-judge")
    except Exception as exc:
        retrieval.notes.append((0, f"judge {name} failed open, the offline block kept: {type(exc).__name__}: {exc}"))
        return retrieval
    chosen = [pool[i] for i in sorted(set(picks)) if 0 <= i < len(pool)]
    kept = {h.entry.id for h in chosen}
    for hit in retrieval.hits:
        if hit.entry.id not in kept:
            retrieval.dropped.append((hit.entry.id, f"judge {name} did not pick it"))
    lowest = min((h.score for h in retrieval.hits), default=1.0)
    # a vector hit from below the floor has no fused score: it gets one on its own copy (the fused stage's hit is shared)
    chosen = [h if h.entry.id in block or h.score else replace(h, score=lowest * 0.5) for h in chosen]
    for hit in chosen:
        retrieval.notes.append((hit.entry.id, f"picked by judge {name}" + ("" if hit.entry.id in block else " (the offline cut had left it out)")))
    retrieval.notes.append((0, f"judge {name} picked {len(chosen)} of {len(pool)} candidates"))
    return replace(retrieval, hits=chosen, facts=[f for f in retrieval.facts if kept & set(f.source_entry_ids)], judged=True)
