"""The select stage behind ``Memory.select``: the relevance gate, the per-entry cut, the rerank and the budget.

A retrieval (fused hits, best first) comes in; what fits the character budget goes out, and every
hit left behind is recorded in ``retrieval.dropped`` with the reason. ``memory`` is the
:class:`~crib_plugin.memory.Memory` facade (settings, store, models); it is not imported here, so
the facade can import this module.
"""

from __future__ import annotations

from typing import Any, Iterable

from ..core.deadline import capped
from ..core.errors import CribError
from ..core.records import Retrieval
from ..write.supersede import attach_successors
from .fusion import DEFAULT_MAX_FACTS, DEFAULT_MAX_ITEMS, fit_budget, item_cost
from .gate.evidence import judge
from .gate.judging import JUDGE_DEPTH, apply_judge, configured_judge, judge_pool
from .gate.relevance import FLOOR_BELOW_GATE, close_if_irrelevant, term_weights
from .pointers import choose_pointers
from .rerank import rerank_candidates  # reorders only when the candidates do not all fit

__all__ = ["DEFAULT_MAX_FACTS", "DEFAULT_MAX_ITEMS", "select", "cut_per_entry", "term_weights"]  # term_weights: the whole stage for Memory.while_embedding


def select(
    memory: Any,
    retrieval: Retrieval,
    *,
    budget: int | None = None,
    max_items: int = DEFAULT_MAX_ITEMS,
    exclude: Iterable[int] = (),
    per_entry: bool = True,
    pointed: Iterable[int] = (),
) -> Retrieval:
    """Cut a retrieval to what fits the character budget (best first); record what was dropped.

    ``per_entry=False`` skips the per-entry cut (:mod:`crib_plugin.read.gate.evidence`) and the pointers
    below it: the evaluation uses it to measure what the cut changes. ``pointed``: entries this
    session was already given as pointers (:mod:`crib_plugin.read.pointers`), not pointed to again.
    """
    budget = budget or memory.settings.budget
    judge = configured_judge(memory, retrieval) if per_entry else None
    pool = judge_pool(memory, retrieval, getattr(judge, "depth", JUDGE_DEPTH)) if judge is not None else []
    fused = list(retrieval.hits)  # before the gate: where the pointers below the entries come from
    judged = False
    decision = close_if_irrelevant(memory, retrieval)
    if decision.open and per_entry:
        cut_per_entry(memory, retrieval, decision)
    if judge is not None:  # opt-in: the model's picks from the pool replace the offline block
        judged = apply_judge(memory, retrieval, pool, judge, capped(memory.settings.judge_deadline))
    excluded = set(exclude)
    candidates = [h for h in retrieval.hits if h.entry.id not in excluded]
    for hit in retrieval.hits:
        if hit.entry.id in excluded:
            retrieval.dropped.append((hit.entry.id, "already injected this session"))
    facts = retrieval.facts[:DEFAULT_MAX_FACTS]
    fact_cost = sum(len(f.subject) + len(f.predicate) + len(f.object) + 30 for f in facts)
    retrieval.hits = candidates
    candidates = rerank_candidates(memory, retrieval, budget, max_items, overhead=300 + fact_cost)
    kept, dropped = fit_budget(
        [h.entry.content for h in candidates], budget, overhead=300 + fact_cost, max_items=max_items
    )
    for index in dropped:
        retrieval.dropped.append((candidates[index].entry.id, "budget"))
    retrieval.hits = [candidates[i] for i in kept]
    retrieval.facts = facts
    attach_successors(memory, retrieval)  # a superseded entry is never shown without its successor
    if per_entry and not judged:  # a judge that answered decided the whole block: no maybes beside its picks
        used = 300 + fact_cost + sum(item_cost(h.entry.content) for h in retrieval.hits)
        choose_pointers(memory, retrieval, fused, skip=excluded | set(pointed), budget=budget, used=used)
    return retrieval


def cut_per_entry(memory: Any, retrieval: Retrieval, decision: Any) -> None:
    """Keep only the hits whose own evidence clears the cut (:mod:`crib_plugin.read.gate.evidence`)."""
    gate = decision.vector_gate
    floor = None
    if gate is not None:
        try:
            floor = memory.vector_floor()
        except CribError:
            floor = gate - FLOOR_BELOW_GATE
    kept, evidence, cut = judge(
        memory, retrieval, gate=gate, floor=floor, time_only=decision.time_only,
        distinct=getattr(decision, "distinctive", None),
    )
    for ev in evidence:
        if not ev.kept:
            retrieval.dropped.append((ev.entry_id, f"per-entry cut: {ev.reason}"))
    retrieval.hits = kept
    retrieval.evidence = (evidence, cut)
    # A fact bears on the prompt when an entry that stated it was kept, or the facts channel
    # matched it on two counts (its source passed that channel's floor); the others are noise.
    bearing = {h.entry.id for h in kept} | {
        h.entry_id for c in retrieval.channels if c.channel == "facts" and c.ran for h in c.hits if h.passed_floor
    }
    for fact in retrieval.facts:
        if not bearing & set(fact.source_entry_ids):
            retrieval.notes.append((0, f"fact {fact.subject} → {fact.predicate} → {fact.object} dropped: no kept or strongly matched source"))
    retrieval.facts = [f for f in retrieval.facts if bearing & set(f.source_entry_ids)]
