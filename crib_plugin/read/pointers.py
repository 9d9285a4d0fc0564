"""The pointer tier: one-line pointers to the memories that *may* bear on a prompt.

The per-entry cut (:mod:`crib_plugin.read.gate.evidence`) shows in full only the entries whose own evidence
clears it. The right memory is often just below it — the next few search hits hold it far more
often than the block does — and the reader of the block is a strong model that can judge a short
hint and look further. So below the full entries the block lists, as **pointers**, the next
candidates of the fused, the vector and the full-text rankings: id, date, type, scope and the first
:data:`SNIPPET_CHARS` characters cut at a word boundary, under a heading that says how to read the
rest (``show`` / ``recall`` MCP tools, ``crib show ID``).

Whether to point at all is decided for the prompt; to what, by rank alone:

* **the prompt**: pointers are shown when the relevance gate opened (something has evidence), or
  when the vector channel's best hit is within :data:`MAYBE_BELOW_GATE` of the gate and stands out
  of the prompt's crowd by :data:`~crib_plugin.read.gate.specific.CROWD_MARGIN` — the margin that
  makes a cosine distinctive at the gate, here accepted a little below it (the "maybe gate");
* **the candidates**: the fused ranking and the vector's and full text's own rankings
  (:data:`RANKINGS`), in turn, each memory once, until :data:`MAX_POINTERS` — no score bar: the reader of the block judges a
  one-line hint better than a threshold on fused scores does.

``MAX_POINTERS`` and the snippet's length were chosen on the coding set's dev split and LoCoMo
(``bench/pointer_bar.py``); see ``docs/pointers.md`` for the figures and the ceilings measured first.

Every rule of the full tier holds for pointers: a pointer is never an entry already in the block
or already given to this session (in full or as a pointer); a superseded candidate is pointed to
by its newest successor instead; the snippet is redacted and tag-neutralised when rendered
(:mod:`crib_plugin.output.render`); and pointers are counted against the block's character budget.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Iterable, Sequence
from typing import TYPE_CHECKING

from ..core.authorship import project_filter, readable, readable_entries
from ..core.errors import CribError
from ..core.records import ChannelHit, Hit, Retrieval
from ..text.snippet import HEADING_CHARS, POINTER_OVERHEAD, SNIPPET_CHARS, pointer_cost, snippet
from .channels.vectors import crowd_level
from .gate.levels import MARGIN_SCALE, vector_gate
from .gate.specific import CROWD_MARGIN

if TYPE_CHECKING:  # pragma: no cover
    from ..plugins.contracts import MemoryLike

__all__ = ["MAX_POINTERS", "SNIPPET_CHARS", "POINTER_OVERHEAD", "choose_pointers", "merge_pointers", "pointer_cost", "snippet"]

MAX_POINTERS = 8
"""At most this many pointers in one block, filled from the fused ranking and the :data:`RANKINGS`
channels' own rankings in turn by rank, each memory once: where the rankings agree the tier reaches
further down each instead of leaving slots empty (coding dev: the next 4 of each gave 5.1 pointers
a block and 89.2 % hit ∪ pointers; filling 8 gives 91.6 %). The vector's own ranking is there
because on the coding set it holds a relevant memory that the fusion ranks lower (dev: top 3 of
the vector 77 % against 65 % of the fused)."""
MAYBE_MARGIN = CROWD_MARGIN
"""How far above the prompt's crowd the vector's top must stand for pointers when no entry is
shown: the margin that makes a cosine distinctive at the gate."""
MAYBE_BELOW_GATE = 0.07
"""How far below the relevance gate the vector's top may sit for pointers when no entry is shown
(MiniLM's cosine scale; :data:`~crib_plugin.read.channels.vectors.MARGIN_SCALE` carries it to other
embedders). From the per-hit floor (0.10 below) the maybe gate gave pointers to 9 of the 80 dev
commit subjects that got no entry, their tops as often at 0.34–0.36 as at 0.40. At 0.07 below
the gate it keeps every dev prompt it reached (coding hit ∪ pointers 92.8, MADial-Bench entries ∪
pointers 31.9) and silences 2 of the 9 (commit subjects dev, nothing at all 67.5 → 70.0); 0.05
silences 4 but costs MADial-Bench dev 2.5 points of entries ∪ pointers (29.4), 0.06 1.2 points
(docs/relevance.md, "What each rule buys")."""


def _maybe_gate(memory: "MemoryLike", retrieval: Retrieval) -> int | None:
    """The vector's best hit when it is within :data:`MAYBE_BELOW_GATE` of the gate and stands out
    of the prompt's crowd, else None."""
    vector = next((c for c in retrieval.channels if c.channel == "vector" and c.ran), None)
    if vector is None or not vector.hits:
        return None
    top = max(vector.hits, key=lambda h: h.score)
    crowd = crowd_level([h.score for h in vector.hits])
    try:
        bar = vector_gate(memory) - MAYBE_BELOW_GATE * MARGIN_SCALE.get(memory.embedder_key(), 1.0)
    except CribError:
        return None
    if top.score < bar or crowd is None or top.score - crowd < MAYBE_MARGIN:
        return None
    retrieval.notes.append((0, f"pointers: the vector's top (entry {top.entry_id}, {top.score:.3f}) is above "
                               f"{bar:.2f} ({MAYBE_BELOW_GATE:.2f} below the gate) and {top.score - crowd:.2f} "
                               "above the crowd (maybe gate)"))
    return top.entry_id


def choose_pointers(
    memory: "MemoryLike",
    retrieval: Retrieval,
    pool: Sequence[Hit],
    *,
    skip: Iterable[int] = (),
    budget: int,
    used: int,
    limit: int | None = None,
) -> Retrieval:
    """``retrieval`` with its pointers chosen from ``pool`` (the fused hits before the gate, best first).

    The candidates are the fused ranking and the :data:`RANKINGS` channels' own rankings (none
    shown in full nor given to the session), taken in turn — fused first — each memory once, until
    ``limit`` (:data:`MAX_POINTERS`), with no score bar: the prompt-level decision (the gate, else the maybe
    gate) says whether to point at all, the rank says to what.

    ``skip``: entry ids the session was already given (in full or as pointers). ``used``: the
    characters the block's entries and facts already take of ``budget``.
    """
    retrieval = dataclasses.replace(retrieval, pointers=[])
    limit = MAX_POINTERS if limit is None else limit
    if limit <= 0 or not pool:
        return retrieval
    if not retrieval.hits and _maybe_gate(memory, retrieval) is None:
        return retrieval
    skipped = set(skip) | {h.entry.id for h in retrieval.hits}
    fused = [h for h in pool if h.entry.id not in skipped][:limit]
    room = budget - used - HEADING_CHARS
    chosen: list[Hit] = []
    taken = {h.entry.id for h in retrieval.hits}
    wanted = project_filter(memory.settings.projects)  # a successor (_current) may be another project's
    for hit, why in _current(memory, retrieval, _by_rank(memory, retrieval, fused, skipped, limit)):
        if len(chosen) >= limit:
            break
        if hit.entry.id in taken or hit.entry.id in skipped or not readable(hit.entry.project, wanted):
            continue
        cost = pointer_cost(hit.entry.content)
        if cost > room:
            retrieval.notes.append((hit.entry.id, "not pointed to: the budget is spent"))
            continue
        room -= cost
        taken.add(hit.entry.id)
        chosen.append(hit)
        retrieval.notes.append((hit.entry.id, f"pointer: {why}"))
    return dataclasses.replace(retrieval, pointers=chosen)


RANKINGS = ("vector", "fts")
"""The channels whose own rankings the pointer tier takes in turn with the fused one: the vector
channel reaches paraphrases the fusion ranks low, full text the exact words it ranks low (coding
test: one prompt more than the fused and vector rankings alone, at the same eight slots)."""


def _by_rank(memory: "MemoryLike", retrieval: Retrieval, fused: list[Hit], skipped: set[int], depth: int) -> list[tuple[Hit, str]]:
    """The fused ranking's and each of :data:`RANKINGS`' first ``depth`` candidates, in turn — each
    ranking's next memory not taken yet, fused first — each once, with why. A channel's candidate the fusion ranked too carries its
    fused hit; one it left out (below a floor) carries the score of the fused candidate at its rank,
    so two stores' pointers merge in rank order (:func:`merge_pointers`)."""
    known = {h.entry.id: h for h in fused}
    own: list[tuple[str, list[ChannelHit]]] = []
    for name in RANKINGS:
        channel = next((c for c in retrieval.channels if c.channel == name and c.ran), None)
        ranked = sorted(channel.hits, key=lambda h: -h.score) if channel is not None else []
        own.append((name, [h for h in ranked if h.entry_id not in skipped][:depth]))
    missing = list(dict.fromkeys(h.entry_id for _, hits in own for h in hits if h.entry_id not in known))
    entries = readable_entries(memory.store, missing, memory.settings.projects)
    lists: list[list[tuple[Hit | None, str]]] = [[(h, f"fused rank {n + 1} after the entries") for n, h in enumerate(fused)]]
    for name, hits in own:
        column: list[tuple[Hit | None, str]] = []
        for n, near in enumerate(hits):
            floor_score = fused[min(n, len(fused) - 1)].score if fused else near.score
            entry = known[near.entry_id].entry if near.entry_id in known else entries.get(near.entry_id)
            hit = known.get(near.entry_id) or (Hit(entry, floor_score, {name: near}) if entry is not None else None)
            score = f"cosine {near.score:.3f}" if name == "vector" else f"score {near.score:.3f}"
            column.append((hit, f"{name} rank {n + 1} after the entries ({score})"))
        lists.append(column)
    out: list[tuple[Hit, str]] = []
    seen: set[int] = set()
    cursors = [0] * len(lists)
    while any(c < len(column) for c, column in zip(cursors, lists)):
        for k, column in enumerate(lists):  # each ranking's next memory not taken yet, in turn
            while cursors[k] < len(column):
                hit, why = column[cursors[k]]
                cursors[k] += 1
                if hit is not None and hit.entry.id not in seen:
                    seen.add(hit.entry.id)
                    out.append((hit, why))
                    break
    return out


def _current(memory: "MemoryLike", retrieval: Retrieval, hits: list[tuple[Hit, str]]) -> list[tuple[Hit, str]]:
    """``hits`` with every superseded entry replaced by its newest successor (a pointer never leads
    to a belief that was replaced without what replaced it)."""
    if not hits:
        return hits
    try:
        replaced = memory.store.superseded([h.entry.id for h, _ in hits])
    except Exception:  # a store without migration 4 (a plugin store): nothing is superseded
        return hits
    if not replaced:
        return hits
    out: list[tuple[Hit, str]] = []
    for hit, why in hits:
        if hit.entry.id not in replaced:
            out.append((hit, why))
            continue
        newest = memory.store.successor_of(hit.entry.id) or replaced[hit.entry.id]
        successor = memory.store.get_entry(newest)
        if successor is None:
            continue  # its successor is gone: neither is pointed to
        retrieval.notes.append((newest, f"pointer in place of entry {hit.entry.id}, which it supersedes"))
        out.append((Hit(dataclasses.replace(successor, scope=hit.entry.scope), hit.score, {}), why))
    return out



def merge_pointers(hits: Sequence[Hit], pointers: Sequence[Hit], budget: int, used: int, limit: int | None = None) -> list[Hit]:
    """Two stores' pointers as one tier (their entries carry their scope): best first, none to an
    entry shown in full, within ``limit`` and what ``used`` leaves of ``budget``."""
    limit = MAX_POINTERS if limit is None else limit
    shown = {(h.entry.scope, h.entry.id) for h in hits}
    room = budget - used - HEADING_CHARS
    out: list[Hit] = []
    for hit in sorted(pointers, key=lambda h: -h.score):  # stable: the project's first on ties
        key = (hit.entry.scope, hit.entry.id)
        cost = pointer_cost(hit.entry.content)
        if len(out) >= limit or key in shown or cost > room:
            continue
        shown.add(key)
        room -= cost
        out.append(hit)
    return out
