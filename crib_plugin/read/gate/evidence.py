"""Per-entry relevance: each candidate carries its own evidence and is dropped below the cut.

The relevance gate (:mod:`crib_plugin.read.gate.relevance`) decides whether a prompt deserves *anything*.
Once it opened, the budget used to fill up to its 10-entry cap — on a coding-agent memory about
one injected entry in five was relevant. Now every candidate must earn its place on its own:

* **relative** — its fused score (after the time and type adjustments) over the best hit's;
* **coverage** — the IDF-weighted share of the prompt's terms it contains (as the gate measures
  the best full-text hit), so a memory that shares one common word with the prompt is not kept;
* **cosine** — its vector similarity to the prompt, against the embedder's gate and floor;
* **channels** — how many channels found it (agreement of independent evidence);
* **window** — for a prompt that names a time ("last month"), whether it was written in it.

An entry is kept when it is the best hit, or when its own evidence would have opened the gate
(cosine ≥ gate, coverage ≥ the gate's coverage, or cosine ≥ floor with coverage ≥ the agreement
share) *and* its relative score reaches :data:`RELATIVE_CUT` — or, for a time
prompt, when it lies in the named window with some evidence of its own. So the block holds as many
entries as are relevant, often one. ``--explain`` prints each candidate's evidence and the cut.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING

from ...core.cues import evidence_text
from ...core.limits import MAX_SCAN_CHARS
from ...text.words import stem_list as _stems
from ..temporal import TimeExpression
from .prompt_kind import prompt_kind
from .relevance import FTS_COVERAGE, WINDOW_FLOOR_DROP, asks_by_time_alone, named_types, selective_window, vector_extras
from .specific import contains, distinctive, term_weights

__all__ = ["Cut", "Evidence", "cut_entries", "prompt_kind"]

if TYPE_CHECKING:  # pragma: no cover
    from ...core.records import Hit, Retrieval
    from ...plugins.contracts import MemoryLike  # the protocol: no import of the facade above

RELATIVE_CUT = 0.45
"""A candidate whose fused score is below this share of the best hit's is dropped."""
WINDOW_COVERAGE = 0.2
"""A time prompt's in-window entry needs at least this coverage (or a cosine above the floor)."""
AGREE_COVERAGE = 0.5
"""A candidate above the vector floor that full text also matches this well has evidence of its own
(two weak, independent signals on one memory). Once the gate's rule too; as a gate rule it opened
no answerable prompt of the suite that another rule did not (docs/relevance.md)."""


@dataclass
class Evidence:
    """Why one candidate was kept or dropped (shown by ``--explain``)."""

    entry_id: int
    relative: float
    coverage: float
    cosine: float | None
    channels: int
    in_window: bool
    distinct: str = ""  # why its cosine is distinctive (a specific shared term, above the crowd), or ""
    kept: bool = False
    reason: str = ""

    def line(self) -> str:
        cos = f"{self.cosine:.3f}" if self.cosine is not None else "-"
        window = ", in-window" if self.in_window else ""
        if self.distinct:
            cos += f" ({self.distinct})"
        return (
            f"relative {self.relative:.2f}, coverage {self.coverage:.2f}, cosine {cos}, channels {self.channels}"
            f"{window} → {'kept' if self.kept else 'dropped'}: {self.reason}"
        )


@dataclass
class Cut:
    """The thresholds applied to one retrieval (shown by ``--explain``)."""

    kind: str
    relative: float
    gate: float | None
    floor: float | None
    coverage: float
    agree: float
    by_time_alone: bool = False  # the prompt asks by time alone: written in its window is evidence enough

    def line(self) -> str:
        gate = f"{self.gate:.2f}" if self.gate is not None else "-"
        floor = f"{self.floor:.2f}" if self.floor is not None else "-"
        return (
            f"per-entry cut ({self.kind} prompt): relative ≥ {self.relative:.2f} and own evidence "
            f"(distinctive cosine ≥ gate {gate}, or coverage ≥ {self.coverage:.2f}, or cosine ≥ floor {floor} with coverage ≥ {self.agree:.2f})"
        )


def coverages(memory: MemoryLike, text: str, contents: Sequence[str]) -> list[float]:
    """IDF-weighted share of the prompt's terms each content contains (0 when the prompt has none)."""
    weighted = term_weights(memory, text)
    mass = sum(w for _, w in weighted)
    if mass <= 0:
        return [0.0] * len(contents)
    out = []
    for content in contents:
        present = set(_stems(content))
        got = sum(w for alts, w in weighted if contains(present, alts))
        out.append(got / mass)
    return out


def _cosines(retrieval: Retrieval) -> dict[int, float]:
    """Every vector similarity the vector channel computed, floor-passing or not."""
    vector = next((c for c in retrieval.channels if c.channel == "vector" and c.ran), None)
    return {h.entry_id: h.score for h in vector.hits} if vector else {}


def cut_entries(
    memory: MemoryLike,
    retrieval: Retrieval,
    *,
    gate: float | None,
    floor: float | None,
    time_only: bool = False,
    distinct: dict[int, str] | None = None,
) -> tuple[list[Hit], list[Evidence], Cut]:
    """Split ``retrieval.hits`` (gate open, best first) into kept hits; evidence for each candidate.

    ``distinct``: the vector hits whose cosine is distinctive (the gate's
    :func:`crib_plugin.read.gate.specific.distinctive`); computed here when not given.
    """
    hits = list(retrieval.hits)
    kind = prompt_kind(retrieval.query.text)
    cut = Cut(kind, RELATIVE_CUT, gate, floor, FTS_COVERAGE, AGREE_COVERAGE, asks_by_time_alone(retrieval.query))
    if not hits:
        return [], [], cut
    window = None
    if retrieval.query.time_range is not None:
        start, end = retrieval.query.time_range
        window = TimeExpression(start, end, "")
    # the first MAX_SCAN_CHARS of each, as the gate reads them: a bounded cost per entry
    cover = coverages(memory, retrieval.query.text, [evidence_text(h.entry, MAX_SCAN_CHARS) for h in hits])
    cosines = _cosines(retrieval)
    extras = vector_extras(retrieval, floor, memory.store.count_entries())
    distinct = distinctive(memory, retrieval, gate) if distinct is None else distinct
    evidence: list[Evidence] = []
    own: list[list[str]] = []
    for index, hit in enumerate(hits):
        ev = Evidence(
            entry_id=hit.entry.id,
            relative=0.0,
            coverage=cover[index],
            cosine=cosines.get(hit.entry.id),
            channels=len(hit.channels),
            in_window=bool(window is not None and window.contains(hit.entry.created_at)),
            distinct=distinct.get(hit.entry.id, ""),
        )
        evidence.append(ev)
        own.append(_own_evidence(ev, cut, windowed=window is not None) + ([extras[hit.entry.id]] if hit.entry.id in extras else []))
    # The reference is the best hit that has evidence of its own: a full-text hit on one common
    # word may top the fused list while the vector found the memory that opened the gate.
    evidenced = [i for i, why in enumerate(own) if why]
    if not evidenced and not time_only:
        # the gate opened on facts or a plugin channel: the hit with the most evidence stands alone
        evidenced = [max(range(len(hits)), key=lambda i: hits[i].weight)]
        own[evidenced[0]] = ["best hit (the gate opened on other evidence)"]
    kept = _keep(hits, evidence, own, evidenced, cut)
    if window is not None and selective_window(memory, window.range):
        kept = _within_window(kept, evidence)
        kept = _of_named_types(kept, evidence, named_types(retrieval.query.text))
    return kept, evidence, cut


def _of_named_types(kept: list[Hit], evidence: list[Evidence], named: set[str]) -> list[Hit]:
    """A time prompt that names a type ("which bugs did we fix in June?") keeps entries of that type
    once one of them is kept; the others written in the window are dropped."""
    if not named or not any(h.entry.type in named for h in kept):
        return kept
    dropped = {h.entry.id for h in kept if h.entry.type not in named}
    for ev in evidence:
        if ev.entry_id in dropped:
            ev.kept, ev.reason = False, "not of the type the prompt asks for (" + ", ".join(sorted(named)) + ")"
    return [h for h in kept if h.entry.id not in dropped]


def _within_window(kept: list[Hit], evidence: list[Evidence]) -> list[Hit]:
    """A prompt that names a selective window ("which bugs did we fix in June?") is answered from
    it: once an entry written in it is kept, the kept entries written outside it are dropped."""
    inside = {ev.entry_id for ev in evidence if ev.in_window}
    if not inside & {h.entry.id for h in kept}:
        return kept
    for ev in evidence:
        if ev.kept and not ev.in_window:
            ev.kept, ev.reason = False, "written outside the prompt's time window (entries inside it were kept)"
    return [h for h in kept if h.entry.id in inside]


def _keep(hits: list[Hit], evidence: list[Evidence], own: list[list[str]], evidenced: list[int], cut: Cut) -> list[Hit]:
    """Set each hit's relative score and verdict; return the kept hits (best first).

    The share is of the fusion's *evidence* (:attr:`~crib_plugin.core.records.Hit.weight`), not of
    the score that ordered the hits: the reference is the evidenced hit with the most of it."""
    reference = max(evidenced, key=lambda i: hits[i].weight, default=None)
    best = (hits[reference].weight if reference is not None else 0.0) or 1.0
    kept: list[Hit] = []
    for index, (hit, ev) in enumerate(zip(hits, evidence)):
        ev.relative = hit.weight / best
        if not own[index]:
            ev.reason = "no evidence of its own (no distinctive cosine ≥ gate, coverage below cut, no agreement)"
        elif index == reference:
            ev.kept, ev.reason = True, "best evidenced hit: " + ", ".join(own[index])
        elif ev.relative < cut.relative and not ev.in_window:
            ev.reason = f"relative {ev.relative:.2f} < {cut.relative:.2f}"
        else:
            ev.kept, ev.reason = True, ", ".join(own[index])
        if ev.kept:
            kept.append(hit)
    return kept


def _own_evidence(ev: Evidence, cut: Cut, *, windowed: bool) -> list[str]:
    """What, on this entry alone, would have opened the gate (empty: nothing)."""
    strong_vector = ev.cosine is not None and cut.gate is not None and ev.cosine >= cut.gate and bool(ev.distinct)
    above_floor = ev.cosine is not None and cut.floor is not None and ev.cosine >= cut.floor
    own = []
    if strong_vector:
        own.append("distinctive cosine ≥ gate")
    if ev.coverage >= cut.coverage:
        own.append("coverage ≥ cut")
    if above_floor and ev.coverage >= cut.agree:
        own.append("vector and full text agree")
    near_floor = ev.cosine is not None and cut.floor is not None and ev.cosine >= cut.floor - WINDOW_FLOOR_DROP
    if windowed and ev.in_window and (near_floor or ev.coverage >= WINDOW_COVERAGE or cut.by_time_alone):
        own.append("written in the prompt's time window")
    return own
