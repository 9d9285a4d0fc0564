"""The pipeline's stages after fusion (:mod:`crib_plugin.read.pipeline` runs them in order):
*gated* (the relevance gate, the per-entry cut, an opt-in judge) → *selected* (the rerank and the
budget) → *pointers*.

Each takes the previous stage's :class:`~crib_plugin.core.records.Retrieval` and returns a new one;
every hit left behind is recorded in ``dropped`` with the reason. ``memory`` is an open memory
(:class:`~crib_plugin.plugins.contracts.MemoryLike`: settings, store, models), never the facade.
"""

from __future__ import annotations

from dataclasses import replace
from typing import Any, Iterable, Sequence

from ..core.deadline import capped
from ..core.errors import CribError
from ..core.records import Fact, Hit, Retrieval, fresh
from ..text.excerpt import LONG_CHARS, excerpt
from ..text.redact import redact_for_render
from ..write.supersede import attach_successors
from .fusion import DEFAULT_MAX_FACTS, DEFAULT_MAX_ITEMS, fit_budget, item_cost
from .gate.evidence import cut_entries
from .gate.judging import JUDGE_DEPTH, apply_judge, configured_judge, judge_pool
from .gate.levels import FLOOR_BELOW_GATE, vector_floor
from .gate.relevance import close_if_irrelevant, term_weights
from .pointers import choose_pointers
from .rerank import rerank_candidates  # reorders only when the candidates do not all fit

__all__ = ["DEFAULT_MAX_FACTS", "DEFAULT_MAX_ITEMS", "gated_stage", "selected_stage", "pointers_stage", "cut_per_entry", "term_weights"]  # term_weights: the whole stage for recall.read_ahead


def gated_stage(memory: Any, fused: Retrieval, *, per_entry: bool = True) -> Retrieval:
    """Stage 4, *gated*: the relevance gate (nothing passes when the prompt has no relevant memory),
    then the per-entry cut (:mod:`crib_plugin.read.gate.evidence`: each hit on its own evidence), then
    an opt-in judge model's picks (:mod:`crib_plugin.read.gate.judging`), which replace the cut's.

    ``per_entry=False`` skips the cut and the judge: the evaluation uses it to measure what they change.
    """
    retrieval = fresh(fused)
    judge = configured_judge(memory, retrieval) if per_entry else None
    pool = judge_pool(memory, retrieval, getattr(judge, "depth", JUDGE_DEPTH)) if judge is not None else []
    retrieval = close_if_irrelevant(memory, retrieval)
    if retrieval.gate.open and per_entry:
        retrieval = cut_per_entry(memory, retrieval, retrieval.gate)
    if judge is not None:  # opt-in: the model's picks from the pool replace the offline block
        retrieval = apply_judge(memory, retrieval, pool, judge, capped(memory.settings.judge_deadline))
    return retrieval


def selected_stage(memory: Any, gated: Retrieval, *, budget: int, max_items: int = DEFAULT_MAX_ITEMS,
                   exclude: Iterable[int] = ()) -> Retrieval:
    """Stage 5, *selected*: what the session was not given yet, a long memory as its excerpt
    (:mod:`crib_plugin.text.excerpt`), reranked only when it does not all fit, cut to the character
    budget (best first); a superseded entry never without its successor. Every hit left behind is
    recorded in ``dropped`` with the reason."""
    retrieval = fresh(gated)
    excluded = set(exclude)
    candidates = [h for h in retrieval.hits if h.entry.id not in excluded]
    for hit in retrieval.hits:
        if hit.entry.id in excluded:
            retrieval.dropped.append((hit.entry.id, "already injected this session"))
    facts = retrieval.facts[:DEFAULT_MAX_FACTS]
    retrieval = replace(retrieval, hits=[excerpted(h, retrieval.query.keywords) for h in candidates])
    candidates = rerank_candidates(memory, retrieval, budget, max_items, overhead=300 + facts_cost(facts))
    kept, dropped = fit_budget(
        [h.entry.content for h in candidates], budget, overhead=300 + facts_cost(facts), max_items=max_items
    )
    for index in dropped:
        retrieval.dropped.append((candidates[index].entry.id, "budget"))
    retrieval = replace(retrieval, hits=[candidates[i] for i in kept], facts=facts)
    return attach_successors(memory, retrieval)  # a superseded entry is never shown without its successor


def excerpted(hit: Hit, words: Sequence[str]) -> Hit:
    """``hit``, or a copy whose entry holds the excerpt of its (redacted) content when the memory is long.

    Redacted first, so a secret that spans passages is caught whole before any of it is cut out."""
    if len(hit.entry.content) <= LONG_CHARS:
        return hit
    cut = excerpt(redact_for_render(hit.entry.content), words, hit.entry.id)
    return hit if cut is None else replace(hit, entry=replace(hit.entry, content=cut))


def pointers_stage(memory: Any, fused: Retrieval, selected: Retrieval, *, budget: int, skip: Iterable[int] = (),
                   per_entry: bool = True) -> Retrieval:
    """Stage 6, *pointers*: one-line pointers (:mod:`crib_plugin.read.pointers`) to the next
    candidates of the ``fused`` ranking (before the gate) that the block's entries leave room for;
    none beside a judge's picks (it decided the whole block) or without the per-entry cut."""
    retrieval = fresh(selected)
    if per_entry and not retrieval.judged:
        used = 300 + facts_cost(retrieval.facts) + sum(item_cost(h.entry.content) for h in retrieval.hits)
        retrieval = choose_pointers(memory, retrieval, fused.hits, skip=skip, budget=budget, used=used)
    return retrieval


def facts_cost(facts: Sequence[Fact]) -> int:
    """The characters the block's facts take (what the budget leaves for entries)."""
    return sum(len(f.subject) + len(f.predicate) + len(f.object) + 30 for f in facts)


def cut_per_entry(memory: Any, retrieval: Retrieval, decision: Any) -> Retrieval:
    """``retrieval`` with only the hits whose own evidence clears the cut (:mod:`crib_plugin.read.gate.evidence`),
    and the facts that bear on them."""
    gate = decision.vector_gate
    floor = None
    if gate is not None:
        try:
            floor = vector_floor(memory)
        except CribError:
            floor = gate - FLOOR_BELOW_GATE
    kept, evidence, cut = cut_entries(
        memory, retrieval, gate=gate, floor=floor, time_only=decision.time_only,
        distinct=getattr(decision, "distinctive", None),
    )
    for ev in evidence:
        if not ev.kept:
            retrieval.dropped.append((ev.entry_id, f"per-entry cut: {ev.reason}"))
    # A fact is shown when an entry shown in full stated it. A match of the facts channel alone (two
    # counts) opens the gate but does not show its facts: on conversational stores those were the
    # extractor's "project → evening → …" lines, 97 of RealMem's 659 tokens a block (dev) for no
    # evidence, and on the coding set 0.37 facts a prompt of which 0.18 bore on a relevant memory,
    # against 0.21 and 0.17 now (docs/benchmarks.md, "Facts from the entries shown").
    bearing = {h.entry.id for h in kept}
    for fact in retrieval.facts:
        if not bearing & set(fact.source_entry_ids):
            retrieval.notes.append((0, f"fact {fact.subject} → {fact.predicate} → {fact.object} dropped: no entry shown stated it"))
    return replace(retrieval, hits=kept, evidence=(evidence, cut), facts=[f for f in retrieval.facts if bearing & set(f.source_entry_ids)])
