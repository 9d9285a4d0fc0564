"""Reading facts: current facts, history, facts for entries, and the text ``crib facts`` prints.
"""

from __future__ import annotations

import json
from typing import TYPE_CHECKING, Any, Sequence

from ...core.records import Fact
from ...core.timeutil import day

if TYPE_CHECKING:  # pragma: no cover
    from ..base import Store
    from ..records import FactRow

from .normalise import clean_name, entity_key
from .terms import entity_terms

# ----------------------------------------------------------------------------------------------
# Reading facts
# ----------------------------------------------------------------------------------------------

def _load(store: Store, rows: Sequence[FactRow]) -> list[Fact]:
    sources = store.relation_sources([r.id for r in rows])
    return [
        Fact(
            id=r.id, subject=r.subject, predicate=r.predicate, object=r.object,
            valid_from=r.valid_from, valid_until=r.valid_until,
            source_entry_ids=sources.get(r.id, []),
        )
        for r in rows
    ]


def load_facts(store: Store, relation_ids: Sequence[int]) -> list[Fact]:
    """Facts by relation id, in the order given."""
    facts = {fact.id: fact for fact in _load(store, store.fact_rows(relation_ids=list(relation_ids)))}
    return [facts[i] for i in relation_ids if i in facts]


def find_entities(store: Store, name: str) -> list[int]:
    """Entity ids a user-typed name refers to: its exact key, else entities carrying all its words."""
    key = entity_key(name)
    if not key:
        return []
    found = store.entity_id(key)
    if found is not None:
        return [found]
    terms = entity_terms(clean_name(name))
    if not terms:
        return []
    return store.entities_with_all_terms(terms)


def current_facts(store: Store, entity: str | None = None) -> list[Fact]:
    """Current facts (``valid_until IS NULL``), all or those naming ``entity`` as subject or object."""
    if entity is None:
        return _load(store, store.fact_rows(current_only=True))
    ids = find_entities(store, entity)
    if not ids:
        return []
    return _load(store, store.fact_rows(entity_ids=ids, current_only=True))


def fact_history(store: Store, entity: str | None = None) -> list[Fact]:
    """Every version of every fact (or of those naming ``entity``), oldest first per predicate."""
    if entity is None:
        return _load(store, store.fact_rows())
    ids = find_entities(store, entity)
    if not ids:
        return []
    return _load(store, store.fact_rows(entity_ids=ids))


def facts_for_entries(store: Store, entry_ids: Sequence[int], *, current_only: bool = False) -> list[Fact]:
    """Facts stated by any of ``entry_ids``."""
    if not entry_ids:
        return []
    return _load(store, store.fact_rows(entry_ids=list(entry_ids), current_only=current_only))


# ----------------------------------------------------------------------------------------------
# `crib facts`
# ----------------------------------------------------------------------------------------------


def _line(fact: Fact, all_versions: bool) -> str:
    sources = ", ".join(str(i) for i in fact.source_entry_ids) or "none"
    head = f"{fact.subject} → {fact.predicate} → {fact.object}"
    if not all_versions:
        return f"{head} (since {day(fact.valid_from)}) [entries: {sources}]"
    if fact.valid_until is None:
        return f"{head} (from {fact.valid_from}, current) [entries: {sources}]"
    return f"{head} (from {fact.valid_from} until {fact.valid_until}) [entries: {sources}]"


def facts_command_output(store: Any, entity: str | None, all_versions: bool, as_json: bool) -> str:
    """The text ``crib facts [ENTITY] [--all] [--json]`` prints.

    Current facts by default; ``--all`` lists every version with its validity interval (full
    timestamps, since two versions often start on the same day). ``--json`` prints a JSON list of
    facts (``id``, ``subject``, ``predicate``, ``object``, ``valid_from``, ``valid_until``,
    ``sources``). An unknown entity prints an explanatory line (or ``[]``).
    """
    facts = fact_history(store, entity) if all_versions else current_facts(store, entity)
    if as_json:
        return json.dumps([f.to_json() for f in facts], ensure_ascii=False, indent=2)
    if not facts:
        if entity:
            return f"no facts about {entity!r}"
        return "no facts stored yet"
    return "\n".join(_line(f, all_versions) for f in facts)
