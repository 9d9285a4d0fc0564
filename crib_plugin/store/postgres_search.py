"""What the PostgreSQL store does its own way: inserting and deleting entries, full-text, trigram and
CJK search, and pgvector spaces. Everything else comes from the mixins both backends share.

Mixins of :class:`~crib_plugin.store.postgres.PostgresStore`; the schema is in :mod:`.postgres_schema`.

Ranking (:meth:`PgFullTextMixin.fts_search`): BM25-like — per OR-ed term, ``ts_rank`` with the
column weights content 1.0, thread context 0.5, type 0.2 (FTS5's BM25 weights) and normalisation 1
(divided by 1 + log of the document length), times the term's inverse document frequency; summed.
"""

from __future__ import annotations

import json
import struct
from collections.abc import Callable, Iterator, Sequence
from contextlib import contextmanager
from typing import TYPE_CHECKING, Any

from ..core import authorship
from ..core.errors import StoreError
from ..core.records import Entry
from ..core.timeutil import now_iso
from . import cjk, pg_match
from .pg_cues import PgCueMixin
from .pg_frequencies import PgFrequencyMixin
from .pg_match import RANK_NORMALISATION, WEIGHTS
from .postgres_schema import MIGRATION_LOCK
from .records import thread_of
from .sqlite_entries import EntriesMixin
from .sqlite_rows import ENTRY_COLUMNS, ENTRY_ROW, EXTRACT_QUEUE, content_hash, row_to_entry, space_table

if TYPE_CHECKING:  # pragma: no cover
    from contextlib import AbstractContextManager

EF_SEARCH_FLOOR = 100  # HNSW candidates per search (pgvector's default 40 would cut a k of 60 short)


def stem_lexemes(stem: str) -> list[str]:
    """The index's lexemes for one of crib's stems. Both are Porter's algorithm, but SQLite's porter
    (crib's) takes two departures from the original that snowball's (the index's) does not: -logi →
    -log and -bli → -ble, so "technology" and "possibly" are crib's ``technolog`` and ``possibl`` and
    the index's ``technologi`` and ``possibli``; crib's stem stands for both lexemes. (One more
    departure is left: SQLite's porter leaves words under three letters alone, the index's does not —
    the word "us" is the lexeme ``u``, so ``us``, the stem of "use", counts "use" but not "us", a stop
    word crib never asks about.)"""
    lexeme = stem.lower()
    return [lexeme, lexeme + "i"] if lexeme.endswith(("log", "bl")) else [lexeme]


def tsquery_lexeme(lexeme: str) -> str:
    """One lexeme as ``tsquery`` input (quoted, so it is taken as it is, not parsed or stemmed)."""
    return "'" + lexeme.replace("\\", "\\\\").replace("'", "''") + "'"


def _floats(blob: bytes) -> str:
    """A float32 blob as pgvector's text form; floats print exactly (repr round-trips)."""
    values = struct.unpack(f"<{len(blob) // 4}f", blob)
    return "[" + ",".join(repr(v) for v in values) + "]"


def _blob(values: Sequence[float]) -> bytes:
    return struct.pack(f"<{len(values)}f", *values)


class PgEntriesMixin(EntriesMixin):
    """Entry rows on PostgreSQL: the shared statements, plus what differs from SQLite."""

    COUNT_SQL = "SELECT coalesce(sum(n), 0) FROM entry_count"  # kept by triggers (migration 6)

    if TYPE_CHECKING:  # provided by PostgresStore

        conn: Any
        url: str
        _spaces: dict[str, tuple[str, int]]

        def _insert_id(self, sql: str, bindings: Sequence[Any]) -> int: ...

    def insert_entry(self, type: str, content: str, created_at: str, metadata: dict[str, Any]) -> int:
        """Insert one entry; its word, trigram and CJK indexes follow from its columns."""
        thread = thread_of(metadata)
        self._forget_reads()
        new_id = self._insert_id(
            "INSERT INTO entries(type, content, created_at, metadata, content_hash, thread, cjk_grams, project) "
            "VALUES (?, ?, ?, ?, ?, ?, ?, ?)",
            (type, content, created_at, json.dumps(metadata, sort_keys=True, ensure_ascii=False), content_hash(content), thread,
             cjk.document_grams(content), authorship.project()),
        )
        self._join_thread(thread, new_id)
        return new_id

    def copy_entry_row(self, row: Sequence[Any]) -> None:
        """Insert an entry exactly as another store holds it (``crib migrate``), with its CJK grams."""
        self._forget_reads()
        self.execute(
            f"INSERT INTO entries({ENTRY_ROW}, cjk_grams) VALUES ({','.join('?' * (len(row) + 1))})",
            [*row, cjk.document_grams(str(row[2]))],
        )

    def after_copy(self) -> None:
        """Move each identity past the ids copied (and past any id the audit log names), so a new
        entry never takes the id of one that was copied or forgotten."""
        floors = {"entries": "(SELECT coalesce(max(entry_id), 0) FROM audit)", "entities": "0", "relations": "0", "audit": "0"}
        for table, floor in floors.items():
            self.execute(
                f"SELECT setval(pg_get_serial_sequence('{table}', 'id'), greatest((SELECT coalesce(max(id), 0) FROM {table}), {floor}, 1))", ()
            )

    def iter_entries(self, order: str = "id") -> Iterator[Entry]:
        """Every entry, in pages of 1000 by key (memory stays flat; no cursor held open)."""
        column = {"id": "id", "created_at": "created_at"}[order]
        last: tuple[Any, int] | None = None
        while True:
            if last is None:
                rows = self.execute(f"SELECT {ENTRY_COLUMNS} FROM entries ORDER BY {column}{', id' if order != 'id' else ''} LIMIT 1000", ())
            elif order == "id":
                rows = self.execute(f"SELECT {ENTRY_COLUMNS} FROM entries WHERE id > ? ORDER BY id LIMIT 1000", (last[1],))
            else:
                rows = self.execute(
                    f"SELECT {ENTRY_COLUMNS} FROM entries WHERE (created_at, id) > (?, ?) ORDER BY created_at, id LIMIT 1000", last
                )
            if not rows:
                return
            yield from (row_to_entry(r) for r in rows)
            last = (rows[-1][3], int(rows[-1][0]))

    def _statistics(self) -> dict[str, int]:
        """No cache across calls: other writers commit at any time and PostgreSQL has no cheap
        "changed since" counter; each count is one indexed statement."""
        self._stats.clear()
        return self._stats

    def count_with_metadata(self, key: str) -> int:
        return int(self.execute("SELECT count(*) FROM entries WHERE (metadata::jsonb ->> ?) IS NOT NULL", (key,))[0][0])

    def _delete_dependents(self, entry_id: int) -> None:
        """Nothing: vectors, queue rows and fact sources go with the entry (``ON DELETE CASCADE``)."""


class PgFullTextMixin(PgFrequencyMixin, PgCueMixin):
    """Word (``tsvector``), recall cue (:class:`~.pg_cues.PgCueMixin`), trigram (``pg_trgm``) and CJK
    gram search on PostgreSQL."""

    if TYPE_CHECKING:  # provided by PostgresStore

        def execute(self, sql: str, bindings: Sequence[Any] | dict[str, Any] = ()) -> list[tuple[Any, ...]]: ...

    def fts_search(self, expression: str, limit: int) -> list[tuple[int, float]]:
        """Entries matching an FTS5 expression, best first, scored like BM25: each top-level OR-ed
        term's ``ts_rank`` (weighted columns, length-normalised) times its inverse document
        frequency, summed. ``ts_rank_cd`` alone has no IDF, so a common word counted as much as a
        rare one (LoCoMo fts R@10 64.8 with it, against FTS5's 75.1 on the same rows). The document
        frequencies come from :meth:`document_frequencies` (exact on a small store, the planner's
        statistics on a big one), bound as parameters."""
        terms = [pg_match.tsquery_sql(node, "crib_english") for node in pg_match.or_operands(pg_match.parse(expression))]
        entries, frequencies = self.document_frequencies(terms, with_total=True)
        values = ", ".join(f"({sql}, ?::bigint)" for sql, _ in terms)
        params = [p for (_, term_params), df in zip(terms, frequencies) for p in (*term_params, df)]
        rows = self.execute(
            f"WITH q(query, df) AS (VALUES {values}), "
            "t AS (SELECT query, ln(1 + (?::bigint - df + 0.5) / (df + 0.5)) AS idf FROM q) "
            f"SELECT e.id, sum(t.idf * ts_rank({WEIGHTS}, e.fts, t.query, {RANK_NORMALISATION})) AS score "
            "FROM t JOIN entries e ON e.fts @@ t.query GROUP BY e.id ORDER BY score DESC, e.id LIMIT ?",
            [*params, max(entries, 1), int(limit)],
        )
        return [(int(r[0]), max(float(r[1]), 1e-9)) for r in rows]

    def term_document_frequency(self, stem: str) -> int:
        """How many entries hold crib's stem ``stem``, looked up as the index's lexeme(s) — never
        stemmed again (``to_tsquery`` would turn ``releas`` into ``relea``). Exact on a small store;
        from the planner's statistics on a big one (:mod:`.pg_frequencies`)."""
        if not stem:
            return 0
        query = " | ".join(tsquery_lexeme(lexeme) for lexeme in stem_lexemes(stem))
        return self.document_frequencies([("?::tsquery", [query])])[1][0]

    def documents_up_to(self, text: str, limit: int) -> int:
        return self.phrase_up_to(text, limit)

    def entries_holding(self, words: Sequence[str], limit: int) -> list[int]:
        words = [w for w in words if w.strip()]
        if not words or limit <= 0:
            return []
        rows = self.execute(
            "SELECT id FROM entries WHERE fts @@ plainto_tsquery('crib_english', crib_fold(?)) ORDER BY id LIMIT ?",
            [" ".join(words), int(limit)],
        )
        return [int(r[0]) for r in rows]

    def trigram_search(self, expression: str, limit: int) -> list[tuple[int, float]]:
        """Entries containing the expression's strings (≥ 3 characters, any case); the score is
        how many matched. ``ILIKE`` uses the ``pg_trgm`` index where it exists, a scan elsewhere."""
        terms = [t for t in dict.fromkeys(pg_match.phrases(pg_match.parse(expression))) if len(t) >= 3]
        return self._contains(terms, limit, "ILIKE")

    def like_search(self, terms: Sequence[str], limit: int) -> list[tuple[int, float]]:
        return self._contains([t for t in terms if t], limit, "LIKE")

    def _contains(self, terms: Sequence[str], limit: int, op: str) -> list[tuple[int, float]]:
        if not terms:
            return []
        patterns = ["%" + t.replace("\\", "\\\\").replace("%", "\\%").replace("_", "\\_") + "%" for t in terms]
        score = " + ".join(f"(content {op} ?)::int" for _ in patterns)
        where = " OR ".join(f"content {op} ?" for _ in patterns)
        rows = self.execute(
            f"SELECT id, ({score}) AS s FROM entries WHERE {where} ORDER BY s DESC, created_at DESC, id LIMIT ?",
            [*patterns, *patterns, int(limit)],
        )
        return [(int(r[0]), float(r[1])) for r in rows]

    def cjk_search(self, expression: str, limit: int) -> list[tuple[int, float]]:
        if not expression:
            return []
        query, params = pg_match.tsquery_sql(pg_match.parse(expression), "simple", fold=False)
        rows = self.execute(
            f"SELECT id, ts_rank(cjk, q) AS score FROM entries, (SELECT {query} AS q) AS t "
            "WHERE cjk_grams <> '' AND cjk @@ q ORDER BY score DESC, id LIMIT ?",
            [*params, int(limit)],
        )
        return [(int(r[0]), max(float(r[1]), 1e-9)) for r in rows]

    def begin_secure_delete(self) -> None:
        """Nothing to switch on: PostgreSQL frees a deleted row's space at ``VACUUM``
        (:meth:`purge_deleted_text` runs it)."""

    def purge_deleted_text(self) -> None:
        """``VACUUM`` the entries and their indexes so deleted rows' text is no longer on disk in
        live pages (best effort: needs the table's owner; WAL and backups keep history longer)."""
        try:
            self.execute("VACUUM entries")
        except StoreError:
            pass


class PgVectorsMixin:
    """pgvector spaces: one table per embedder identity with an HNSW cosine index."""

    if TYPE_CHECKING:  # provided by PostgresStore

        _spaces: dict[str, tuple[str, int]]
        _vectors_ahead: tuple[str, dict[int, bytes]]

        def execute(self, sql: str, bindings: Sequence[Any] | dict[str, Any] = ()) -> list[tuple[Any, ...]]: ...
        def transaction(self) -> AbstractContextManager[None]: ...
        def _forget_reads(self) -> None: ...

    def vector_space(self, key: str) -> tuple[str, int] | None:
        if key not in self._spaces:
            rows = self.execute("SELECT table_name, dim FROM vector_spaces WHERE key = ?", (key,))
            if not rows:
                return None
            self._spaces[key] = (str(rows[0][0]), int(rows[0][1]))
        return self._spaces[key]

    def vector_spaces(self) -> dict[str, tuple[str, int]]:
        return {str(k): (str(t), int(d)) for k, t, d in self.execute("SELECT key, table_name, dim FROM vector_spaces", ())}

    def ensure_vector_space(self, key: str, dim: int) -> str:
        existing = self.vector_space(key)
        if existing:
            return existing[0]

        table = space_table(key)
        with self.transaction():
            self.execute("SELECT pg_advisory_xact_lock(?)", (MIGRATION_LOCK,))
            existing = self.vector_space(key)
            if existing:
                return existing[0]
            self.execute(
                f"CREATE TABLE IF NOT EXISTS {table} (entry_id bigint PRIMARY KEY REFERENCES entries(id) ON DELETE CASCADE, "
                f"embedding vector({int(dim)}) NOT NULL)"
            )
            self.execute(f"CREATE INDEX IF NOT EXISTS {table}_hnsw ON {table} USING hnsw (embedding vector_cosine_ops)")
            self.execute("INSERT INTO vector_spaces(key, table_name, dim, created_at) VALUES (?, ?, ?, ?)", (key, table, int(dim), now_iso()))
        return table

    def _dim(self, table: str) -> int:
        for name, dim in self._spaces.values():
            if name == table:
                return dim
        rows = self.execute("SELECT dim FROM vector_spaces WHERE table_name = ?", (table,))
        if not rows:
            raise StoreError(f"no vector space {table!r}")
        return int(rows[0][0])

    def put_vector(self, table: str, entry_id: int, vector: bytes) -> None:
        dim = self._dim(table)
        if len(vector) != 4 * dim:
            raise StoreError(f"a vector of {len(vector) // 4} dimensions does not fit the space {table} ({dim})")
        self._forget_reads()
        self.execute(
            f"INSERT INTO {table}(entry_id, embedding) VALUES (?, ?::vector) ON CONFLICT (entry_id) DO UPDATE SET embedding = excluded.embedding",
            (int(entry_id), _floats(vector)),
        )

    def delete_vector(self, table: str, entry_id: int) -> None:
        self._forget_reads()
        self.execute(f"DELETE FROM {table} WHERE entry_id = ?", (int(entry_id),))

    def vector_search(self, table: str, vector: bytes, k: int) -> list[tuple[int, float]]:
        self.execute("SELECT set_config('hnsw.ef_search', ?, false)", (str(max(EF_SEARCH_FLOOR, int(k))),))
        rows = self.execute(
            f"SELECT entry_id, embedding <=> ?::vector AS d FROM {table} ORDER BY d LIMIT ?", (_floats(vector), int(k))
        )
        return [(int(r[0]), float(r[1])) for r in rows]

    def vector_similarities(self, table: str, ids: Sequence[int]) -> tuple[list[int], list[list[float]]]:
        wanted = list(dict.fromkeys(int(i) for i in ids))
        have_set = {int(r[0]) for r in self.execute(f"SELECT entry_id FROM {table} WHERE entry_id = ANY(?)", (wanted,))}
        have = [i for i in wanted if i in have_set]
        position = {entry_id: k for k, entry_id in enumerate(have)}
        sims = [[1.0 if i == j else 0.0 for j in range(len(have))] for i in range(len(have))]
        if len(have) < 2:
            return have, sims
        rows = self.execute(
            f"SELECT a.entry_id, b.entry_id, a.embedding <=> b.embedding FROM {table} a JOIN {table} b "
            "ON a.entry_id < b.entry_id WHERE a.entry_id = ANY(?) AND b.entry_id = ANY(?)",
            (have, have),
        )
        for a, b, distance in rows:
            similarity = 1.0 - float(distance) if distance is not None else 0.0
            if similarity != similarity:  # NaN: a zero vector has no direction
                similarity = 0.0
            i, j = position[int(a)], position[int(b)]
            sims[i][j] = sims[j][i] = similarity
        return have, sims

    def stored_vectors(self, table: str, ids: Sequence[int]) -> dict[int, bytes]:
        ahead_table, ahead = self._vectors_ahead
        self._vectors_ahead = ("", {})
        wanted = sorted(set(int(i) for i in ids))
        blobs = {i: ahead[i] for i in wanted if ahead_table == table and i in ahead}
        missing = [i for i in wanted if i not in blobs]
        if missing:
            rows = self.execute(f"SELECT entry_id, embedding::real[] FROM {table} WHERE entry_id = ANY(?)", (missing,))
            blobs.update({int(r[0]): _blob(r[1]) for r in rows})
        return blobs

    def prefetch_vectors(self, table: str, ids: Sequence[int]) -> None:
        self._vectors_ahead = (table, self.stored_vectors(table, ids))

    def plan_search_ahead(self, table: str) -> dict[str, Any] | None:
        return None  # pgvector searches in the server: nothing for a prefetch worker to run

    def search_ahead(self, table: str, planned: dict[str, Any], fetch: Callable[[bytes], Any]) -> None:
        return None

    def all_vectors(self, table: str) -> list[tuple[int, bytes]]:
        return [(int(r[0]), _blob(r[1])) for r in self.execute(f"SELECT entry_id, embedding::real[] FROM {table} ORDER BY entry_id", ())]

    def vector_count(self, table: str) -> int:
        return int(self.execute(f"SELECT count(*) FROM {table}", ())[0][0])

    def entries_without_vector(self, table: str, with_metadata: str | None = None) -> list[int]:
        return self._without_vector(table, with_metadata)

    @contextmanager
    def claim_without_vector(self, table: str, limit: int, after: int = 0, with_metadata: str | None = None) -> Iterator[list[int]]:
        """The next batch, its entry rows locked ``FOR UPDATE SKIP LOCKED`` in one transaction that
        lasts the context: a second reindexer skips the rows this one holds and takes the next ones,
        so each entry is embedded once however many reindexers run.

        The locking statement's snapshot predates its locks: a row another reindexer committed and
        released in between is locked here though it has its vector now. A second statement (a
        fresh snapshot, under the locks) drops those; a batch left empty moves on to the next."""
        with self.transaction():
            ids: list[int] = []
            while not ids:
                locked = self._without_vector(table, with_metadata, after, limit, lock=True)
                if not locked:
                    break
                ids = [int(r[0]) for r in self.execute(
                    f"SELECT e.id FROM entries e WHERE e.id = ANY(?) AND NOT EXISTS (SELECT 1 FROM {table} v WHERE v.entry_id = e.id) "
                    "ORDER BY e.id", (locked,))]
                after = locked[-1]
            yield ids

    def _without_vector(self, table: str, with_metadata: str | None, after: int = 0, limit: int | None = None,
                        lock: bool = False) -> list[int]:
        having = " AND (e.metadata::jsonb ->> ?) IS NOT NULL" if with_metadata else ""
        rows = self.execute(
            f"SELECT e.id FROM entries e WHERE e.id > ? AND NOT EXISTS (SELECT 1 FROM {table} v WHERE v.entry_id = e.id){having} "
            f"ORDER BY e.id LIMIT ?{' FOR UPDATE OF e SKIP LOCKED' if lock else ''}",
            (after, *((with_metadata,) if with_metadata else ()), limit),
        )
        return [int(r[0]) for r in rows]

    def clear_embedded_pending(self, table: str) -> None:
        self.execute(
            f"DELETE FROM pending_embeddings p WHERE p.space <> ? AND EXISTS (SELECT 1 FROM {table} v WHERE v.entry_id = p.entry_id)",
            (EXTRACT_QUEUE,),
        )
