"""Recall-cue search on PostgreSQL: the counterpart of SQLite's ``entries_cue`` word index.

An entry's cue (metadata ``when``, :mod:`crib_plugin.core.cues`) is a generated ``tsvector`` of its
own, ``cue_fts``, with a GIN index (migration 7, :mod:`.postgres_schema`), apart from the entries'
word index ``fts``: the store's document frequencies stay those of what the memories say. A mixin of
:class:`~crib_plugin.store.postgres.PostgresStore`.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import TYPE_CHECKING, Any

from . import pg_match
from .pg_match import RANK_NORMALISATION, WEIGHTS

CUE_DF_BOUND = 10_000
"""A cue word's document frequency is counted up to this (one GIN scan per word of the prompt)."""


class PgCueMixin:
    """``cue_search`` for :class:`~crib_plugin.store.postgres.PostgresStore`."""

    if TYPE_CHECKING:  # provided by PostgresStore

        def execute(self, sql: str, bindings: Sequence[Any] | dict[str, Any] = ()) -> list[tuple[Any, ...]]: ...
        def count_entries(self) -> int: ...
        def phrase_up_to(self, text: str, limit: int, column: str = "fts") -> int: ...

    def cue_search(self, expression: str, limit: int) -> list[tuple[int, float]]:
        """Entries whose recall cue matches an FTS5 expression, best first, scored as
        :meth:`~.postgres_search.PgFullTextMixin.fts_search` scores words: each OR-ed term's
        ``ts_rank`` times its inverse document frequency among the cues (counted up to
        :data:`CUE_DF_BOUND`; the store's size as the collection's), summed."""
        terms = [pg_match.tsquery_sql(node, "crib_english") for node in pg_match.or_operands(pg_match.parse(expression))]
        if not terms:
            return []
        values = ", ".join(f"({sql})" for sql, _ in terms)
        rows = self.execute(
            f"WITH q(query) AS (VALUES {values}), "
            "t AS (SELECT query, ln(1 + (?::bigint - df + 0.5) / (df + 0.5)) AS idf FROM q, LATERAL "
            "(SELECT count(*) AS df FROM (SELECT 1 FROM entries WHERE cue_fts @@ q.query LIMIT ?) d) f) "
            f"SELECT e.id, sum(t.idf * ts_rank({WEIGHTS}, e.cue_fts, t.query, {RANK_NORMALISATION})) AS score "
            "FROM t JOIN entries e ON e.cue_fts @@ t.query GROUP BY e.id ORDER BY score DESC, e.id LIMIT ?",
            [*(p for _, params in terms for p in params), max(self.count_entries(), 1), CUE_DF_BOUND, int(limit)],
        )
        return [(int(r[0]), max(float(r[1]), 1e-9)) for r in rows]

    def cue_documents_up_to(self, text: str, limit: int) -> int:
        """Entries whose recall cue holds ``text`` (a word or a phrase), counted up to ``limit``: on a
        big store a common cue word's count from the planner's statistics of ``cue_fts``
        (:mod:`.pg_frequencies`), as the word index's."""
        return self.phrase_up_to(text, limit, "cue_fts")
