"""Entries superseded by later entries: recorded on write, honoured on injection.

Facts were already versioned (a correction closes the fact it replaces); entries were not, so a
superseded memory ("MSRV is 1.74") could be injected alone, without its correction ("MSRV is now
1.80"). Migration 4 adds ``entries.superseded_by``; this module fills it and uses it:

* **On write** (:func:`record_supersession`), a ``correction``, ``decision`` or ``preference``
  entry that names the value it replaces ("raised from 1.74 to 1.80", "RabbitMQ instead of
  Redis", "switched from fish to zsh", "no longer integer cents") supersedes the older entry that
  states that value and shares :data:`VALUE_WORDS` other content words with it. Failing that, a
  ``correction`` or ``decision`` supersedes

  - every older entry whose facts its own facts closed (same subject and predicate, another
    object — the fact consolidation rules of :mod:`crib_plugin.store.facts`), and
  - else the nearest older entry by vector when it restates the same subject (cosine ≥
    :data:`RESTATES_COSINE` and ≥ :data:`RESTATES_WORDS` shared content words): "atlas moved to
    Node 22" after "atlas pins Node 20";
  - for a ``correction`` with neither: the one older entry it shares the most content words
    with, when that is at least :data:`SHARED_WORDS` of them *and* most of the correction's own
    content words (:data:`SHARED_SHARE`) — "MSRV is now 1.80, not 1.74" against "MSRV is 1.74".

  An ``error`` records an event ("CI failed on 1.74, fixed with once_cell") that a later entry does
  not make untrue: only an entry naming its value (its fix: "no longer needs NODE_OPTIONS=…")
  supersedes it, never a mere resemblance.

* **On injection** (:func:`attach_successors`), a kept entry that was superseded is never shown
  alone: its newest successor is added right after it (when it is not already kept) and the old
  entry is marked superseded in the block.
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from dataclasses import replace
from typing import TYPE_CHECKING, Any

from ..core.authorship import readable_entries
from ..core.records import Entry, Hit
from ..text.common_terms import uncommon_expression
from ..text.words import STOP_WORDS, content_words

if TYPE_CHECKING:  # pragma: no cover
    from ..core.records import Retrieval
    from ..plugins.contracts import MemoryLike  # the protocol: no import of the facade above

SUPERSEDING_TYPES = ("correction", "decision")
VALUE_TYPES = ("correction", "decision", "preference")
"""Types whose "from X to Y" / "instead of X" names an older entry's value (preferences change too)."""
EVENT_TYPES = ("error",)
"""Types that record an event and are never superseded."""
VALUE_WORDS = 2
"""Content words besides the old value an entry must share with the new one to be its predecessor."""
_OLD_VALUE = re.compile(
    r"\bfrom\s+[`\"'(]?(?P<from>\w[\w.+#/-]*)[`\"')]?(?:\s+\w+)?\s+to\s"  # "from 1.74 to 1.80"
    r"|\b(?:instead\s+of|rather\s+than|replac(?:es|ed|ing)|no\s+longer(?:\s+(?:uses?|is|are|needs?))?)\s+"
    r"[`\"'(]?(?P<old>\w[\w.+#/-]*)",
    re.IGNORECASE,
)
SHARED_WORDS = 3
"""Content words a correction must share with an older entry to supersede it without a fact."""
SHARED_SHARE = 0.5
"""...and the share of the correction's own content words those must be."""
CANDIDATES = 20
RESTATES_COSINE = 0.62
"""Cosine (MiniLM) at which a new decision/correction restates an older entry's subject. On the
coding evaluation's memories (all 13 labelled supersede chains, 58 other decisions): 12 of 13
chains found, 3 false links."""
COMMON_DOCS = 2_000
"""A word held by more entries than this is left out of the supersession search
(:func:`crib_plugin.text.common_terms.uncommon_expression`)."""
RESTATES_WORDS = 4
"""...and the content words they must share (a project name alone is not a subject)."""
VALUE_DOCS = 50
"""A named value held by at most this many entries: every one of them is read and weighed (one
unranked full-text read, :meth:`~crib_plugin.store.base_entries.FullText.entries_holding`). Only
an entry holding the value can be its predecessor, so none is missed; a value held by more is
too common to read whole, and the ranked searches of :func:`_older_neighbours` pick candidates."""


def _closed_by(store: Any, relation_ids: Sequence[int], entry_id: int) -> list[int]:
    """Entries (other than ``entry_id``) that stated a fact one of ``relation_ids`` superseded."""
    return store.entries_stating_superseded(relation_ids, entry_id)


def _older_neighbours(store: Any, entry_id: int, texts: Sequence[str], created_at: str) -> list[Any]:
    """Entries written no later than ``created_at`` (other than ``entry_id``) among the top full-text
    hits of each of ``texts``: the candidates a new entry may supersede by its words."""
    near: set[int] = set()
    for text in texts:
        expression = uncommon_expression(store, text.strip(), COMMON_DOCS)
        near.update(i for i, _score in (store.fts_search(expression, CANDIDATES) if expression else ()) if i != entry_id)
    return [e for e in store.get_entries(sorted(near)).values() if e.created_at <= created_at]


def _value_holders(store: Any, entry_id: int, values: Sequence[str], created_at: str) -> list[Any] | None:
    """Every entry written no later than ``created_at`` (other than ``entry_id``) whose content
    holds all the content words of one of ``values``; ``None`` when a value is held by more than
    :data:`VALUE_DOCS` entries.

    Why not the ranked searches: ranking the new entry's whole text counts up to 2,000 documents
    for each of its words and ranks the uncommon ones' postings (≈ 70 ms for a 60-word decision
    at 10⁶), where a value held by a few entries names its candidates in one bounded read."""
    ids: set[int] = set()
    for value in values:
        words = list(content_words(value).values())
        found = [i for i in store.entries_holding(words, VALUE_DOCS + 2) if i != entry_id] if words else []
        if len(found) > VALUE_DOCS:
            return None
        ids.update(found)
    return [e for e in store.get_entries(sorted(ids)).values() if e.created_at <= created_at]


def _by_shared_words(store: Any, entry_id: int, content: str, created_at: str) -> int | None:
    """The older entry a fact-less correction most plausibly corrects (see module docstring)."""
    own = content_words(content)
    if len(own) < SHARED_WORDS:
        return None
    best: tuple[int, int] | None = None
    for entry in _older_neighbours(store, entry_id, [content], created_at):
        if entry.type in EVENT_TYPES:
            continue
        shared = len(own.keys() & content_words(entry.content).keys())
        if shared >= SHARED_WORDS and shared >= SHARED_SHARE * len(own) and (best is None or shared > best[0]):
            best = (shared, entry.id)
    return best[1] if best else None


def old_values(content: str) -> list[str]:
    """The values a new entry says it replaces: "from 1.74 to 1.80" → ``["1.74"]``, "RabbitMQ
    instead of Redis" → ``["Redis"]`` (stop words such as "the" are skipped)."""
    out: list[str] = []
    for match in _OLD_VALUE.finditer(content):
        value = (match.group("from") or match.group("old")).rstrip(".,;:")
        if value and value.lower() not in STOP_WORDS and value not in out:
            out.append(value)
    return out


def _by_changed_value(store: Any, entry_id: int, content: str, created_at: str) -> int | None:
    """The older entry stating the value this one replaces, sharing :data:`VALUE_WORDS` more
    content words with it: a belief (decision, note…) before an event (an error whose fix named the
    value), then the most shared words. Naming the value is explicit enough to supersede an error's fix."""
    values = old_values(content)
    if not values:
        return None
    own = content_words(content)
    entries = _value_holders(store, entry_id, values, created_at)
    if entries is None:  # a common value: entries like this one, and entries naming the value
        entries = _older_neighbours(store, entry_id, [content, *values], created_at)
    best: tuple[tuple[bool, int], int] | None = None
    for value in values:
        value_words = content_words(value).keys()
        if not value_words:
            continue
        for entry in entries:
            theirs = content_words(entry.content).keys()
            if not value_words <= theirs:
                continue
            shared = len((own.keys() & theirs) - value_words)
            rank = (entry.type not in EVENT_TYPES, shared)  # a belief before an event that mentions the value
            if shared >= VALUE_WORDS and (best is None or rank > best[0]):
                best = (rank, entry.id)
    return best[1] if best else None


def _by_vector(store: Any, entry_id: int, content: str, created_at: str, table: str | None, vector: bytes | None) -> int | None:
    """The older entry a new decision or correction restates: its nearest older neighbour, when the
    cosine reaches :data:`RESTATES_COSINE` and they share :data:`RESTATES_WORDS` content words.
    Events and entries already superseded are passed over."""
    if table is None or vector is None:
        return None

    own = content_words(content)
    near = [(i, 1.0 - d) for i, d in store.vector_search(table, vector, CANDIDATES // 4) if i != entry_id]
    entries = store.get_entries([i for i, _ in near])
    replaced = store.superseded([i for i, _ in near])  # a resemblance to a replaced entry is no claim on it
    for other, cosine in near:  # nearest first
        entry = entries.get(other)
        if entry is None or entry.created_at > created_at or cosine < RESTATES_COSINE or entry.type in EVENT_TYPES:
            continue
        if other in replaced:
            continue
        if len(own.keys() & content_words(entry.content).keys()) >= RESTATES_WORDS:
            return other
    return None


def record_supersession(
    store: Any, entry_id: int, entry_type: str, content: str, created_at: str, relation_ids: Sequence[int],
    *, table: str | None = None, vector: bytes | None = None, deferred: bool = False,
) -> list[int]:
    """Mark what entry ``entry_id`` supersedes (call in its write transaction); returns their ids.

    ``deferred``: the entry's vector comes later (:mod:`crib_plugin.write.deferred`); only the
    steps that need no vector run now, and :func:`supersede_by_resemblance` runs the rest, in the
    same order, once the vector is stored."""
    if entry_type not in SUPERSEDING_TYPES + VALUE_TYPES:
        return []
    found = _by_changed_value(store, entry_id, content, created_at)
    old = [found] if found is not None else []
    if not old and entry_type in SUPERSEDING_TYPES:
        old = [i for i in _closed_by(store, relation_ids, entry_id) if _older(store, i, created_at)]
    if not old and not deferred:
        old = supersede_by_resemblance(store, entry_id, entry_type, content, created_at, table=table, vector=vector, mark=False)
    for old_id in old:
        store.supersede_entry(old_id, entry_id)
    return old


def supersede_by_resemblance(
    store: Any, entry_id: int, entry_type: str, content: str, created_at: str,
    *, table: str | None, vector: bytes | None, mark: bool = True,
) -> list[int]:
    """The last steps of :func:`record_supersession` (the nearest older entry by vector, then for a
    correction the one sharing the most words); marks what it finds when ``mark``."""
    old: list[int] = []
    if entry_type in SUPERSEDING_TYPES:
        found = _by_vector(store, entry_id, content, created_at, table, vector)
        old = [found] if found is not None else []
    if not old and entry_type == "correction":
        found = _by_shared_words(store, entry_id, content, created_at)
        old = [found] if found is not None else []
    for old_id in old if mark else ():
        store.supersede_entry(old_id, entry_id)
    return old


def _older(store: Any, other: int, created_at: str) -> bool:
    """Whether entry ``other`` was written no later than ``created_at`` and states a belief (not an event)."""
    entry = store.get_entry(other)
    return entry is not None and entry.created_at <= created_at and entry.type not in EVENT_TYPES


def attach_successors(memory: MemoryLike, retrieval: Retrieval) -> Retrieval:
    """``retrieval`` with no superseded entry alone: its newest successor is added after it, and it is
    marked superseded on a copy of its entry (the entry object is the earlier stages' too)."""
    hits = retrieval.hits
    if not hits:
        return retrieval
    try:
        replaced = memory.store.superseded([h.entry.id for h in hits])
    except Exception:  # a store without migration 4 (a plugin store): nothing is marked
        return retrieval
    if not replaced:
        return retrieval
    kept = {h.entry.id for h in hits}
    out = []
    for hit in hits:
        if hit.entry.id not in replaced:
            out.append(hit)
            continue
        found = readable_successor(memory, hit.entry.id, replaced[hit.entry.id])
        if found is None:  # every successor is another project's (CRIB_PROJECTS): current here
            out.append(hit)
            continue
        newest, successor = found
        out.append(replace(hit, entry=replace(hit.entry, superseded_by=newest)))
        retrieval.notes.append((hit.entry.id, f"superseded by entry {newest}: shown with it, marked superseded"))
        if newest in kept:
            continue
        kept.add(newest)
        out.append(Hit(successor, hit.score, {}))
        retrieval.notes.append((newest, f"added: supersedes entry {hit.entry.id}, which was kept"))
    return replace(retrieval, hits=out)


def readable_successor(memory: MemoryLike, entry_id: int, first: int) -> tuple[int, Entry] | None:
    """The newest successor of ``entry_id`` this read may show, with its entry: the chain
    ``entry_id → first → …`` walked to its end, less the entries ``CRIB_PROJECTS`` hides (on a
    shared store, another project's correction of this project's memory is that project's
    business: it is neither shown nor makes the memory read as superseded here)."""
    chain = successor_chain(memory.store, entry_id, first)
    entries = readable_entries(memory.store, chain, memory.settings.projects)
    for successor_id in reversed(chain):
        if successor_id in entries:
            return successor_id, entries[successor_id]
    return None


MAX_CHAIN = 64
"""Successors walked at most (a chain is a handful of corrections; a cycle or a runaway chain in a
damaged store stops here)."""


def successor_chain(store: Any, entry_id: int, first: int) -> list[int]:
    """The successors of ``entry_id``, oldest first: ``first`` (the entry that superseded it), the one
    that superseded ``first``, and so on, at most :data:`MAX_CHAIN` of them and none twice."""
    chain: list[int] = []
    current: int | None = first
    while current is not None and current not in chain and current != entry_id and len(chain) < MAX_CHAIN:
        chain.append(current)
        current = store.superseded([current]).get(current)
    return chain
