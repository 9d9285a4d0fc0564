"""Is anything relevant at all? The query-level gate in front of injection.

Per-hit floors alone cannot make crib answer *nothing* to an unrelated prompt: BM25 matches any
shared word ("time", "file"), and the nearest vector neighbour of any prompt has some cosine. The
gate asks, for the prompt as a whole, whether the best evidence is strong enough:

- **vector**: a cosine similarity reaches the embedder's *gate* (a calibrated value stored
  by ``crib calibrate`` under ``gate:<embedder key>``, else the shipped default) on a hit that is
  *distinctive* — it shares a specific term with the prompt or stands out of the prompt's crowd
  (:mod:`crib_plugin.read.gate.specific`): a prompt about one project resembles every memory of it; or
- **full text**: the best of the top hits covers enough of the prompt — the IDF-weighted share of
  the prompt's terms it contains (``FTS_COVERAGE``) — so one common word cannot open the gate; or
- **facts**: a fact matched on two counts (the facts channel's own floor).

When the gate stays shut, nothing is injected and ``--explain`` says why. ``crib search`` shows
the raw ranking without the gate.

Measured (``crib eval``, ``crib eval-noanswer``): see the README's Benchmarks section.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field, replace
from typing import TYPE_CHECKING

from ...core.authorship import readable_entries
from ...core.cues import evidence_text
from ...core.limits import MAX_SCAN_CHARS
from ...core.records import Hit, Query, Retrieval
from ...text.cjk import entry_grams
from ...text.words import stem_list as _stems
from ..channels.base import channel_attr
from ..query import cjk_grams
from .levels import floor_below_gate, vector_gate
from .specific import PRIOR_DOCS, PRIOR_RATE, contains, distinctive, facts_bear, term_weights

__all__ = ["PRIOR_DOCS", "PRIOR_RATE", "GateDecision", "close_if_irrelevant", "decide", "term_weights"]

if TYPE_CHECKING:  # pragma: no cover
    from ...plugins.contracts import MemoryLike  # the protocol: no import of the facade above

FTS_COVERAGE = 0.6  # IDF-weighted share of the prompt's terms the best full-text hit must contain
CJK_COVERAGE = 0.4  # share of a CJK prompt's character bigrams (particles and endings rarely match)
TOP_HITS = 10  # how many full-text hits are inspected for coverage

STANDOUT = 0.08  # a vector top above the floor this far ahead of the runner-up stands out (small stores)
STANDOUT_STORE = 25  # ...on stores of at most this many entries: on the 40-entry coding memory it let 3 off-topic prompts through
STANDOUT_SHARE = 0.25  # ...and at least this share of the top cosine (a high top with one close neighbour does not stand out)
TYPE_WORDS = {"decision": "decision", "decisions": "decision", "correction": "correction", "corrections": "correction",
              "error": "error", "errors": "error", "bug": "error", "bugs": "error",
              "problem": "error", "problems": "error", "failure": "error", "failures": "error",
              "decide": "decision", "decided": "decision"}


def named_types(text: str) -> set[str]:
    """The entry types a prompt asks for by name ("which bugs did we fix…" → ``{"error"}``)."""
    return {TYPE_WORDS[w] for w in re.findall(r"[a-z]+", text.lower()) if w in TYPE_WORDS}


ASK_WORDS = frozenset({"happen", "happened", "change", "changed", "changes", "do", "done", "work", "worked",
                       "new", "learn", "learned", "learnt", "remember", "note", "notes", "memory", "memories"})
"""Words that ask *what* without saying about what ("what happened yesterday?", "what did we learn?")."""


def asks_by_time_alone(query: Query) -> bool:
    """Whether a prompt asks for memories by time (and perhaps an entry type) and nothing else:
    "what did we decide yesterday?", "what happened last week?". Its time window then names the
    answer by itself: every entry written in it (of the named type) is relevant, with no word or
    cosine evidence of its own, which such a prompt cannot give."""
    if query.time_range is None:
        return False
    said = set(re.findall(r"[^\W_]+", query.time_phrase.lower()))  # the time words, as prepare() matched them
    rest = [k for k in query.keywords if k.lower() not in said and k.lower() not in TYPE_WORDS and k.lower() not in ASK_WORDS]
    return not rest


WINDOW_SHARE = 0.25  # a time window opens the gate only when it holds at most this share of the store
WINDOW_MIN = 3  # ...or this many entries (a tiny store)
WINDOW_LIMIT = 50  # most entries a prompt that asks by time alone takes from its window (newest first)
WINDOW_FLOOR_DROP = 0.10  # an in-window entry may sit this far below the vector floor (the time names it)


@dataclass
class GateDecision:
    """Whether to inject, and the evidence behind the decision (shown by ``--explain``)."""

    open: bool
    vector_top: float | None
    vector_gate: float | None
    fts_coverage: float | None
    facts: bool
    reason: str
    time_only: bool = False  # opened only by the prompt's time window (only in-window entries may pass)
    window: tuple[int, ...] = ()  # entries in the prompt's time window that the window let through
    distinctive: dict[int, str] = field(default_factory=dict)  # vector hits ≥ gate that are distinctive, and why


def fts_coverage(memory: "MemoryLike", retrieval: Retrieval) -> dict[int, float]:
    """For each of the top full-text hits, the IDF-weighted share of the prompt's terms it contains.

    Empty when the full-text channel did not run or found nothing. CJK prompts are measured by
    the share of their character bigrams an entry contains. A word matches in any of its forms.
    """
    result = next((c for c in retrieval.channels if _gate_role(memory, c.channel) == "coverage" and c.ran), None)
    if result is None or not result.hits:
        return {}
    ids = [h.entry_id for h in result.hits[:TOP_HITS]]
    entries = memory.store.get_entries(ids)
    coverage = {entry_id: 0.0 for entry_id in entries}
    query_grams = set(cjk_grams(retrieval.query.text))  # the prompt's content grams, stop grams dropped
    if query_grams:
        # Rescaled so that CJK_COVERAGE of the bigrams counts as FTS_COVERAGE of the words.
        scale = FTS_COVERAGE / CJK_COVERAGE
        for entry in entries.values():
            share = len(query_grams & entry_grams(entry.content[:MAX_SCAN_CHARS])) / len(query_grams)
            coverage[entry.id] = min(1.0, share * scale)
    weighted = term_weights(memory, retrieval.query.text)
    mass = sum(w for _, w in weighted)
    if mass > 0:
        for entry in entries.values():
            present = set(_stems(evidence_text(entry, MAX_SCAN_CHARS)))  # bounded cost per entry
            got = sum(w for alts, w in weighted if contains(present, alts))
            coverage[entry.id] = max(coverage[entry.id], got / mass)
    return coverage


def _gate_role(memory: "MemoryLike", name: str) -> str:
    """How the gate reads channel ``name``: its ``gate`` attribute (see ``channels.base.GATE_ROLES``)."""
    return str(channel_attr(memory, name, "gate", "match"))


def _is_builtin(memory: "MemoryLike", name: str) -> bool:
    """Whether channel ``name`` is one of crib's own (only the reason text and ``facts`` flag differ)."""
    channel = memory.registry.channels.get(name)
    return type(channel).__module__.startswith("crib_plugin.") if channel is not None else False


def decide(memory: "MemoryLike", retrieval: Retrieval) -> GateDecision:
    """Open the gate when any channel's best evidence is strong enough (see module docstring)."""
    vector = next((c for c in retrieval.channels if _gate_role(memory, c.channel) == "similarity" and c.ran), None)
    top = max((h.score for h in vector.hits), default=None) if vector else None
    gate = None
    if vector is not None:
        try:
            gate = vector_gate(memory)
        except Exception:  # no embedder: the vector channel could not have run either
            gate = None
    per_entry = fts_coverage(memory, retrieval)
    coverage = max(per_entry.values(), default=None)
    floor = (gate - floor_below_gate(memory.embedder_key())) if gate is not None else None
    window = _in_window(memory, retrieval, floor, per_entry)
    extra = vector_extras(retrieval, floor, memory.store.count_entries())
    matched = [c for c in retrieval.channels if c.ran and _gate_role(memory, c.channel) == "match"
               and any(h.passed_floor for h in c.hits)]
    builtin = [h.entry_id for c in matched if _is_builtin(memory, c.channel) for h in c.hits if h.passed_floor]
    facts = bool(builtin) and facts_bear(memory, retrieval, builtin)
    others = [c for c in matched if not _is_builtin(memory, c.channel)]
    distinct = distinctive(memory, retrieval, gate) if top is not None and gate is not None and top >= gate else {}
    reasons = _vector_reasons(top, gate, distinct)
    if coverage is not None:
        reasons.append(f"fts coverage {coverage:.2f} {'≥' if coverage >= FTS_COVERAGE else '<'} {FTS_COVERAGE:.2f}")
    if facts:
        reasons.append("facts matched on two counts")
    elif builtin:
        reasons.append("facts matched on two counts, but no matched memory shares a specific word with the task")
    if others:
        reasons.append("plugin channel " + ", ".join(c.channel for c in others))
    if window:
        reasons.append(f"the prompt's time window holds entry {window[0]}")
    for entry_id, why in extra.items():
        reasons.append(f"entry {entry_id}: {why}")
    evidence_open = bool(
        distinct
        or (coverage is not None and coverage >= FTS_COVERAGE)
        or facts
        or others
        or extra
    )
    is_open = evidence_open or bool(window)
    reason = "; ".join(reasons) or "no channel found anything"
    return GateDecision(
        is_open, top, gate, coverage, facts, reason,
        time_only=is_open and not evidence_open, window=tuple(window), distinctive=distinct,
    )


def _vector_reasons(top: float | None, gate: float | None, distinct: dict[int, str]) -> list[str]:
    """The vector channel's part of the gate's reason (for ``--explain``)."""
    if top is None or gate is None:
        return []
    reasons = [f"vector top {top:.3f} {'≥' if top >= gate else '<'} gate {gate:.2f}"]
    if top >= gate:
        reasons.append(
            f"distinctive: entry {next(iter(distinct))} {next(iter(distinct.values()))}" if distinct
            else "no hit above the gate is distinctive (no specific shared term, none above the crowd)"
        )
    return reasons


def _in_window(memory: "MemoryLike | None", retrieval: Retrieval, floor: float | None, coverage: dict[int, float]) -> list[int]:
    """Hits written inside the prompt's time window ("last month") with a little evidence of their own.

    A prompt such as "what did we change in the infrastructure last month?" names what it wants by
    time more than by words; the window opens the gate for the entries written in it that some
    channel found (a cosine above the floor, or any full-text match).
    """
    span = retrieval.query.time_range
    if span is None or memory is None:
        return []
    start, end = span
    if not selective_window(memory, span):
        return []  # a window that holds most of the store ("this year") says nothing about what is wanted
    found = [
        hit.entry.id for hit in retrieval.hits
        if start <= hit.entry.created_at < end and ("fts" in hit.channels or coverage.get(hit.entry.id, 0.0) > 0)
    ]
    if asks_by_time_alone(retrieval.query):
        named = named_types(retrieval.query.text)
        found += [i for i in memory.store.entry_ids_between(start, end, sorted(named) or None, WINDOW_LIMIT)
                  if i not in found]
        return found
    vector = next((c for c in retrieval.channels if c.channel == "vector" and c.ran), None)
    if vector is not None and floor is not None:
        near = [h.entry_id for h in vector.hits if h.score >= floor - WINDOW_FLOOR_DROP and h.entry_id not in found]
        for entry in memory.store.get_entries(near).values():
            if start <= entry.created_at < end:
                found.append(entry.id)
    return found


def selective_window(memory: "MemoryLike", span: tuple[str, str]) -> bool:
    """Whether a time window names a part of the store: at most :data:`WINDOW_SHARE` of its entries
    (or :data:`WINDOW_MIN`) — "last month" does, "this year" on a year-old store does not."""
    total = memory.store.count_entries()
    return memory.store.count_entries_between(*span) <= max(WINDOW_MIN, WINDOW_SHARE * total)


def close_if_irrelevant(memory: "MemoryLike", retrieval: Retrieval) -> Retrieval:
    """``retrieval`` with the gate applied (its ``gate`` the decision): when shut, no hits and no facts."""
    decision = decide(memory, retrieval)
    if decision.open and decision.window:
        _add_window_hits(memory, retrieval, decision.window)
    if decision.open:
        return replace(retrieval, gate=decision)
    for hit in retrieval.hits:
        retrieval.dropped.append((hit.entry.id, f"relevance gate shut ({decision.reason})"))
    return replace(retrieval, hits=[], facts=[], gate=decision)



def _add_window_hits(memory: "MemoryLike", retrieval: Retrieval, ids: tuple[int, ...]) -> None:
    """Add the in-window entries the fusion left out (below a floor) after the fused hits."""
    have = {h.entry.id for h in retrieval.hits}
    missing = [i for i in ids if i not in have]
    if not missing:
        return
    vector = next((c for c in retrieval.channels if c.channel == "vector" and c.ran), None)
    scores = {h.entry_id: h for h in vector.hits} if vector else {}
    lowest = min((h.score for h in retrieval.hits), default=1.0)
    least = min((h.weight for h in retrieval.hits), default=1.0)
    entries = readable_entries(memory.store, missing, memory.settings.projects)
    for entry_id in missing:
        if entry_id in entries:
            channel_hit = scores.get(entry_id)
            retrieval.hits.append(Hit(entries[entry_id], lowest * 0.5, {"vector": channel_hit} if channel_hit else {}, least * 0.5))
            retrieval.notes.append((entry_id, "below the vector floor but written in the prompt's time window"))


def vector_extras(retrieval: Retrieval, floor: float | None, entries: int) -> dict[int, str]:
    """Vector hits above the floor (below the gate) that still count as evidence, with why.

    * **stands out** (stores of at most :data:`STANDOUT_STORE` entries): the vector channel's top
      hit is :data:`STANDOUT` ahead of the runner-up — on a tiny store an unrelated prompt's
      neighbours are all alike, a paraphrase's is not
      ("preventing the agent from remembering useless things" → the trivia memory);
    * **its type is named**: the prompt asks for a type ("every decision we made about …") and
      the hit is of that type.
    """
    vector = next((c for c in retrieval.channels if c.channel == "vector" and c.ran), None)
    if vector is None or floor is None or not vector.hits:
        return {}
    ranked = sorted(vector.hits, key=lambda h: -h.score)
    extras: dict[int, str] = {}
    top = ranked[0]
    runner_up = ranked[1].score if len(ranked) > 1 else floor
    if entries <= STANDOUT_STORE and top.score >= floor and top.score - runner_up >= max(STANDOUT, STANDOUT_SHARE * top.score):
        extras[top.entry_id] = f"vector top stands out ({top.score:.3f} vs {runner_up:.3f})"
    named = named_types(retrieval.query.text)
    if named:
        types = {h.entry.id: h.entry.type for h in retrieval.hits}
        for hit in ranked:
            if hit.score >= floor and types.get(hit.entry_id) in named:
                extras.setdefault(hit.entry_id, f"a {types[hit.entry_id]} above the vector floor, and the prompt asks for that type")
    return extras
