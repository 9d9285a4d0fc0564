"""The deep-recall manifest: the candidates for a question, metadata first, gated by grep.

Seed 001's orchestrator never reads raw content: it sees a manifest — ids, dates, types, short
snippets — and decides what to open. Here the manifest is built in four steps:

1. **pool** — per store (project, then global): the ordinary retrieval's fused hits, the question's
   nearest vector neighbours (below the per-hit floor too: deep recall looks further than a
   prompt's block), and a full-text search for the question's terms *and* their expansion;
2. **expansion** — words that co-occur with the question's in its best matches
   (:mod:`crib_plugin.hosts.deep.expand`), plus any a model or a named gap added;
3. **grep gate** — each candidate's own text is searched for the terms (:mod:`crib_plugin.hosts.deep.grep`):
   one that confirms no term of the question and fewer than two expansion terms is gated out and
   never reaches a reader model;
4. **rank** — gated candidates by how much of the question they confirm, then by their rank
   fusion over the three lists.

:meth:`Manifest.to_json` is bounded (``CRIB_DEEP_MANIFEST`` bytes, about 4 KB): it stops adding
candidates when the next would not fit and says how many were left off. It never holds a whole entry.
"""

from __future__ import annotations

import dataclasses
import json
import math
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any, Sequence

from ...core.cues import cue_of
from ...core.entry_types import as_table, builtin_names
from ...read.pipeline import recall
from ...read.query import quote
from ...scopes import SCOPES, open_scope, scope_path
from ...text.redact import redact_head_for_render
from ...text.snippet import snippet as one_line
from .expand import cooccurring, merge_terms, named_types, question_terms
from .grep import Term, confirmed, gate_score

if TYPE_CHECKING:  # pragma: no cover
    from ...core.records import Entry
    from ...plugins.contracts import MemoryLike

POOL = 60
"""How deep each list of the pool reaches, per store."""
RRF_K = 60
SNIPPET_CHARS = 100
GATE_PASS = 1.0
"""Confirmed expansion weight a candidate needs when it confirms no term of the question: two terms."""
GATE_RANK = 0.25
"""How much the confirmed terms' weight counts in the rank against the rank fusion (0.25: chosen on the survey
prompts and LoCoMo conversations 1-4 among 0, 0.25, 0.5, 1; bench/deep_recall.py)."""
TYPE_RANK = 1.0
"""What a candidate of a type the question names ("every decision…") adds to the rank: as much as one
fully weighted term of the question (it never passes the gate on its own)."""
MIN_WEIGHT = 0.1
"""The least a confirmed term of the question counts towards the rank (a word in every entry)."""


def snippet(text: str, limit: int = SNIPPET_CHARS) -> str:
    """A pointer's snippet (:func:`crib_plugin.text.snippet.snippet`: one line, cut at a word
    boundary) of ``text`` redacted as the block shows it."""
    return one_line(redact_head_for_render(text), limit)


@dataclass
class Candidate:
    """One memory the manifest lists (its text is kept for the gate and the reader, never listed)."""

    id: int
    scope: str
    type: str
    created_at: str
    content: str
    cue: str = ""
    superseded_by: int | None = None
    fused: float = 0.0  # reciprocal-rank fusion over the pool's lists
    found_by: list[str] = field(default_factory=list)  # "search", "neighbour", "expanded"
    confirmed: list[Term] = field(default_factory=list)
    named: bool = False  # of a type the question names

    @property
    def key(self) -> tuple[str, int]:
        return (self.scope, self.id)

    @property
    def gate(self) -> float:
        return gate_score(self.confirmed)

    @property
    def rank(self) -> float:
        """Rank fusion over the pool's lists (1.0 for first in all three) plus what the gate confirmed,
        and :data:`TYPE_RANK` when the question names the candidate's type."""
        return self.fused * RRF_K / 3 + GATE_RANK * (self.gate + TYPE_RANK * self.named)

    @property
    def passes(self) -> bool:
        """One term of the question confirmed, or expansion terms worth :data:`GATE_PASS` (two)."""
        return any(t.source == "question" for t in self.confirmed) or self.gate >= GATE_PASS

    def to_json(self) -> dict[str, Any]:
        data: dict[str, Any] = {"id": self.id, "scope": self.scope, "date": self.created_at[:10], "type": self.type,
                                "score": round(self.rank, 3), "snippet": snippet(self.content),
                                "confirms": [t.text for t in self.confirmed]}
        if self.superseded_by is not None:
            data["superseded_by"] = self.superseded_by
        return data


@dataclass
class Manifest:
    """The gated, ranked candidates for one question, and those the gate left out."""

    question: str
    terms: list[Term]
    candidates: list[Candidate]
    gated_out: list[Candidate]
    types: tuple[str, ...] = ()  # the memory types the question names (a preference, not a term)

    def to_json(self, max_bytes: int = 4096) -> dict[str, Any]:
        """The manifest as the orchestrator reads it: at most ``max_bytes`` of JSON, never a whole entry."""
        out: dict[str, Any] = {"question": self.question[:200], "terms": [t.text for t in self.terms],
                               "types": list(self.types), "gated_out": len(self.gated_out), "candidates": [], "left_off": 0}
        size = len(json.dumps(out, ensure_ascii=False))
        for n, cand in enumerate(self.candidates):
            row = cand.to_json()
            cost = len(json.dumps(row, ensure_ascii=False)) + 2
            if size + cost > max_bytes:
                out["left_off"] = len(self.candidates) - n
                break
            out["candidates"].append(row)
            size += cost
        return out


def _entries_of(memory: "MemoryLike", ids: Sequence[int]) -> dict[int, "Entry"]:
    return memory.store.get_entries(list(dict.fromkeys(ids))) if ids else {}


def _lists(memory: "MemoryLike", question: str, terms: Sequence[Term]) -> tuple[dict[str, list[int]], list[Term]]:
    """The pool's three ranked id lists for one store, and the store's co-occurrence terms."""
    retrieval = recall(memory, question)
    search = [h.entry.id for h in retrieval.hits][:POOL]
    vector = next((c for c in retrieval.channels if c.channel == "vector" and c.ran), None)
    neighbours = [h.entry_id for h in vector.hits][:POOL] if vector is not None else []
    entries = _entries_of(memory, search[:20] + neighbours[:10])
    expansion = cooccurring(memory.store, terms, [entries[i] for i in search[:20] if i in entries],
                            [entries[i] for i in neighbours[:10] if i in entries])
    words = merge_terms(terms, expansion)
    expression = " OR ".join(quote(" ".join(t.text.split())) for t in words)
    expanded = [i for i, _rank in memory.store.fts_search(expression, POOL)] if expression else []
    return {"search": search, "neighbour": neighbours, "expanded": expanded}, expansion


def _candidates(memory: "MemoryLike", scope: str, lists: dict[str, list[int]]) -> list[Candidate]:
    fused: dict[int, float] = {}
    found_by: dict[int, list[str]] = {}
    for name, ids in lists.items():
        for rank, entry_id in enumerate(ids, start=1):
            fused[entry_id] = fused.get(entry_id, 0.0) + 1.0 / (RRF_K + rank)
            found_by.setdefault(entry_id, []).append(name)
    entries = _entries_of(memory, list(fused))
    successors = memory.store.superseded(list(entries))
    return [Candidate(i, scope, e.type, e.created_at, e.content, cue_of(e.metadata) or "", successors.get(i), fused[i], found_by[i])
            for i, e in entries.items()]


def build_manifest(question: str, *, scope: str = "all", cwd: Path | None = None, extra: Sequence[Term] = ()) -> Manifest:
    """Pool, expand, gate and rank the candidates for ``question`` over one store or both."""
    types = named_types(question, builtin_names())
    asked = question_terms(question, types)
    names = [n for n in (SCOPES if scope == "all" else (scope,)) if scope_path(n, cwd).exists()]
    pool: list[Candidate] = []
    expansion: list[Term] = []
    for name in names:
        with open_scope(name, create=False, cwd=cwd, readonly=True) as memory:
            if name == names[0]:  # the type table with the plugins' types
                types = named_types(question, as_table(memory.registry.types))
                asked = question_terms(question, types)
            lists, found = _lists(memory, question, merge_terms(asked, extra))
            expansion = merge_terms(expansion, found)
            pool.extend(_candidates(memory, name, lists))
        if name == names[0]:
            asked = rarity_weighted(memory.store, asked)
    terms = merge_terms(asked, extra, expansion)
    return gate(question, terms, pool, types)


def rarity_weighted(store: Any, terms: Sequence[Term]) -> list[Term]:
    """The question's terms weighted by how rare they are in the store (1.0 for a word in one entry
    in a hundred or fewer, down to :data:`MIN_WEIGHT` for one in every entry): in a conversation every
    turn names its speaker, and confirming the speaker's name says little."""
    total = max(2, store.count_entries())
    out: list[Term] = []
    for term in terms:
        df = max(1, min(store.term_document_frequency(stem) for stem in term.stems))
        weight = max(MIN_WEIGHT, min(1.0, math.log(total / df) / math.log(100)))
        out.append(dataclasses.replace(term, weight=round(weight, 3)))
    return out


def gate(question: str, terms: list[Term], pool: Sequence[Candidate], types: Sequence[str] = ()) -> Manifest:
    """Apply the grep gate with ``terms`` to ``pool`` and rank what passes (best first), preferring
    the memory ``types`` the question names."""
    for cand in pool:
        cand.confirmed = confirmed(f"{cand.content} {cand.cue}", terms)
        cand.named = cand.type in types
    passed = [c for c in pool if c.passes]
    passed.sort(key=lambda c: (-c.rank, c.scope != "project", -c.id))
    out = [c for c in pool if not c.passes]
    out.sort(key=lambda c: -c.fused)
    return Manifest(question, terms, passed, out, tuple(types))


__all__ = ["Candidate", "Manifest", "build_manifest", "gate", "snippet", "POOL"]
