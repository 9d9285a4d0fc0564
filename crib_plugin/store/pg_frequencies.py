"""Document frequencies on PostgreSQL — how many entries match a word — without reading a common
word's whole posting list on a big store.

The relevance gate, the common-word cut and the BM25-like IDF of
:meth:`~crib_plugin.store.postgres_search.PgFullTextMixin.fts_search` ask, for every word of a
prompt, how many entries hold it. An exact ``count(*)`` reads the word's whole posting list (10⁵s of
rows for a common word at 10⁶ entries: ``bench/pg_scale.py measure`` spent 573 s of two rounds in
it). SQLite answers from FTS5's own statistics (``fts5vocab``); the server's equivalent are the
planner's statistics of the ``tsvector`` column, which ``ANALYZE`` (or autovacuum) keeps:
``pg_stats.most_common_elems`` / ``most_common_elem_freqs`` give the share of the sampled rows holding
each common lexeme. A lexeme not among them is rarer than the least common of them, so its exact
count, bounded by ``LIMIT`` at that least common count, stays cheap.

Only above :data:`~crib_plugin.text.common_terms.BIG_STORE` entries (the table's row estimate,
``pg_class.reltuples``), the size where crib already treats a store as big: below it every count is
exact, so a small store ranks exactly as SQLite's and never depends on when autovacuum last ran.
The statistics are read once per store instance (a hook's process opens one store per prompt).
The recall cues' column (``cue_fts``, :mod:`.pg_cues`) has statistics of its own, read the same way:
on a big store the cue search leaves out the words most cues hold, and counting them must not read
their posting lists either.
"""

from __future__ import annotations

import math
import re
from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

from ..text import common_terms

if TYPE_CHECKING:  # pragma: no cover
    from typing import Protocol

    class _Executes(Protocol):
        def execute(self, sql: str, bindings: Sequence[Any] = ()) -> list[tuple[Any, ...]]: ...


Query = tuple[str, list[Any]]
"""A ``tsquery`` SQL expression with its ``?`` parameters (:func:`~.pg_match.tsquery_sql`)."""

LEXEME = re.compile(r"'((?:[^']|'')*)'")
"""A lexeme in a ``tsquery``'s text form (``'releas' <-> 'note'``), quotes doubled inside."""

STATISTICS_SQL = (
    "SELECT c.reltuples, s.most_common_elems::text::text[], s.most_common_elem_freqs FROM pg_class c "
    "LEFT JOIN pg_stats s ON s.schemaname = c.relnamespace::regnamespace::text AND s.tablename = c.relname "
    "AND s.attname = ? WHERE c.oid = 'entries'::regclass"
)
COLUMNS = ("fts", "cue_fts")
"""The ``tsvector`` columns counted: the entries' words and their recall cues' (:mod:`.pg_cues`)."""


@dataclass(frozen=True)
class TermStatistics:
    """The planner's view of ``entries.fts``: its row estimate and the common lexemes' shares."""

    rows: float = 0.0
    shares: dict[str, float] = field(default_factory=dict)

    @property
    def usable(self) -> bool:
        """A big store with statistics: never analysed (``reltuples`` -1) or small → exact counts."""
        return self.rows > common_terms.BIG_STORE and bool(self.shares)

    @property
    def rare_bound(self) -> int:
        """The least common listed lexeme's count: any other lexeme is counted no further."""
        return max(1, math.ceil(min(self.shares.values()) * self.rows))

    def estimate(self, query_text: str) -> int | None:
        """The document frequency of a ``tsquery`` (its text form) when all its lexemes are common:
        the least common one's (an AND or a phrase matches no more entries than its rarest word).
        None when one is not listed (rare: count it) or the query is not a plain conjunction —
        except a plain disjunction of lexemes (one of crib's stems standing for two of the index's
        lexemes, ``'technolog' | 'technologi'``): the sum of the listed ones' counts, the others
        being rarer than :attr:`rare_bound`; None when none is listed."""
        lexemes = [m.replace("''", "'") for m in LEXEME.findall(query_text)]
        if "|" in query_text and not any(op in query_text for op in "&!<"):
            listed = [self.shares[lexeme] for lexeme in lexemes if lexeme in self.shares]
            return min(round(self.rows), max(1, round(sum(listed) * self.rows))) if listed else None
        if "|" in query_text or "!" in query_text:
            return None
        if not lexemes or any(lexeme not in self.shares for lexeme in lexemes):
            return None
        return max(1, round(min(self.shares[lexeme] for lexeme in lexemes) * self.rows))


def read_statistics(store: _Executes, column: str = "fts") -> TermStatistics:
    """The planner's statistics of ``entries.<column>`` (one of :data:`COLUMNS`)."""
    rows = store.execute(STATISTICS_SQL, (column,))
    if not rows or rows[0][1] is None or rows[0][2] is None:
        return TermStatistics(float(rows[0][0]) if rows else 0.0)
    reltuples, elems, freqs = rows[0]
    # most_common_elem_freqs ends with the minimum and maximum shares: zip stops at the lexemes
    return TermStatistics(float(reltuples), {str(e): float(f) for e, f in zip(elems, freqs)})


class PgFrequencyMixin:
    """``document_frequencies`` for the PostgreSQL store (see the module docstring)."""

    _column_statistics: dict[str, TermStatistics] | None = None

    if TYPE_CHECKING:  # provided by PostgresStore

        def execute(self, sql: str, bindings: Sequence[Any] | dict[str, Any] = ()) -> list[tuple[Any, ...]]: ...

    def term_statistics(self, column: str = "fts") -> TermStatistics:
        """The statistics of ``column`` (the entries' words unless named), read on first use and
        kept for this store instance's life."""
        if column not in COLUMNS:
            raise ValueError(f"no statistics for entries.{column}")
        if self._column_statistics is None:
            self._column_statistics = {}
        if column not in self._column_statistics:
            self._column_statistics[column] = read_statistics(self, column)
        return self._column_statistics[column]

    def document_frequencies(self, queries: Sequence[Query], with_total: bool = False) -> tuple[int, list[int]]:
        """``(entries, frequencies)``: how many entries match each ``tsquery``, and the store's size
        (counted only ``with_total``, else 0). Exact on a small store; on a big one the planner's
        estimate for common lexemes and a count bounded at :attr:`TermStatistics.rare_bound` for the
        rest, the size being the planner's row estimate."""
        stats = self.term_statistics()
        if not stats.usable:
            counts = [f"(SELECT count(*) FROM entries WHERE fts @@ {sql})" for sql, _ in queries]
            if with_total:
                counts.append("(SELECT count(*) FROM entries)")  # below BIG_STORE; works before migration 6 too
            if not counts:
                return 0, []
            row = self.execute("SELECT " + ", ".join(counts), [p for _, params in queries for p in params])[0]
            return (int(row[-1]) if with_total else 0), [int(v) for v in row[: len(queries)]]
        if not queries:
            return round(stats.rows), []
        texts = self.execute("SELECT " + ", ".join(f"({sql})::text" for sql, _ in queries),
                             [p for _, params in queries for p in params])[0]
        estimates = [stats.estimate(str(text)) for text in texts]
        rare = [k for k, estimate in enumerate(estimates) if estimate is None]
        if rare:
            bounded = ", ".join(
                f"(SELECT count(*) FROM (SELECT 1 FROM entries WHERE fts @@ {queries[k][0]} LIMIT ?) d)" for k in rare
            )
            row = self.execute("SELECT " + bounded, [p for k in rare for p in (*queries[k][1], stats.rare_bound)])[0]
            for k, count in zip(rare, row):
                estimates[k] = int(count)
        return round(stats.rows), [int(e or 0) for e in estimates]

    def phrase_up_to(self, text: str, limit: int, column: str = "fts") -> int:
        """Entries whose ``column`` holds ``text`` (a word or a phrase, folded and stemmed as the
        column is), counted up to ``limit``: ``documents_up_to`` for the words, the cue count for cues."""
        if not text.strip() or limit <= 0:
            return 0
        return self.documents_up_to_limit(("phraseto_tsquery('crib_english', crib_fold(?))", [text]), limit, column)

    def documents_up_to_limit(self, query: Query, limit: int, column: str = "fts") -> int:
        """``min(entries matching, limit)`` in ``column`` (the entries' words unless named): on a big
        store a common word's from the statistics (a GIN bitmap scan builds the whole posting list
        before any ``LIMIT`` stops it), anything else — a phrase too: its words may be common
        together but rare in sequence — counted up to ``limit``."""
        stats = self.term_statistics(column)
        if stats.usable:
            text = str(self.execute(f"SELECT ({query[0]})::text", query[1])[0][0])
            estimate = stats.estimate(text) if len(LEXEME.findall(text)) == 1 else None
            if estimate is not None:
                return min(estimate, limit)
        rows = self.execute(f"SELECT count(*) FROM (SELECT 1 FROM entries WHERE {column} @@ {query[0]} LIMIT ?) d", [*query[1], int(limit)])
        return int(rows[0][0])
