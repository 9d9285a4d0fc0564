"""Consolidation on write: :func:`record_facts` inserts, closes or merges relations; :func:`forget_entry`
undoes an entry's facts. The rules are listed in :mod:`crib_plugin.store.facts`.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Iterable

from ...core.errors import InputError
from ...core.records import Triple
from ...core.timeutil import now_iso

if TYPE_CHECKING:  # pragma: no cover
    from ..base import Store

from .normalise import PROJECT, normalise_triple, single_valued, split_negation
from .terms import entity_terms, predicate_terms

# ----------------------------------------------------------------------------------------------
# Consolidation on write
# ----------------------------------------------------------------------------------------------


def _entity_id(store: Store, key: str, display: str, now: str, cache: dict[str, int]) -> int:
    if key in cache:
        return cache[key]
    found = store.entity_id(key)
    if found is not None:
        cache[key] = found
        return cache[key]
    terms = entity_terms(display)
    kind = "project" if key == PROJECT else "entity"
    entity_id = store.insert_entity(key, display, kind, terms, now)
    cache[key] = entity_id
    return entity_id


def _index_predicate(store: Store, predicate: str) -> None:
    store.add_predicate_terms(predicate, predicate_terms(predicate))


def _add_source(store: Store, relation_id: int, entry_id: int, now: str) -> None:
    store.add_relation_source(relation_id, entry_id, now)


def _current(store: Store, subject_id: int, predicate: str, object_id: int | None = None) -> list[tuple[int, int, str]]:
    """Current relations ``(id, object_id, valid_from)`` for a subject and predicate (and object)."""
    return store.current_relations(subject_id, predicate, object_id)


def _consolidate(
    store: Store,
    entry_id: int,
    subject_id: int,
    predicate: str,
    object_id: int,
    valid_from: str,
    *,
    correction: bool,
    now: str,
) -> int:
    """Record one normalised fact against what is current; returns the relation id that holds it."""
    same = _current(store, subject_id, predicate, object_id)
    if same:
        relation_id, _obj, since = same[0]
        if valid_from < since and not store.supersedes_any(relation_id):
            # An older statement of the same fact (import out of order): it has held since then.
            store.set_relation_valid_from(relation_id, valid_from)
        _add_source(store, relation_id, entry_id, now)
        return relation_id

    base, negated = split_negation(predicate)
    conflicts: list[tuple[int, int, str]] = []
    if negated:
        conflicts += _current(store, subject_id, base, object_id)
    else:
        conflicts += _current(store, subject_id, f"not_{base}", object_id)
        if correction or single_valued(predicate):
            conflicts += [c for c in _current(store, subject_id, predicate) if c[1] != object_id]

    earlier = [c for c in conflicts if c[2] <= valid_from]
    later = sorted((c for c in conflicts if c[2] > valid_from), key=lambda c: c[2])
    valid_until = later[0][2] if later else None
    superseded_by = later[0][0] if later else None
    relation_id = store.insert_relation(subject_id, predicate, object_id, valid_from, valid_until, superseded_by, now)
    for old_id, _obj, _since in earlier:
        store.close_relation(old_id, valid_from, relation_id)
    _index_predicate(store, predicate)
    _add_source(store, relation_id, entry_id, now)
    return relation_id


def record_facts(
    store: Store,
    entry_id: int,
    triples: Iterable[Triple],
    *,
    valid_from: str,
    entry_type: str = "note",
) -> list[int]:
    """Consolidate the facts one entry states; returns the ids of the relations that hold them.

    Call inside the transaction that inserts the entry (it nests as a savepoint, so it is atomic on
    its own too). ``valid_from`` is the entry's ``created_at``. Triples that normalise to nothing
    findable (pronouns, empty or sentence-long names) are skipped; duplicates within one entry count
    once. See the module docstring for the consolidation rules.
    """
    if not valid_from:
        raise InputError("record_facts needs valid_from (the entry's created_at)")
    now = now_iso()
    cache: dict[str, int] = {}
    seen: set[tuple[str, str, str]] = set()
    ids: list[int] = []
    with store.transaction():
        for triple in triples:
            normal = normalise_triple(triple)
            if normal is None:
                continue
            key = (normal.subject_key, normal.predicate, normal.object_key)
            if key in seen:
                continue
            seen.add(key)
            subject_id = _entity_id(store, normal.subject_key, normal.subject_name, now, cache)
            object_id = _entity_id(store, normal.object_key, normal.object_name, now, cache)
            relation_id = _consolidate(
                store, entry_id, subject_id, normal.predicate, object_id, valid_from,
                correction=(entry_type == "correction"), now=now,
            )
            if relation_id not in ids:
                ids.append(relation_id)
    return ids


def forget_entry(store: Store, entry_id: int) -> int:
    """Remove what one entry contributed to the facts; returns how many relations were deleted.

    Its source rows go. A relation left with no source at all was stated only by this entry, so it
    goes too — and whatever it had superseded takes its place again (reopened if it was current, or
    handed to the next version), so forgetting a mistaken entry restores the earlier fact. Entities
    no relation mentions any more are removed with their terms.
    """
    deleted = 0
    with store.transaction():
        relation_ids = store.relations_of_entry(entry_id)
        store.delete_entry_sources(entry_id)
        touched: set[int] = set()
        for relation_id in relation_ids:
            if store.relation_has_sources(relation_id):
                continue
            row = store.relation_row(relation_id)
            if row is None:
                continue
            store.hand_over_supersession(relation_id, row.valid_until, row.superseded_by)
            store.delete_relation(relation_id)
            touched.update((row.subject_id, row.object_id))
            deleted += 1
        for entity_id in touched:
            if not store.entity_in_use(entity_id):
                store.delete_entity(entity_id)
    return deleted
