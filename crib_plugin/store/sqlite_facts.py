"""SQLite statements for the facts tables: entities, their words, relations and their sources.

A mixin of both backends (:class:`~crib_plugin.store.sqlite.SQLiteStore` and
:class:`~crib_plugin.store.postgres.PostgresStore`): its statements are written in the SQL both
dialects share, with ``?`` placeholders and ``ON CONFLICT DO NOTHING``; the store class supplies
``execute`` and ``_insert_id``. ``crib_plugin.store.facts`` decides *what*
to record (normalisation, consolidation rules, matching and scoring); this module only reads and
writes rows, through the named methods of :class:`~crib_plugin.store.base.Store`, so a PostgreSQL
backend can provide the same primitives.
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from typing import TYPE_CHECKING, Any

from .records import FactRow, RelationRow

if TYPE_CHECKING:  # pragma: no cover  (the row classes load when first read, not with every store)
    from .records import FactRow, RelationRow

FACT_SELECT = (
    "SELECT r.id, s.display_name, r.predicate, o.display_name, r.valid_from, r.valid_until "
    "FROM relations r JOIN entities s ON s.id = r.subject_id JOIN entities o ON o.id = r.object_id "
)
BY_SUBJECT = "lower(s.display_name), r.predicate, r.valid_from, r.id"  # lower(): NOCASE in both dialects
CHUNK = 500  # ids bound per statement (SQLite's default limit on variables is far above it)


def chunks(items: Sequence[int], size: int = CHUNK) -> Iterable[Sequence[int]]:
    """``items`` in slices of at most ``size`` (each bound as one ``IN (...)`` list)."""
    for start in range(0, len(items), size):
        yield items[start:start + size]


def _marks(items: Sequence[Any]) -> str:
    return ",".join("?" * len(items))


class FactsMixin:
    """Facts rows for :class:`SQLiteStore` (see the module docstring)."""

    if TYPE_CHECKING:  # provided by the store class

        def execute(self, sql: str, bindings: Sequence[Any] | dict[str, Any] = ()) -> list[tuple[Any, ...]]: ...
        def _insert_id(self, sql: str, bindings: Sequence[Any]) -> int: ...

    # -- entities ------------------------------------------------------------------------------

    def entity_id(self, name: str) -> int | None:
        rows = self.execute("SELECT id FROM entities WHERE name = ?", (name,))
        return int(rows[0][0]) if rows else None

    def insert_entity(self, name: str, display_name: str, kind: str, terms: Sequence[str], created_at: str) -> int:
        entity_id = self._insert_id(
            "INSERT INTO entities(name, display_name, type, n_terms, created_at) VALUES (?, ?, ?, ?, ?)",
            (name, display_name, kind, len(terms), created_at),
        )
        for term in terms:
            self.execute("INSERT INTO entity_terms(term, entity_id) VALUES (?, ?) ON CONFLICT DO NOTHING", (term, entity_id))
        return entity_id

    def entity_in_use(self, entity_id: int) -> bool:
        return bool(self.execute("SELECT 1 FROM relations WHERE subject_id = ? OR object_id = ? LIMIT 1", (entity_id, entity_id)))

    def delete_entity(self, entity_id: int) -> None:
        self.execute("DELETE FROM entity_terms WHERE entity_id = ?", (entity_id,))
        self.execute("DELETE FROM entities WHERE id = ?", (entity_id,))

    def entities_with_all_terms(self, terms: Sequence[str]) -> list[int]:
        rows = self.execute(
            f"SELECT entity_id FROM entity_terms WHERE term IN ({_marks(terms)}) GROUP BY entity_id "
            f"HAVING count(DISTINCT term) = ? ORDER BY entity_id",
            [*terms, len(terms)],
        )
        return [int(r[0]) for r in rows]

    def entity_terms_matching(self, terms: Sequence[str], limit: int | None = None) -> list[tuple[str, int]]:
        tail = f" LIMIT {int(limit)}" if limit is not None else ""
        rows = self.execute(f"SELECT term, entity_id FROM entity_terms WHERE term IN ({_marks(terms)}){tail}", list(terms))
        return [(str(t), int(e)) for t, e in rows]

    def entity_terms_between(self, low: str, high: str, limit: int) -> list[tuple[str, int]]:
        rows = self.execute("SELECT term, entity_id FROM entity_terms WHERE term > ? AND term < ? LIMIT ?", (low, high, int(limit)))
        return [(str(t), int(e)) for t, e in rows]

    def entity_term_counts(self, entity_ids: Sequence[int]) -> dict[int, int]:
        out: dict[int, int] = {}
        for chunk in chunks(list(entity_ids)):
            for entity_id, n in self.execute(f"SELECT id, n_terms FROM entities WHERE id IN ({_marks(chunk)})", list(chunk)):
                out[int(entity_id)] = int(n)
        return out

    def term_entity_frequencies(self, terms: Sequence[str]) -> dict[str, int]:
        rows = self.execute(f"SELECT term, count(*) FROM entity_terms WHERE term IN ({_marks(terms)}) GROUP BY term", list(terms))
        return {str(t): int(c) for t, c in rows}

    def entity_id_ceiling(self) -> int:
        return int(self.execute("SELECT coalesce(max(id), 0) FROM entities")[0][0])

    def entity_display_names(self, entity_ids: Sequence[int]) -> dict[int, str]:
        out: dict[int, str] = {}
        for chunk in chunks(list(entity_ids)):
            for i, n in self.execute(f"SELECT id, display_name FROM entities WHERE id IN ({_marks(chunk)})", list(chunk)):
                out[int(i)] = str(n)
        return out

    # -- predicates ----------------------------------------------------------------------------

    def add_predicate_terms(self, predicate: str, terms: Iterable[str]) -> None:
        for term in terms:
            self.execute("INSERT INTO predicate_terms(term, predicate) VALUES (?, ?) ON CONFLICT DO NOTHING", (term, predicate))

    def predicates_with_terms(self, terms: Sequence[str]) -> list[str]:
        return [str(r[0]) for r in self.execute(f"SELECT DISTINCT predicate FROM predicate_terms WHERE term IN ({_marks(terms)})", list(terms))]

    # -- relations -----------------------------------------------------------------------------

    def insert_relation(
        self, subject_id: int, predicate: str, object_id: int, valid_from: str,
        valid_until: str | None, superseded_by: int | None, created_at: str,
    ) -> int:
        return self._insert_id(
            "INSERT INTO relations(subject_id, predicate, object_id, valid_from, valid_until, superseded_by, created_at) "
            "VALUES (?, ?, ?, ?, ?, ?, ?)",
            (subject_id, predicate, object_id, valid_from, valid_until, superseded_by, created_at),
        )

    def current_relations(self, subject_id: int, predicate: str, object_id: int | None = None) -> list[tuple[int, int, str]]:
        sql = "SELECT id, object_id, valid_from FROM relations WHERE subject_id = ? AND predicate = ? AND valid_until IS NULL"
        args: list[Any] = [subject_id, predicate]
        if object_id is not None:
            sql += " AND object_id = ?"
            args.append(object_id)
        # ORDER BY the partial index's own order, so SQLite reads the current rows only: without
        # it the planner took relations_subject and stepped through every closed relation of the
        # pair (≈ 6 ms at 15,000 of them, growing with each import); returned by id, as before.
        rows = self.execute(sql + " ORDER BY object_id, id", args)
        return sorted((int(r[0]), int(r[1]), str(r[2])) for r in rows)

    def supersedes_any(self, relation_id: int) -> bool:
        return bool(self.execute("SELECT 1 FROM relations WHERE superseded_by = ? LIMIT 1", (relation_id,)))

    def set_relation_valid_from(self, relation_id: int, valid_from: str) -> None:
        self.execute("UPDATE relations SET valid_from = ? WHERE id = ?", (valid_from, relation_id))

    def close_relation(self, relation_id: int, valid_until: str, superseded_by: int) -> None:
        self.execute(
            "UPDATE relations SET valid_until = ?, superseded_by = ? WHERE id = ? AND valid_until IS NULL",
            (valid_until, superseded_by, relation_id),
        )

    def relation_row(self, relation_id: int) -> RelationRow | None:
        rows = self.execute("SELECT subject_id, object_id, valid_until, superseded_by FROM relations WHERE id = ?", (relation_id,))
        if not rows:
            return None
        s, o, until, by = rows[0]
        return RelationRow(int(s), int(o), None if until is None else str(until), None if by is None else int(by))

    def hand_over_supersession(self, relation_id: int, valid_until: str | None, superseded_by: int | None) -> None:
        self.execute(
            "UPDATE relations SET valid_until = ?, superseded_by = ? WHERE superseded_by = ?",
            (valid_until, superseded_by, relation_id),
        )

    def delete_relation(self, relation_id: int) -> None:
        self.execute("DELETE FROM relations WHERE id = ?", (relation_id,))

    def current_relations_of(
        self, entity_ids: Sequence[int], role: str, limit: int
    ) -> list[tuple[int, int, str, int, str]]:
        column = {"subject": "subject_id", "object": "object_id"}[role]
        rows = self.execute(
            f"SELECT id, subject_id, predicate, object_id, valid_from FROM relations "
            f"WHERE valid_until IS NULL AND {column} IN ({_marks(entity_ids)}) ORDER BY valid_from DESC LIMIT ?",
            [*entity_ids, int(limit)],
        )
        return [(int(r), int(s), str(p), int(o), str(v)) for r, s, p, o, v in rows]

    def current_relations_with_predicate(self, predicate: str, limit: int) -> list[int]:
        rows = self.execute(
            "SELECT id FROM relations WHERE valid_until IS NULL AND predicate = ? ORDER BY valid_from DESC LIMIT ?",
            (predicate, int(limit)),
        )
        return [int(r[0]) for r in rows]

    # -- sources -------------------------------------------------------------------------------

    def add_relation_source(self, relation_id: int, entry_id: int, created_at: str) -> None:
        self.execute(
            "INSERT INTO relation_sources(relation_id, entry_id, created_at) VALUES (?, ?, ?) ON CONFLICT DO NOTHING",
            (relation_id, entry_id, created_at),
        )

    def relations_of_entry(self, entry_id: int) -> list[int]:
        return [int(r[0]) for r in self.execute("SELECT relation_id FROM relation_sources WHERE entry_id = ?", (entry_id,))]

    def delete_entry_sources(self, entry_id: int) -> None:
        self.execute("DELETE FROM relation_sources WHERE entry_id = ?", (entry_id,))

    def entries_stating_superseded(self, relation_ids: Sequence[int], exclude: int) -> list[int]:
        """Entries (other than ``exclude``) that stated a fact one of ``relation_ids`` superseded."""
        if not relation_ids:
            return []
        marks = ",".join("?" * len(relation_ids))
        rows = self.execute(
            f"SELECT DISTINCT rs.entry_id FROM relations r JOIN relation_sources rs ON rs.relation_id = r.id "
            f"WHERE r.superseded_by IN ({marks}) AND rs.entry_id != ?",
            [*relation_ids, exclude],
        )
        return [int(r[0]) for r in rows]

    def relation_has_sources(self, relation_id: int) -> bool:
        return bool(self.execute("SELECT 1 FROM relation_sources WHERE relation_id = ? LIMIT 1", (relation_id,)))

    def relation_sources(self, relation_ids: Sequence[int]) -> dict[int, list[int]]:
        found: dict[int, list[int]] = {}
        for chunk in chunks(list(relation_ids)):
            for relation_id, entry_id in self.execute(
                f"SELECT relation_id, entry_id FROM relation_sources WHERE relation_id IN ({_marks(chunk)}) ORDER BY entry_id",
                list(chunk),
            ):
                found.setdefault(int(relation_id), []).append(int(entry_id))
        return found

    # -- reading facts -------------------------------------------------------------------------

    def fact_rows(
        self, *, relation_ids: Sequence[int] | None = None, entity_ids: Sequence[int] | None = None,
        entry_ids: Sequence[int] | None = None, current_only: bool = False,
    ) -> list[FactRow]:
        if relation_ids is not None:
            rows = []
            for chunk in chunks(list(relation_ids)):
                rows += self._fact_select(f"r.id IN ({_marks(chunk)})", list(chunk), "r.id")
            return rows
        clauses = ["r.valid_until IS NULL"] if current_only else []
        params: list[Any] = []
        if entity_ids is not None:
            marks = _marks(entity_ids)
            clauses.append(f"(r.subject_id IN ({marks}) OR r.object_id IN ({marks}))")
            params += [*entity_ids, *entity_ids]
        if entry_ids is not None:
            clauses.insert(0, f"r.id IN (SELECT relation_id FROM relation_sources WHERE entry_id IN ({_marks(entry_ids)}))")
            params = [*entry_ids, *params]
        where = " AND ".join(clauses) or "1"
        return self._fact_select(where, params, "r.id" if entry_ids is not None else BY_SUBJECT)

    def _fact_select(self, where: str, params: Sequence[Any], order: str) -> list[FactRow]:
        rows = self.execute(f"{FACT_SELECT} WHERE {where} ORDER BY {order}", list(params))
        return [
            FactRow(int(r[0]), str(r[1]), str(r[2]), str(r[3]), str(r[4]), None if r[5] is None else str(r[5]))
            for r in rows
        ]
