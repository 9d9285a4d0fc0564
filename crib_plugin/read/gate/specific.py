"""How specific a prompt's words are in this store, and which vector hits are *distinctive*.

A coding agent's memory is about a handful of projects, so every prompt about one of them resembles
much of the store: "make logsift read logs from journald" has a cosine above the gate with a dozen
logsift memories (the project name and its vocabulary make the similarity), although none of them
says anything about journald. A high cosine is then no evidence that a memory answers the prompt.

A vector hit above the gate is **distinctive** when

* it shares a **specific** term with the prompt — one that at most :data:`SPECIFIC_SHARE` of the
  store's entries contain (at least :data:`SPECIFIC_MIN`): "journald", "proration", "Postmark", not
  "logsift" or "billing" in a store full of them; or
* it **stands out of the crowd**: its cosine is :data:`CROWD_MARGIN` above the
  :data:`CROWD_RANK`-th best cosine of the prompt (a paraphrase shares no word with its memory, but
  its memory is much nearer than the rest).

Only a distinctive vector hit opens the relevance gate or counts as an entry's own evidence by its
cosine alone (:mod:`crib_plugin.read.gate.relevance`, :mod:`crib_plugin.read.gate.evidence`). The same holds for the
facts channel: a task's fact match ("atlas" and "web app" in "add a Spanish translation to the atlas
web app") opens the gate only when a matched memory shares a specific term with the prompt
(:func:`facts_bear`).

This applies to *task* prompts (imperatives). A question keeps every strong cosine: LoCoMo's
questions about a conversation are crowded by nature (the rule cost it 10 points of block evidence). Measured on both
evaluations: see the README's Benchmarks section (issue 12).

This module also owns the prompt's term statistics (IDF weights) that the gate's coverage uses.
"""

from __future__ import annotations

import math
from collections.abc import Mapping, Sequence
from typing import TYPE_CHECKING

from ...core.limits import MAX_SCAN_CHARS
from ...text.lexicon import variants
from ...text.words import stem_list
from ..channels.vectors import CROWD_RANK, crowd_level
from ..query import terms
from .prompt_kind import prompt_kind

__all__ = ["CROWD_MARGIN", "CROWD_RANK", "crowd_level", "distinctive", "facts_bear", "specific_terms", "term_weights"]

if TYPE_CHECKING:  # pragma: no cover
    from ...core.records import Retrieval
    from ...plugins.contracts import MemoryLike

# IDF is smoothed with a background corpus so that a small store (one entry!) does not make
# every term it contains worthless: as if PRIOR_DOCS more entries each held a term with
# probability PRIOR_RATE.
PRIOR_DOCS = 100
PRIOR_RATE = 0.01
SPECIFIC_SHARE = 0.03
"""A term in at most this share of the entries is specific to the memories that hold it (3 %: at 5 %
words a handful of a project's memories share — "log", "input", "cluster" — made unrelated tasks'
cosines distinctive; coding dev silence 81.2 → 93.8 %, hit ∪ pointers unchanged; docs/benchmarks.md)."""
SPECIFIC_MIN = 3
"""...or in at most this many entries (a small store, where every share is a few entries)."""
CROWD_MARGIN = 0.15
"""A cosine this far above the crowd stands out without a shared word (a paraphrase)."""

Weighted = list[tuple[list[list[str]], float]]


def _term_stats(memory: MemoryLike, text: str) -> list[tuple[list[list[str]], int]]:
    """The prompt's terms as (stemmed alternative forms, document frequency in the store)."""
    out: list[tuple[list[list[str]], int]] = []
    for term in terms(text):
        forms = [term.text] if term.phrase else list(variants(term.text))
        alternatives = [found for found in (stem_list(f) for f in forms) if found]
        if alternatives:
            out.append((alternatives, min(memory.store.term_document_frequency(s) for s in alternatives[0])))
    return out


def term_weights(memory: MemoryLike, text: str) -> Weighted:
    """The prompt's terms as (stemmed alternative forms, IDF weight), smoothed by a prior.

    Depends only on the prompt and the store's statistics, so a cold process computes it while its
    prefetch worker embeds the prompt; the store keeps the counts it read for the gate.
    """
    docs = max(1, memory.store.count_entries()) + PRIOR_DOCS
    weighted: Weighted = []
    for alternatives, count in _term_stats(memory, text):
        df = count + PRIOR_DOCS * PRIOR_RATE
        weighted.append((alternatives, math.log((docs - df + 0.5) / (df + 0.5) + 1.0)))
    return weighted


def specific_terms(memory: MemoryLike, text: str) -> list[list[list[str]]]:
    """The prompt's terms that few entries contain (see the module docstring); unseen terms are
    left out — they can match nothing."""
    limit = max(SPECIFIC_MIN, SPECIFIC_SHARE * memory.store.count_entries())
    return [alts for alts, df in _term_stats(memory, text) if 0 < df <= limit]


def contains(present: set[str], alternatives: list[list[str]]) -> bool:
    """Whether a text's stems ``present`` hold the term in any of its forms (all stems of a form)."""
    return any(all(s in present for s in alt) for alt in alternatives)


def distinctive(memory: MemoryLike, retrieval: Retrieval, gate: float | None) -> dict[int, str]:
    """The vector hits at or above ``gate`` that are distinctive, each with why (module docstring)."""
    vector = next((c for c in retrieval.channels if c.channel == "vector" and c.ran), None)
    if vector is None or gate is None:
        return {}
    strong = {h.entry_id: h.score for h in vector.hits if h.score >= gate}
    if not strong:
        return {}
    if prompt_kind(retrieval.query.text) != "task":
        return dict.fromkeys(strong, "a question's cosine")
    crowd = crowd_level([h.score for h in vector.hits])
    out: dict[int, str] = {}
    for entry_id, score in strong.items():
        if crowd is None or score - crowd >= CROWD_MARGIN:
            out[entry_id] = "stands out" if crowd is None else f"{score - crowd:.2f} above the crowd"
    rest = [i for i in strong if i not in out]
    if rest:
        out.update(sharing_specific(memory, retrieval.query.text, contents_of(memory, retrieval, rest)))
    return out


def facts_bear(memory: MemoryLike, retrieval: Retrieval, entry_ids: Sequence[int]) -> bool:
    """Whether the facts channel's strong match (its entries ``entry_ids``) may open the gate: always
    for a question; for a task, unless the words it shares with those entries are all common ones
    (the project's own vocabulary). A match on a specific word bears; so does one the facts channel
    made by a name's form alone ("postgres" → the PostgreSQL entity), which shares no word at all."""
    if prompt_kind(retrieval.query.text) != "task":
        return True
    contents = contents_of(memory, retrieval, entry_ids)
    if sharing_specific(memory, retrieval.query.text, contents):
        return True
    present = {s for content in contents.values() for s in stem_list(content[:MAX_SCAN_CHARS])}
    return not any(contains(present, alternatives) for alternatives, _df in _term_stats(memory, retrieval.query.text))


def sharing_specific(memory: MemoryLike, text: str, contents: Mapping[int, str]) -> dict[int, str]:
    """Which of ``contents`` (entry id → text) share a specific prompt term, and the term."""
    specific = specific_terms(memory, text)
    if not specific:
        return {}
    out: dict[int, str] = {}
    for entry_id, content in contents.items():
        present = set(stem_list(content[:MAX_SCAN_CHARS]))
        shared = next((alts for alts in specific if contains(present, alts)), None)
        if shared is not None:
            out[entry_id] = f"shares the specific term {shared[0][0]!r}"
    return out


def contents_of(memory: MemoryLike, retrieval: Retrieval, ids: Sequence[int]) -> dict[int, str]:
    """The text of entries ``ids`` (from the retrieval's hits, else the store)."""
    known = {h.entry.id: h.entry.content for h in retrieval.hits if h.entry.id in ids}
    missing = [i for i in ids if i not in known]
    if missing:
        known.update({i: e.content for i, e in memory.store.get_entries(missing).items()})
    return known
