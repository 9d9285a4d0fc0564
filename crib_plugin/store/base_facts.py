"""The facts part of the :class:`~crib_plugin.store.base.Store` contract.

Entities (a normalised ``name`` key, a display name, and their words), relations between two
entities with a validity interval (``valid_from`` … ``valid_until``, open while current) and a
``superseded_by`` pointer, and the entries each relation was stated by. The *rules* (what
supersedes what) live in ``crib_plugin.store.facts``; a backend only provides these primitives.
Call the writing ones inside :meth:`~crib_plugin.store.base.Store.transaction`.
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from typing import Protocol

from .records import FactRow, RelationRow


class Facts(Protocol):
    """Entity, relation and source rows (see the module docstring)."""

    def entity_id(self, name: str) -> int | None:
        """The entity whose normalised key is ``name``, or ``None``."""
        ...

    def insert_entity(self, name: str, display_name: str, kind: str, terms: Sequence[str], created_at: str) -> int:
        """Create an entity with its words (``n_terms`` = ``len(terms)``); returns its id (ids grow)."""
        ...

    def entity_in_use(self, entity_id: int) -> bool:
        """Whether any relation (current or not) names the entity."""
        ...

    def delete_entity(self, entity_id: int) -> None:
        """Remove the entity and its words."""
        ...

    def entities_with_all_terms(self, terms: Sequence[str]) -> list[int]:
        """Ids (ascending) of entities carrying every one of ``terms`` (non-empty)."""
        ...

    def entity_terms_matching(self, terms: Sequence[str], limit: int | None = None) -> list[tuple[str, int]]:
        """``(term, entity id)`` for entity words equal to one of ``terms`` (at most ``limit``)."""
        ...

    def entity_terms_between(self, low: str, high: str, limit: int) -> list[tuple[str, int]]:
        """``(term, entity id)`` for entity words strictly between ``low`` and ``high`` (prefix scans)."""
        ...

    def entity_term_counts(self, entity_ids: Sequence[int]) -> dict[int, int]:
        """How many words each existing entity's name has (missing ids are absent)."""
        ...

    def term_entity_frequencies(self, terms: Sequence[str]) -> dict[str, int]:
        """For each term present, how many entities carry it."""
        ...

    def entity_id_ceiling(self) -> int:
        """The largest entity id ever assigned still present (0 when none): a count estimate."""
        ...

    def entity_display_names(self, entity_ids: Sequence[int]) -> dict[int, str]:
        """Display names of the existing entities among ``entity_ids``."""
        ...

    def add_predicate_terms(self, predicate: str, terms: Iterable[str]) -> None:
        """Index the predicate's words (idempotent)."""
        ...

    def predicates_with_terms(self, terms: Sequence[str]) -> list[str]:
        """Distinct predicates carrying any of ``terms``."""
        ...

    def insert_relation(
        self, subject_id: int, predicate: str, object_id: int, valid_from: str,
        valid_until: str | None, superseded_by: int | None, created_at: str,
    ) -> int:
        """Create a relation; returns its id (ids grow)."""
        ...

    def current_relations(self, subject_id: int, predicate: str, object_id: int | None = None) -> list[tuple[int, int, str]]:
        """``(id, object id, valid_from)`` of the current relations of a subject and predicate (and object)."""
        ...

    def supersedes_any(self, relation_id: int) -> bool:
        """Whether the relation superseded another one."""
        ...

    def set_relation_valid_from(self, relation_id: int, valid_from: str) -> None:
        """Move a relation's start earlier (an older statement of the same fact arrived)."""
        ...

    def close_relation(self, relation_id: int, valid_until: str, superseded_by: int) -> None:
        """End a relation that is still current; a relation already closed is left unchanged."""
        ...

    def relation_row(self, relation_id: int) -> RelationRow | None:
        """The relation's entities, end and successor, or ``None``."""
        ...

    def hand_over_supersession(self, relation_id: int, valid_until: str | None, superseded_by: int | None) -> None:
        """Relations that ``relation_id`` superseded take its end and successor instead (it is going)."""
        ...

    def delete_relation(self, relation_id: int) -> None:
        """Remove one relation row."""
        ...

    def current_relations_of(self, entity_ids: Sequence[int], role: str, limit: int) -> list[tuple[int, int, str, int, str]]:
        """``(id, subject, predicate, object, valid_from)`` of current relations whose ``role``
        (``"subject"`` or ``"object"``) is one of ``entity_ids``, newest first, at most ``limit``."""
        ...

    def current_relations_with_predicate(self, predicate: str, limit: int) -> list[int]:
        """Ids of current relations with ``predicate``, newest ``valid_from`` first."""
        ...

    def add_relation_source(self, relation_id: int, entry_id: int, created_at: str) -> None:
        """Record that ``entry_id`` stated the relation (idempotent)."""
        ...

    def relations_of_entry(self, entry_id: int) -> list[int]:
        """Ids of the relations ``entry_id`` stated."""
        ...

    def delete_entry_sources(self, entry_id: int) -> None:
        """Forget every relation source row of ``entry_id``."""
        ...

    def entries_stating_superseded(self, relation_ids: Sequence[int], exclude: int) -> list[int]:
        """Entries other than ``exclude`` that stated a fact one of ``relation_ids`` superseded
        (the entries a new correction replaces, by their facts)."""
        ...

    def relation_has_sources(self, relation_id: int) -> bool:
        """Whether any entry still states the relation."""
        ...

    def relation_sources(self, relation_ids: Sequence[int]) -> dict[int, list[int]]:
        """For each relation with sources, its entry ids ascending (any number of ids)."""
        ...

    def fact_rows(
        self, *, relation_ids: Sequence[int] | None = None, entity_ids: Sequence[int] | None = None,
        entry_ids: Sequence[int] | None = None, current_only: bool = False,
    ) -> list[FactRow]:
        """Relations with display names. ``relation_ids``: those (by id). Otherwise filtered by
        ``entity_ids`` (as subject or object), ``entry_ids`` (stated by) and ``current_only``;
        ordered by id when ``entry_ids`` is given, else by subject name (case-insensitive),
        predicate, ``valid_from`` and id."""
        ...
