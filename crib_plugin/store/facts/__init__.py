"""Fact triples: normalisation, consolidation-on-write with history, and the queries over them.

The write path hands every entry's extracted :class:`~crib_plugin.core.records.Triple` list to
:func:`record_facts`, inside the same transaction as the entry insert. Facts are stored as
``relations`` between ``entities``; a relation is *current* while ``valid_until IS NULL``.
Consolidation never deletes a relation: it closes it (``valid_until``, ``superseded_by``) so
``crib facts ENTITY --all`` can show every version with its dates.

Why normalise: the seed's facts channel matched entity names with ``LIKE '%kw%'`` over whatever
spelling the model produced, so "SQLite" and "sqlite" were two entities and a query could flip
between hit and miss. Here an entity is keyed by :func:`entity_key` (case, whitespace, quotes,
articles, possessive and simple plural folded) and its name is indexed word by word, stemmed with
SQLite's own porter tokenizer (the one the full-text channel uses), in ``entity_terms``.

Consolidation rules (:func:`record_facts`):

- **Identical current fact** (same subject, predicate, object) → one more source row, no new relation.
- **Single-valued predicate** (see :func:`single_valued`) with the same subject and a different object
  → the old relation is closed at the new one's ``valid_from`` and the new one inserted.
  ``ClientA pays Net30`` then ``ClientA now pays Net45``: Net30 closes, Net45 is current.
- **Multi-valued predicate** (``uses``, ``likes``, ``is``, verbs in general): facts accumulate.
- **Negation** ``not_P`` closes the current ``P`` fact with the same subject and object, and vice versa
  (``we no longer use Redis`` closes ``project → uses → Redis``); the negative fact is kept as current.
- **Correction entries** (``type=correction``) treat every predicate as single-valued: what a correction
  states replaces what was current for that subject and predicate.
- **Out-of-order writes** (an import of older entries): a fact older than the conflicting current one
  is inserted already closed, at the time the newer fact begins.

Which predicates are single-valued — the rule, in order:

1. ``not_*`` predicates are multi-valued (each negated object is its own fact);
2. listed in :data:`SINGLE_VALUED` (``payment_terms``, ``lives_in``, ``works_at``, ``status``,
   ``storage_backend``, ``maps_to`` …) → single; listed in :data:`MULTI_VALUED` (``uses``, ``likes``,
   ``is``, ``has``, ``depends_on`` …) → multi;
3. role and attribute shapes → single: ``*_backend``, ``*_terms``, ``*_status``, ``*_version``,
   ``*_owner``, ``*_date`` … and ``used_for_*``, ``default_*``, ``primary_*``;
4. otherwise the predicate's main word decides: a verb form (``…s``, ``…ed``, ``…ing``, an irregular
   past such as ``went``) is a relation that accumulates (multi); a noun (``owner``, ``database``,
   ``contact``, ``deadline``, a ``key: value`` key) is an attribute with one value at a time (single).

The facts channel's search lives here too (:func:`match_facts`) so benchmarks can call it without
the plugin machinery; ``crib_plugin/channels/facts.py`` wraps it as a channel.
"""

from __future__ import annotations

from .consolidate import forget_entry, record_facts
from .match import HUB_DEGREE, HUB_KEEP, FactMatch, match_facts, query_stems
from .normalise import (
    MAX_NAME_CHARS,
    MULTI_VALUED,
    PROJECT,
    SINGLE_VALUED,
    NormalTriple,
    clean_name,
    entity_key,
    normalise_predicate,
    normalise_triple,
    single_valued,
    split_negation,
)
from .query import current_facts, fact_history, facts_command_output, facts_for_entries, find_entities, load_facts
from .terms import entity_terms, predicate_terms, predicate_words, stems

__all__ = [
    "SINGLE_VALUED",
    "MULTI_VALUED",
    "PROJECT",
    "clean_name",
    "entity_key",
    "normalise_predicate",
    "split_negation",
    "single_valued",
    "stems",
    "entity_terms",
    "predicate_terms",
    "record_facts",
    "forget_entry",
    "current_facts",
    "fact_history",
    "facts_for_entries",
    "find_entities",
    "match_facts",
    "FactMatch",
    "facts_command_output",
    "HUB_DEGREE",
    "HUB_KEEP",
    "MAX_NAME_CHARS",
    "NormalTriple",
    "load_facts",
    "normalise_triple",
    "predicate_words",
    "query_stems",
]
