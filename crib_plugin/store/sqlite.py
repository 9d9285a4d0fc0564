"""The SQLite store: one file holding entries, their word and trigram indexes, vectors and facts.

Why apsw: Python's ``sqlite3`` module is often compiled without ``enable_load_extension`` (on this
machine, and on macOS's system Python), so sqlite-vec cannot be loaded through it. apsw ships its own
SQLite with extension loading, FTS5 and the trigram tokenizer on every platform.

Every write is one transaction that takes the write lock up front (``BEGIN IMMEDIATE``); the
database runs in WAL mode, and a busy handler with jittered backoff waits for another writer's lock
(``CRIB_BUSY_TIMEOUT``), so several agents can share one file. Read commands open the file
read-only (:func:`open_store` with ``readonly=True``): they never create, migrate or convert it.
Damaged files raise one :class:`~crib_plugin.errors.StoreError` subclass naming the cause.
"""

from __future__ import annotations

import importlib.util
import json
import os
import re
import time
from contextlib import contextmanager
from pathlib import Path
from typing import Any, Iterator, Sequence

import apsw

from ..errors import (
    ExtensionError,
    NotACribStore,
    StoreBusy,
    StoreCorrupt,
    StoreError,
    StoreFull,
    StoreOutdated,
    StoreReadOnly,
    StoreTooNew,
)
from ..records import Entry
from ..timeutil import now_iso
from . import cjk
from .schema import MIGRATIONS, latest_version
from .sqlite_admin import AdminMixin
from .sqlite_facts import FactsMixin

BUSY_SLEEP_CAP = 0.05  # longest single backoff step of the busy handler, seconds
SQLITE_MAGIC = b"SQLite format 3\x00"
TYPE_WEIGHT = 0.2  # BM25 weight of the entry type column
CONTEXT_WEIGHT = 0.5  # BM25 weight of the thread-neighbour context column
CONTEXT_CHARS = 1000  # each neighbour's share of an entry's context
# The pending_embeddings "space" of entries whose fact extraction was deferred (model down or
# slower than CRIB_EXTRACT_BUDGET); `crib reindex` drains it. One queue table, two kinds of work.
EXTRACT_QUEUE = "extract"


def thread_of(metadata: dict[str, Any]) -> str | None:
    """The thread an entry belongs to (metadata ``thread``), if any."""
    value = metadata.get("thread") if isinstance(metadata, dict) else None
    return str(value) if value not in (None, "") else None
ENTRY_COLUMNS = "id, type, content, created_at, metadata, content_hash"


def content_hash(content: str) -> str:
    """sha256 of the whitespace-normalised content; finds duplicates cheaply."""
    import hashlib  # loads OpenSSL (~5-10 ms): only writes pay for it

    return hashlib.sha256(" ".join(content.split()).encode("utf-8")).hexdigest()


def vec_extension_path() -> str:
    """Where the sqlite-vec loadable extension is, without importing the ``sqlite_vec`` module.

    Importing ``sqlite_vec`` pulls in ``numpy.typing`` (≈60 ms), which the per-prompt hook cannot
    afford; the extension file sits beside the package's ``__init__``. ``CRIB_VEC_EXTENSION``
    overrides it.
    """
    from ..config import setting_value

    override = setting_value("vec_extension")
    if override:
        return override
    spec = importlib.util.find_spec("sqlite_vec")
    if spec is None or not spec.submodule_search_locations:
        raise ExtensionError("sqlite-vec is not installed (pip install sqlite-vec)")
    return str(Path(next(iter(spec.submodule_search_locations))) / "vec0")


def _row_to_entry(row: Sequence[Any]) -> Entry:
    try:
        metadata = json.loads(row[4]) if row[4] else {}
    except json.JSONDecodeError:
        metadata = {}
    return Entry(
        id=int(row[0]),
        type=str(row[1]),
        content=str(row[2]),
        created_at=str(row[3]),
        metadata=metadata,
        content_hash=str(row[5]),
    )


class BusyHandler:
    """SQLite busy handler: jittered exponential backoff until ``timeout`` seconds have passed.

    SQLite calls it with the number of times it was already called for the same lock wait (0 on
    the first). Full jitter (a random sleep up to the current step, capped at
    :data:`BUSY_SLEEP_CAP`) keeps eight writers woken by one commit from colliding again in step.
    """

    def __init__(self, timeout: float) -> None:
        self.timeout = timeout
        self.started = 0.0

    def __call__(self, count: int) -> bool:
        import random  # only a process that waits pays for it

        now = time.monotonic()
        if count == 0:
            self.started = now
        if now - self.started >= self.timeout:
            return False
        step = min(BUSY_SLEEP_CAP, 0.001 * (2 ** min(count, 10)))
        time.sleep(random.uniform(0.2 * step, step))
        return True


def describe_file(path: Path) -> str | None:
    """Why ``path`` cannot be a SQLite database judging by its bytes, or ``None`` if it might be.

    Reads at most the 100-byte header: empty, not SQLite, or shorter than its header says
    (truncated). Used to name the cause when SQLite reports a malformed file.
    """
    try:
        size = path.stat().st_size
        with path.open("rb") as fh:
            header = fh.read(100)
    except OSError:
        return None
    if size == 0:
        return "is empty (0 bytes), not a crib database"
    if not header.startswith(SQLITE_MAGIC[: len(header)]) or len(header) < len(SQLITE_MAGIC):
        return "is not a SQLite database (it does not start with the SQLite header)"
    if len(header) < 100:
        return f"is truncated ({size} bytes, shorter than a SQLite header)"
    page_size = int.from_bytes(header[16:18], "big")
    page_size = 65536 if page_size == 1 else page_size
    pages = int.from_bytes(header[28:32], "big")
    if pages and header[24:28] == header[92:96] and pages * page_size > size:
        return f"is truncated ({size} bytes, its header says {pages * page_size})"
    return None


def store_error(exc: BaseException, path: Path | str, doing: str = "") -> StoreError:
    """One clear :class:`StoreError` subclass for an apsw error met while using ``path``."""
    where = f" ({doing})" if doing else ""
    if isinstance(exc, StoreError):
        return exc
    if isinstance(exc, apsw.FullError):
        return StoreFull(f"cannot write {path}: the disk or the database's size limit is full{where}; nothing was stored — free space and retry")
    if isinstance(exc, (apsw.ReadOnlyError, apsw.PermissionsError)):
        return StoreReadOnly(f"cannot write {path}: the file or its directory is read-only{where}")
    if isinstance(exc, apsw.BusyError):
        return StoreBusy(f"{path} stayed locked by another writer for longer than CRIB_BUSY_TIMEOUT{where}")
    if isinstance(exc, (apsw.CorruptError, apsw.NotADBError)):
        cause = describe_file(Path(path)) or f"is damaged ({exc})"
        cls = NotACribStore if "not a SQLite" in cause or "empty" in cause else StoreCorrupt
        return cls(f"{path} {cause}; crib left it untouched")
    return StoreError(f"database error{where}: {exc}")


def _space_table(key: str) -> str:
    slug = re.sub(r"[^a-z0-9]+", "_", key.lower()).strip("_")
    return f"vec_{slug}"[:60]


class SQLiteStore(AdminMixin, FactsMixin):
    """A connection to one crib database, migrated to the latest schema.

    Open with :func:`open_store`. Methods are small and SQL-shaped; ranking and fusion live in
    the channels, not here.
    """

    backend = "sqlite"

    def __init__(self, path: Path, conn: apsw.Connection, readonly: bool = False) -> None:
        self.path = path
        self.conn = conn
        self.readonly = readonly
        self._vec_loaded = False
        self._vocab_ready = False
        self._vectors_ahead: tuple[str, dict[int, bytes]] = ("", {})  # see prefetch_vectors
        self._stats: dict[str, int] = {}  # entry count and term frequencies, see _statistics
        self._stats_version: int | None = None

    # -- lifecycle -------------------------------------------------------------------------

    def close(self) -> None:
        try:
            self.conn.close()
        except apsw.Error:  # pragma: no cover - closing twice or mid-statement
            pass

    def __enter__(self) -> "SQLiteStore":
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    @contextmanager
    def transaction(self) -> Iterator[None]:
        """One atomic unit: commits on success, rolls back on any exception.

        The outermost transaction starts with ``BEGIN IMMEDIATE``: it takes the write lock before
        reading anything, so it can never fail half-way for a lock (a deferred transaction cannot
        upgrade once another writer has committed — that failed 13 % of parallel writes). While
        another process holds the lock the busy handler waits, with jitter, up to
        ``CRIB_BUSY_TIMEOUT``. A nested call is a savepoint inside the outer transaction.
        """
        try:
            if self.conn.in_transaction:
                with self.conn:  # apsw: a savepoint when a transaction is open
                    yield
                return
            try:
                self.conn.execute("BEGIN IMMEDIATE")
            except apsw.Error as exc:
                raise store_error(exc, self.path, "starting a write") from None
            try:
                yield
            except BaseException:
                try:
                    self.conn.execute("ROLLBACK")
                except apsw.Error:  # SQLite already rolled back (e.g. after SQLITE_FULL)
                    pass
                raise
            try:
                self.conn.execute("COMMIT")
            except apsw.Error as exc:
                try:
                    self.conn.execute("ROLLBACK")
                except apsw.Error:
                    pass
                raise store_error(exc, self.path, "committing") from None
        finally:
            self._forget_reads()  # nothing read inside may outlive a rollback

    def execute(self, sql: str, bindings: Sequence[Any] | dict[str, Any] = ()) -> list[tuple[Any, ...]]:
        """Run one statement and return all rows; apsw errors become StoreError subclasses."""
        try:
            return list(self.conn.execute(sql, bindings))
        except apsw.Error as exc:
            raise store_error(exc, self.path) from exc

    def load_vec(self) -> None:
        """Load sqlite-vec into this connection (once)."""
        if self._vec_loaded:
            return
        try:
            self.conn.enable_load_extension(True)
            self.conn.load_extension(vec_extension_path())
        except apsw.Error as exc:
            raise ExtensionError(f"cannot load sqlite-vec: {exc}") from exc
        self._vec_loaded = True

    def migrate(self) -> int:
        """Bring the schema to the latest version; returns the version reached.

        Serialised across processes: every pending migration runs in one ``BEGIN IMMEDIATE``
        transaction, and the version is read again once the write lock is held, so a process that
        waited behind another's migration finds the work done instead of repeating it.
        """
        with self.transaction():
            current = self.schema_version()
            for migration in MIGRATIONS:
                if migration.version <= current:
                    continue
                try:
                    with self.conn:  # savepoint: a failed migration names itself
                        self.conn.execute(migration.sql)
                        if migration.backfill is not None:
                            migration.backfill(self.conn)
                        self.conn.execute(f"PRAGMA user_version = {int(migration.version)}")
                except apsw.Error as exc:
                    if isinstance(exc, (apsw.FullError, apsw.ReadOnlyError, apsw.BusyError)):
                        raise store_error(exc, self.path, f"migration {migration.version}") from None
                    raise StoreError(f"migration {migration.version} ({migration.name}) failed: {exc}") from exc
        return self.schema_version()

    def schema_version(self) -> int:
        return int(self.execute("PRAGMA user_version")[0][0])

    # -- settings --------------------------------------------------------------------------

    def get_setting(self, key: str, default: str | None = None) -> str | None:
        rows = self.execute("SELECT value FROM settings WHERE key = ?", (key,))
        return str(rows[0][0]) if rows else default

    def set_setting(self, key: str, value: str) -> None:
        with self.transaction():
            self.execute(
                "INSERT INTO settings(key, value) VALUES (?, ?) "
                "ON CONFLICT(key) DO UPDATE SET value = excluded.value",
                (key, value),
            )

    def settings(self) -> dict[str, str]:
        return {str(k): str(v) for k, v in self.execute("SELECT key, value FROM settings")}

    # -- entries ---------------------------------------------------------------------------

    def insert_entry(self, type: str, content: str, created_at: str, metadata: dict[str, Any]) -> int:
        """Insert one entry row (triggers index it for FTS and trigram; its CJK grams are indexed
        here, see :mod:`.cjk`). Call inside a transaction.

        An entry whose metadata names a ``thread`` joins that thread: its neighbours' text becomes
        its indexed context, and its own text joins the context of the entry before it.
        """
        thread = thread_of(metadata)
        self._forget_reads()
        self.execute(
            "INSERT INTO entries(type, content, created_at, metadata, content_hash, thread) VALUES (?, ?, ?, ?, ?, ?)",
            (type, content, created_at, json.dumps(metadata, sort_keys=True, ensure_ascii=False), content_hash(content), thread),
        )
        entry_id = int(self.conn.last_insert_rowid())
        cjk.index_entry(self, entry_id, content)  # CJK grams; the row goes with the entry (trigger)
        if thread is not None:
            previous = self.thread_neighbours(thread, entry_id)[0]
            self.refresh_context(entry_id)
            if previous is not None:
                self.refresh_context(previous)
        return entry_id

    def last_in_thread(self, thread: str) -> Entry | None:
        """The most recently written entry of a thread (the one a new entry follows)."""
        rows = self.execute(f"SELECT {ENTRY_COLUMNS} FROM entries WHERE thread = ? ORDER BY id DESC LIMIT 1", (thread,))
        return _row_to_entry(rows[0]) if rows else None

    def thread_neighbours(self, thread: str, entry_id: int) -> tuple[int | None, int | None]:
        """Ids of the entries just before and just after ``entry_id`` in its thread."""
        before = self.execute("SELECT max(id) FROM entries WHERE thread = ? AND id < ?", (thread, entry_id))[0][0]
        after = self.execute("SELECT min(id) FROM entries WHERE thread = ? AND id > ?", (thread, entry_id))[0][0]
        return (int(before) if before is not None else None, int(after) if after is not None else None)

    def refresh_context(self, entry_id: int) -> None:
        """Recompute an entry's indexed context: its thread neighbours' text (each capped)."""
        rows = self.execute("SELECT thread FROM entries WHERE id = ?", (entry_id,))
        if not rows or rows[0][0] is None:
            return
        parts = []
        for neighbour in self.thread_neighbours(str(rows[0][0]), entry_id):
            if neighbour is not None:
                text = self.execute("SELECT content FROM entries WHERE id = ?", (neighbour,))[0][0]
                parts.append(str(text)[:CONTEXT_CHARS])
        self._forget_reads()
        self.execute("UPDATE entries SET context = ? WHERE id = ?", ("\n".join(parts), entry_id))

    def find_duplicate(self, type: str, content: str, metadata: dict[str, Any]) -> int | None:
        """An existing entry with the same type, content and metadata, if any."""
        meta = json.dumps(metadata, sort_keys=True, ensure_ascii=False)
        rows = self.execute(
            "SELECT id FROM entries WHERE content_hash = ? AND type = ? AND metadata = ? LIMIT 1",
            (content_hash(content), type, meta),
        )
        return int(rows[0][0]) if rows else None

    def get_entries(self, ids: Sequence[int]) -> dict[int, Entry]:
        if not ids:
            return {}
        marks = ",".join("?" * len(ids))
        rows = self.execute(f"SELECT {ENTRY_COLUMNS} FROM entries WHERE id IN ({marks})", list(ids))
        return {int(r[0]): _row_to_entry(r) for r in rows}

    def get_entry(self, entry_id: int) -> Entry | None:
        return self.get_entries([entry_id]).get(entry_id)

    def iter_entries(self, order: str = "id") -> Iterator[Entry]:
        column = {"id": "id", "created_at": "created_at, id"}[order]
        try:
            for row in self.conn.execute(f"SELECT {ENTRY_COLUMNS} FROM entries ORDER BY {column}"):
                yield _row_to_entry(row)
        except apsw.Error as exc:
            raise store_error(exc, self.path, "reading entries") from exc

    def _statistics(self) -> dict[str, int]:
        """Entry count and term document frequencies read so far, while the database is unchanged.

        The relevance gate asks for them on every retrieval and a cold process can read them ahead,
        while its prefetch worker embeds the prompt. They are forgotten when this connection
        writes (:meth:`_forget_reads`) or another connection commits (SQLite's
        ``PRAGMA data_version``, which changes exactly then).
        """
        version = int(self.execute("PRAGMA data_version")[0][0])
        if version != self._stats_version:
            self._stats_version = version
            self._stats.clear()
        return self._stats

    def _forget_reads(self) -> None:
        """Drop everything read ahead or counted (statistics, read-ahead vectors): this connection
        is writing, or a transaction ended — nothing read before may be served after."""
        self._stats.clear()
        self._vectors_ahead = ("", {})

    def count_entries(self) -> int:
        stats = self._statistics()
        if "" not in stats:  # the empty string is never a term
            stats[""] = int(self.execute("SELECT count(*) FROM entries")[0][0])
        return stats[""]

    def recent_entries(self, limit: int, types: Sequence[str] | None = None, *, current_only: bool = False) -> list[Entry]:
        """Newest entries first, optionally of the given types (standing memories for SessionStart);
        ``current_only`` leaves out entries a later one superseded (``crib correct``)."""
        current = " AND superseded_by IS NULL" if current_only else ""
        if types:
            marks = ",".join("?" * len(types))
            rows = self.execute(
                f"SELECT {ENTRY_COLUMNS} FROM entries WHERE type IN ({marks}){current} ORDER BY created_at DESC, id DESC LIMIT ?",
                [*types, limit],
            )
        else:
            where = " WHERE superseded_by IS NULL" if current_only else ""
            rows = self.execute(f"SELECT {ENTRY_COLUMNS} FROM entries{where} ORDER BY created_at DESC, id DESC LIMIT ?", (limit,))
        return [_row_to_entry(r) for r in rows]

    def delete_entry(self, entry_id: int) -> bool:
        """Delete an entry and its vectors and queue rows. Call inside a transaction."""
        if not self.execute("SELECT 1 FROM entries WHERE id = ?", (entry_id,)):
            return False
        self._forget_reads()
        for (table,) in self.execute("SELECT table_name FROM vector_spaces"):
            self.load_vec()
            self.execute(f"DELETE FROM {table} WHERE rowid = ?", (entry_id,))
        self.execute("DELETE FROM pending_embeddings WHERE entry_id = ?", (entry_id,))
        thread = self.execute("SELECT thread FROM entries WHERE id = ?", (entry_id,))[0][0]
        neighbours = self.thread_neighbours(str(thread), entry_id) if thread is not None else (None, None)
        self.execute("DELETE FROM entries WHERE id = ?", (entry_id,))
        for neighbour in neighbours:
            if neighbour is not None:
                self.refresh_context(neighbour)
        return True

    # -- supersession (migration 4) ---------------------------------------------------------

    def supersede_entry(self, old_id: int, new_id: int) -> None:
        """Mark entry ``old_id`` as replaced by the newer ``new_id`` (kept, never deleted)."""
        if old_id == new_id:
            return
        self._forget_reads()
        self.execute("UPDATE entries SET superseded_by = ? WHERE id = ?", (new_id, old_id))

    def successor_of(self, entry_id: int) -> int | None:
        """The newest entry in ``entry_id``'s supersession chain, or ``None`` when it is current."""
        seen = {entry_id}
        current, newest = entry_id, None
        while True:
            rows = self.execute("SELECT superseded_by FROM entries WHERE id = ?", (current,))
            if not rows or rows[0][0] is None or int(rows[0][0]) in seen:
                return newest
            current = newest = int(rows[0][0])
            seen.add(current)

    def count_entries_between(self, start: str, end: str) -> int:
        """Entries written in ``[start, end)`` (ISO UTC): how selective a prompt's time window is."""
        return int(self.execute("SELECT count(*) FROM entries WHERE created_at >= ? AND created_at < ?", (start, end))[0][0])

    def superseded(self, ids: Sequence[int]) -> dict[int, int]:
        """For those of ``ids`` that were superseded, the id of the entry that superseded them."""
        if not ids:
            return {}
        marks = ",".join("?" * len(ids))
        rows = self.execute(
            f"SELECT id, superseded_by FROM entries WHERE id IN ({marks}) AND superseded_by IS NOT NULL", list(ids)
        )
        return {int(a): int(b) for a, b in rows}

    # -- full text -------------------------------------------------------------------------

    def fts_search(self, expression: str, limit: int) -> list[tuple[int, float]]:
        """Entries matching an FTS5 expression, best first, with a positive BM25 score.

        FTS5's ``bm25()`` is lower-is-better; it is negated here so every channel reports
        higher-is-better. The type column weighs a fifth of the content, the thread context half
        (``bench/locomo.py``: context at 0.5 lifts BM25 R@10 from 62.7 to 72.7).
        """
        rows = self.execute(
            f"SELECT rowid, -bm25(entries_fts, 1.0, {TYPE_WEIGHT}, {CONTEXT_WEIGHT}) AS score FROM entries_fts "
            "WHERE entries_fts MATCH ? ORDER BY score DESC LIMIT ?",
            (expression, limit),
        )
        return [(int(r[0]), float(r[1])) for r in rows]

    def term_document_frequency(self, stem: str) -> int:
        """How many entries contain the (stemmed) term, from the FTS index's own vocabulary."""
        stats = self._statistics()
        key = f"df:{stem}"
        if key not in stats:
            if not self._vocab_ready:
                self.execute("CREATE VIRTUAL TABLE IF NOT EXISTS temp.entries_fts_vocab USING fts5vocab(main, entries_fts, row)")
                self._vocab_ready = True
            rows = self.execute("SELECT doc FROM temp.entries_fts_vocab WHERE term = ?", (stem,))
            stats[key] = int(rows[0][0]) if rows else 0
        return stats[key]

    def trigram_search(self, expression: str, limit: int) -> list[tuple[int, float]]:
        rows = self.execute(
            "SELECT rowid, -bm25(entries_trigram) AS score FROM entries_trigram "
            "WHERE entries_trigram MATCH ? ORDER BY score DESC LIMIT ?",
            (expression, limit),
        )
        return [(int(r[0]), float(r[1])) for r in rows]

    def cjk_search(self, expression: str, limit: int) -> list[tuple[int, float]]:
        """Entries matching a CJK gram expression, best first, BM25 (see :mod:`.cjk`)."""
        return cjk.search(self, expression, limit)

    def like_search(self, terms: Sequence[str], limit: int) -> list[tuple[int, float]]:
        """Entries containing each of the short terms (CJK words under three characters).

        The score is the number of terms matched. Not indexed (it scans every row): the full-text
        channel uses :meth:`cjk_search` for short CJK terms instead.
        """
        if not terms:
            return []
        parts = []
        params: list[Any] = []
        for term in terms:
            escaped = term.replace("\\", "\\\\").replace("%", "\\%").replace("_", "\\_")
            parts.append("(content LIKE ? ESCAPE '\\')")
            params.append(f"%{escaped}%")
        score = " + ".join(parts)
        rows = self.execute(
            f"SELECT id, ({score}) AS s FROM entries WHERE ({' OR '.join(parts)}) ORDER BY s DESC, created_at DESC LIMIT ?",
            [*params, *params, limit],
        )
        return [(int(r[0]), float(r[1])) for r in rows]

    # -- vectors ---------------------------------------------------------------------------

    def vector_space(self, key: str) -> tuple[str, int] | None:
        """The vec0 table and dimension for an embedder identity, if vectors exist for it."""
        rows = self.execute("SELECT table_name, dim FROM vector_spaces WHERE key = ?", (key,))
        return (str(rows[0][0]), int(rows[0][1])) if rows else None

    def vector_spaces(self) -> dict[str, tuple[str, int]]:
        return {str(k): (str(t), int(d)) for k, t, d in self.execute("SELECT key, table_name, dim FROM vector_spaces")}

    def ensure_vector_space(self, key: str, dim: int) -> str:
        """Create (once) the cosine vec0 table for an embedder identity and return its name.

        Checked again under the write lock: two first writers must not both create it.
        """
        existing = self.vector_space(key)
        if existing:
            return existing[0]
        self.load_vec()
        table = _space_table(key)
        with self.transaction():
            existing = self.vector_space(key)
            if existing:
                return existing[0]
            self.execute(f"CREATE VIRTUAL TABLE IF NOT EXISTS {table} USING vec0(embedding float[{int(dim)}] distance_metric=cosine)")
            self.execute(
                "INSERT INTO vector_spaces(key, table_name, dim, created_at) VALUES (?, ?, ?, ?)",
                (key, table, int(dim), now_iso()),
            )
        return table

    def put_vector(self, table: str, entry_id: int, vector: bytes) -> None:
        """Store one float32 vector for an entry (replacing any). Call inside a transaction."""
        self.load_vec()
        self._forget_reads()  # never serve a blob read before this write
        self.execute(f"DELETE FROM {table} WHERE rowid = ?", (entry_id,))
        self.execute(f"INSERT INTO {table}(rowid, embedding) VALUES (?, ?)", (entry_id, vector))

    def vector_search(self, table: str, vector: bytes, k: int) -> list[tuple[int, float]]:
        """The ``k`` nearest entries by cosine distance (0 = same direction, 2 = opposite)."""
        self.load_vec()
        rows = self.execute(
            f"SELECT rowid, distance FROM {table} WHERE embedding MATCH ? AND k = ? ORDER BY distance",
            (vector, int(k)),
        )
        return [(int(r[0]), float(r[1])) for r in rows]

    def vector_similarities(self, table: str, ids: Sequence[int]) -> tuple[list[int], list[list[float]]]:
        """Pairwise cosine similarity of the stored vectors of ``ids``, computed inside SQLite.

        Returns ``(have, sims)``: ``have`` is the ids that have a vector in ``table`` (in the order
        given, repeats dropped) and ``sims[i][j]`` the cosine similarity of ``have[i]`` and
        ``have[j]`` (``1 − vec_distance_cosine``; 1.0 on the diagonal; 0.0 when either vector is
        all zeros, which has no direction). The offline reranker calls this for at most 60 ids.

        Why here and like this: the per-prompt process must not import numpy (≈120 ms), so the
        arithmetic runs in sqlite-vec's C code. The vectors are fetched with one point lookup per
        id (``WHERE rowid = ?``), in id order so neighbouring lookups share cached pages, because
        vec0 answers ``rowid IN (...)`` with a scan of the whole table. The fetched blobs are bound
        into one ``VALUES`` list and self-joined, so nothing is written, not even to the temp
        schema. ``O(len(ids)²)`` distance calls: meant for small sets.
        """
        wanted = list(dict.fromkeys(int(i) for i in ids))
        blobs = self.stored_vectors(table, wanted)
        have = [i for i in wanted if i in blobs]
        position = {entry_id: k for k, entry_id in enumerate(have)}
        sims = [[0.0] * len(have) for _ in have]
        for k in range(len(have)):
            sims[k][k] = 1.0
        if len(have) < 2:
            return have, sims
        values = ",".join("(?, ?)" for _ in have)
        bindings: list[Any] = []
        for entry_id in have:
            bindings += [entry_id, blobs[entry_id]]
        rows = self.execute(
            f"WITH v(id, e) AS (VALUES {values}) "
            "SELECT a.id, b.id, vec_distance_cosine(a.e, b.e) FROM v AS a JOIN v AS b ON a.id < b.id",
            bindings,
        )
        for a, b, distance in rows:
            # A zero vector gives NULL (sqlite-vec's 0/0 is NaN, which SQLite returns as NULL): 0.0.
            similarity = 1.0 - float(distance) if distance is not None else 0.0
            if similarity != similarity:  # NaN, should a build return it as a float
                similarity = 0.0
            i, j = position[int(a)], position[int(b)]
            sims[i][j] = sims[j][i] = similarity
        return have, sims

    def stored_vectors(self, table: str, ids: Sequence[int]) -> dict[int, bytes]:
        """The stored float32 blobs of ``ids`` in ``table`` (ids without a vector are absent).

        One point lookup per id (``WHERE rowid = ?``), in id order so neighbouring lookups share
        cached pages: vec0 answers ``rowid IN (...)`` with a scan of the whole table. Blobs read
        ahead by :meth:`prefetch_vectors` are used once, then forgotten.
        """
        self.load_vec()
        ahead_table, ahead = self._vectors_ahead
        self._vectors_ahead = ("", {})
        blobs: dict[int, bytes] = {}
        for entry_id in sorted(set(int(i) for i in ids)):
            if ahead_table == table and entry_id in ahead:
                blobs[entry_id] = ahead[entry_id]
                continue
            rows = self.execute(f"SELECT embedding FROM {table} WHERE rowid = ?", (entry_id,))
            if rows and rows[0][0] is not None:
                blobs[entry_id] = rows[0][0]
        return blobs

    def prefetch_vectors(self, table: str, ids: Sequence[int]) -> None:
        """Read the vectors of ``ids`` now, for the next :meth:`stored_vectors` call only.

        A cold ``crib retrieve`` calls it while its prefetch worker is still embedding the prompt
        (:mod:`crib_plugin.prefetch`), for the full-text and fact hits the reranker will compare.
        """
        blobs = self.stored_vectors(table, ids)
        self._vectors_ahead = (table, blobs)

    def vector_count(self, table: str) -> int:
        self.load_vec()
        return int(self.execute(f"SELECT count(*) FROM {table}")[0][0])

    def entries_without_vector(self, table: str) -> list[int]:
        self.load_vec()
        rows = self.execute(f"SELECT id FROM entries WHERE id NOT IN (SELECT rowid FROM {table}) ORDER BY id")
        return [int(r[0]) for r in rows]

    # -- pending embeddings ----------------------------------------------------------------

    def queue_embedding(self, entry_id: int, space: str, reason: str) -> None:
        self.execute(
            "INSERT INTO pending_embeddings(entry_id, space, reason, queued_at) VALUES (?, ?, ?, ?) "
            "ON CONFLICT(entry_id, space) DO UPDATE SET reason = excluded.reason",
            (entry_id, space, reason[:500], now_iso()),
        )

    def pending(self, space: str | None = None) -> list[int]:
        """Entries queued for an embedding (in ``space``, or any space); ``EXTRACT_QUEUE`` for facts."""
        if space is None:
            rows = self.execute(
                "SELECT DISTINCT entry_id FROM pending_embeddings WHERE space != ? ORDER BY entry_id", (EXTRACT_QUEUE,)
            )
        else:
            rows = self.execute("SELECT entry_id FROM pending_embeddings WHERE space = ? ORDER BY entry_id", (space,))
        return [int(r[0]) for r in rows]

    def clear_pending(self, entry_id: int, space: str) -> None:
        self.execute("DELETE FROM pending_embeddings WHERE entry_id = ? AND space = ?", (entry_id, space))

    def pending_counts(self) -> dict[str, int]:
        """Queued work per kind: ``embedding:<space>`` and ``extraction`` (for ``crib doctor``)."""
        rows = self.execute("SELECT space, count(*) FROM pending_embeddings GROUP BY space ORDER BY space")
        return {("extraction" if space == EXTRACT_QUEUE else f"embedding:{space}"): int(n) for space, n in rows}


def sqlite_capabilities() -> dict[str, Any]:
    """What the bundled SQLite can do: version, FTS5, trigram, sqlite-vec (for ``crib doctor``)."""
    info: dict[str, Any] = {"binding": "apsw", "binding_version": apsw.apsw_version(), "sqlite_version": apsw.sqlite_lib_version()}
    conn = apsw.Connection(":memory:")
    try:
        for name, sql in (
            ("fts5", "CREATE VIRTUAL TABLE t1 USING fts5(x, tokenize='porter unicode61')"),
            ("trigram", "CREATE VIRTUAL TABLE t2 USING fts5(x, tokenize='trigram')"),
        ):
            try:
                conn.execute(sql)
                info[name] = True
            except apsw.Error as exc:
                info[name] = False
                info[f"{name}_error"] = str(exc)
        try:
            conn.enable_load_extension(True)
            conn.load_extension(vec_extension_path())
            info["sqlite_vec"] = str(list(conn.execute("SELECT vec_version()"))[0][0])
            conn.execute("CREATE VIRTUAL TABLE v USING vec0(embedding float[4] distance_metric=cosine)")
            info["vec0_cosine"] = True
        except (apsw.Error, ExtensionError) as exc:
            info["sqlite_vec"] = None
            info["sqlite_vec_error"] = str(exc)
    finally:
        conn.close()
    import sqlite3  # stdlib, only to report the trap crib avoids

    info["stdlib_sqlite3_can_load_extensions"] = hasattr(sqlite3.Connection, "enable_load_extension")
    return info


def _connect(target: str, flags: int, timeout: float) -> apsw.Connection:
    conn = apsw.Connection(target, flags=flags)
    conn.setbusyhandler(BusyHandler(timeout))
    conn.execute("PRAGMA foreign_keys = ON")
    return conn


def _busy_timeout() -> float:
    from ..config import busy_timeout

    return busy_timeout()


def _open_readonly(path: Path, timeout: float) -> apsw.Connection:
    """A read-only connection; ``immutable=1`` when SQLite cannot open the WAL index read-only
    (a WAL store in a read-only directory, with no ``-shm`` file: nobody can be writing it)."""
    try:
        conn = _connect(str(path), apsw.SQLITE_OPEN_READONLY, timeout)
        conn.execute("PRAGMA user_version")  # opens the file for real (and the WAL index)
        return conn
    except apsw.CantOpenError:
        from urllib.parse import quote

        uri = f"file:{quote(str(path.resolve()))}?immutable=1"
        return _connect(uri, apsw.SQLITE_OPEN_READONLY | apsw.SQLITE_OPEN_URI, timeout)


def _create_atomically(path: Path, timeout: float) -> None:
    """Create a fully migrated store at ``path`` unless one appears there first.

    The store is built beside it under a temporary name and linked into place (``os.link`` fails
    when the name exists), so a concurrent opener sees either no file or a complete store — never
    an empty file or half a schema (8 simultaneous first writes used to fail 31 times in 40).
    """
    import tempfile

    path.parent.mkdir(parents=True, exist_ok=True)
    fd, tmp_name = tempfile.mkstemp(prefix=f".{path.name}.", suffix=".new", dir=path.parent)
    os.close(fd)
    tmp = Path(tmp_name)
    try:
        conn = _connect(str(tmp), apsw.SQLITE_OPEN_READWRITE, timeout)
        try:
            conn.execute("PRAGMA journal_mode = WAL")
            SQLiteStore(tmp, conn).migrate()
        finally:
            conn.close()
        try:
            os.link(tmp, path)
        except FileExistsError:
            pass  # another process created it first: use theirs
        except OSError:  # a filesystem without hard links: rename, unless someone beat us
            if not path.exists():
                os.replace(tmp, path)
    finally:
        for leftover in (tmp, Path(f"{tmp}-wal"), Path(f"{tmp}-shm")):
            try:
                leftover.unlink()
            except FileNotFoundError:
                pass


def _check_store(store: SQLiteStore, readonly: bool) -> None:
    """Refuse a file that is not a crib store, is too new, or (read-only) would need migrating."""
    path = store.path
    version = store.schema_version()
    if version > latest_version():
        raise StoreTooNew(f"{path} has schema version {version}, newer than this crib knows ({latest_version()}); upgrade crib")
    tables = {str(r[0]) for r in store.execute("SELECT name FROM sqlite_master WHERE type IN ('table', 'view')")}
    if version == 0 and tables:
        shown = ", ".join(sorted(tables)[:5])
        raise NotACribStore(f"{path} is a SQLite database that crib did not create (tables: {shown}); crib left it untouched")
    if version == 0 and (readonly or path.stat().st_size == 0):
        raise NotACribStore(f"{path} {describe_file(path) or 'is an empty SQLite database, not a crib store'}; crib left it untouched")
    if version > 0 and "entries" not in tables:
        raise NotACribStore(f"{path} is a SQLite database with user_version {version} but no crib tables; crib left it untouched")
    if readonly and version < latest_version():
        raise StoreOutdated(f"{path} has schema version {version}, older than this crib's {latest_version()}; run `crib init` to upgrade it (read commands never migrate)")


def open_store(path: Path | str, *, create: bool = True, migrate: bool = True, readonly: bool = False) -> SQLiteStore:
    """Open (and by default create and migrate) the database at ``path``.

    With ``create=False`` a missing file raises StoreError instead of being created — retrieval
    must never leave an empty database behind. With ``readonly=True`` the file is opened
    read-only: nothing is created, migrated or switched to WAL, and a read-only file or directory
    can still be read. Every failure is one :class:`StoreError` subclass naming the cause, and the
    file is left as it was.
    """
    path = Path(path)
    timeout = _busy_timeout()
    if not path.exists():
        if not create or readonly:
            raise StoreError(f"no crib database at {path}")
        try:
            from .dirs import prepare_store_dir

            prepare_store_dir(path)  # the folder, and a .gitignore inside .state/crib
            _create_atomically(path, timeout)
        except apsw.Error as exc:
            raise store_error(exc, path, "creating the database") from exc
        except OSError as exc:
            raise StoreReadOnly(f"cannot create crib database {path}: {exc.strerror or exc}") from exc
    if path.is_dir():
        raise NotACribStore(f"{path} is a directory, not a crib database")
    try:
        if readonly:
            conn = _open_readonly(path, timeout)
        else:
            conn = _connect(str(path), apsw.SQLITE_OPEN_READWRITE, timeout)
    except apsw.Error as exc:
        if not readonly and isinstance(exc, (apsw.ReadOnlyError, apsw.CantOpenError, apsw.PermissionsError)):
            raise StoreReadOnly(f"cannot open {path} for writing: the file or its directory is read-only") from exc
        raise store_error(exc, path, "opening") from exc
    store = SQLiteStore(path, conn, readonly=readonly)
    try:
        _check_store(store, readonly)
        if not readonly:
            try:
                conn.execute("PRAGMA journal_mode = WAL")  # a no-op on crib's own stores
                conn.execute("PRAGMA synchronous = NORMAL")
            except apsw.Error as exc:
                raise store_error(exc, path, "opening for writing") from exc
            if migrate and store.schema_version() < latest_version():
                store.migrate()
    except StoreError:
        store.close()
        raise
    except apsw.Error as exc:
        store.close()
        raise store_error(exc, path, "opening") from exc
    return store
