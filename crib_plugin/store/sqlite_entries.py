"""Entry rows for the SQLite store: insert, threads and their context, duplicates, supersession.

A mixin of :class:`~crib_plugin.store.sqlite.SQLiteStore`. It also keeps the per-connection read
statistics (entry count, term frequencies) that full-text scoring uses and a write forgets.
"""

from __future__ import annotations

import json
from collections.abc import Iterator, Sequence
from typing import TYPE_CHECKING, Any

import apsw

from ..core import authorship
from ..core.records import Entry
from . import cjk
from .records import thread_of
from .sqlite_open import store_error
from .sqlite_rows import CONTEXT_CHARS, ENTRY_COLUMNS, ENTRY_ROW, content_hash, row_to_entry

if TYPE_CHECKING:  # pragma: no cover
    from contextlib import AbstractContextManager
    from pathlib import Path


class EntriesMixin:
    """Entry rows for the SQLite store: insert, threads and their context, duplicates, supersession."""

    COUNT_SQL = "SELECT n FROM entry_count WHERE id = 1"
    """The entry count, kept by triggers (migration 5): a cold ``count(*)`` reads a whole index."""

    if TYPE_CHECKING:  # provided by SQLiteStore

        conn: apsw.Connection
        path: Path
        _stats: dict[str, int]
        _stats_version: int | None
        _vectors_ahead: tuple[str, dict[int, bytes]]

        def load_vec(self) -> None: ...
        def execute(self, sql: str, bindings: Sequence[Any] | dict[str, Any] = ()) -> list[tuple[Any, ...]]: ...
        def transaction(self) -> AbstractContextManager[None]: ...

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
            "INSERT INTO entries(type, content, created_at, metadata, content_hash, thread, project) VALUES (?, ?, ?, ?, ?, ?, ?)",
            (type, content, created_at, json.dumps(metadata, sort_keys=True, ensure_ascii=False), content_hash(content), thread,
             authorship.project()),
        )
        entry_id = int(self.conn.last_insert_rowid())
        cjk.index_entry(self, entry_id, content)  # CJK grams; the row goes with the entry (trigger)
        self._join_thread(thread, entry_id)
        return entry_id

    def _join_thread(self, thread: str | None, entry_id: int) -> None:
        """A new entry's thread context, and its text in the context of the entry before it."""
        if thread is None:
            return
        previous = self.thread_neighbours(thread, entry_id)[0]
        self.refresh_context(entry_id)
        if previous is not None:
            self.refresh_context(previous)

    def copy_entry_row(self, row: Sequence[Any]) -> None:
        """Insert an entry exactly as another store holds it (:data:`ENTRY_ROW`, id and context
        included) and index it (``crib migrate``; :mod:`.transfer`). Inside a transaction."""
        self._forget_reads()
        self.execute(f"INSERT INTO entries({ENTRY_ROW}) VALUES ({','.join('?' * len(row))})", list(row))
        cjk.index_entry(self, int(row[0]), str(row[2]))

    def after_copy(self) -> None:
        """Nothing to do once a copy is complete: AUTOINCREMENT already follows the ids copied."""

    def last_in_thread(self, thread: str) -> Entry | None:
        """The most recently written entry of a thread (the one a new entry follows)."""
        rows = self.execute(f"SELECT {ENTRY_COLUMNS} FROM entries WHERE thread = ? ORDER BY id DESC LIMIT 1", (thread,))
        return row_to_entry(rows[0]) if rows else None

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

    def find_same_text(self, content: str, limit: int = 20) -> list[int]:
        rows = self.execute(
            "SELECT id FROM entries WHERE content_hash = ? AND superseded_by IS NULL ORDER BY id DESC LIMIT ?",
            (content_hash(content), limit),
        )
        return [int(r[0]) for r in rows]

    def get_entries(self, ids: Sequence[int]) -> dict[int, Entry]:
        if not ids:
            return {}
        marks = ",".join("?" * len(ids))
        rows = self.execute(f"SELECT {ENTRY_COLUMNS} FROM entries WHERE id IN ({marks})", list(ids))
        return {int(r[0]): row_to_entry(r) for r in rows}

    def get_entry(self, entry_id: int) -> Entry | None:
        return self.get_entries([entry_id]).get(entry_id)

    def iter_entries(self, order: str = "id") -> Iterator[Entry]:
        column = {"id": "id", "created_at": "created_at, id"}[order]
        try:
            for row in self.conn.execute(f"SELECT {ENTRY_COLUMNS} FROM entries ORDER BY {column}"):
                yield row_to_entry(row)
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
            stats[""] = int(self.execute(self.COUNT_SQL)[0][0])
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
        return [row_to_entry(r) for r in rows]

    def delete_entry(self, entry_id: int) -> bool:
        """Delete an entry and its vectors and queue rows, and refresh its thread neighbours'
        context. Call inside a transaction."""
        rows = self.execute("SELECT thread FROM entries WHERE id = ?", (entry_id,))
        if not rows:
            return False
        self._forget_reads()
        self._delete_dependents(entry_id)
        thread = rows[0][0]
        neighbours = self.thread_neighbours(str(thread), entry_id) if thread is not None else (None, None)
        self.execute("DELETE FROM entries WHERE id = ?", (entry_id,))
        for neighbour in neighbours:
            if neighbour is not None:
                self.refresh_context(neighbour)
        return True

    def _delete_dependents(self, entry_id: int) -> None:
        """The entry's rows in the vec0 tables and the queue (no foreign key reaches a virtual table)."""
        for (table,) in self.execute("SELECT table_name FROM vector_spaces"):
            self.load_vec()
            self.execute(f"DELETE FROM {table} WHERE rowid = ?", (entry_id,))
        self.execute("DELETE FROM pending_embeddings WHERE entry_id = ?", (entry_id,))

    # -- supersession (migration 4) ---------------------------------------------------------

    def count_with_metadata(self, key: str) -> int:
        return int(self.execute("SELECT count(*) FROM entries WHERE json_extract(metadata, '$.' || ?) IS NOT NULL", (key,))[0][0])

    def set_metadata(self, entry_id: int, metadata: dict[str, Any]) -> bool:
        if not self.execute("SELECT 1 FROM entries WHERE id = ?", (entry_id,)):
            return False
        self._forget_reads()
        self.execute("UPDATE entries SET metadata = ? WHERE id = ?", (json.dumps(metadata, sort_keys=True, ensure_ascii=False), entry_id))
        return True

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

    def entry_ids_between(self, start: str, end: str, types: Sequence[str] | None = None, limit: int = 50) -> list[int]:
        """Ids of the entries written in ``[start, end)``, of ``types`` when given, newest first."""
        kinds = list(types or ())
        where = f" AND type IN ({','.join('?' * len(kinds))})" if kinds else ""
        rows = self.execute(
            f"SELECT id FROM entries WHERE created_at >= ? AND created_at < ?{where} ORDER BY created_at DESC, id DESC LIMIT ?",
            (start, end, *kinds, int(limit)),
        )
        return [int(r[0]) for r in rows]

    def superseded(self, ids: Sequence[int]) -> dict[int, int]:
        """For those of ``ids`` that were superseded, the id of the entry that superseded them."""
        if not ids:
            return {}
        marks = ",".join("?" * len(ids))
        rows = self.execute(
            f"SELECT id, superseded_by FROM entries WHERE id IN ({marks}) AND superseded_by IS NOT NULL", list(ids)
        )
        return {int(a): int(b) for a, b in rows}
