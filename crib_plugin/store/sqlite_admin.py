"""SQLite statements for settings, the audit log, listing, counting and secure forgetting.

A mixin of :class:`~crib_plugin.store.sqlite.SQLiteStore`: it holds the SQL that ``manage``,
``memory``, ``calibrate``, ``scoped`` and the CLI used to spell themselves, behind the named
methods of :class:`~crib_plugin.store.base.Store`. Setting keys (``embedder``, ``gate:<key>``,
``floor:<key>``, ``fusion_weights``) are spelled here and nowhere else.
"""

from __future__ import annotations

import json
from collections.abc import Sequence
from typing import TYPE_CHECKING, Any

from ..core.timeutil import now_iso
from .records import AuditRow, EntryVersion, StoreCounts
from .sqlite_rows import EXTRACT_QUEUE, row_to_entry

if TYPE_CHECKING:  # pragma: no cover  (the rows load with the first management read, not with every store)
    from contextlib import AbstractContextManager

    from ..core.records import Entry
    from .records import AuditRow, EntryVersion, StoreCounts

EMBEDDER_KEY = "embedder"
FUSION_WEIGHTS_KEY = "fusion_weights"
# The full-text indexes whose deleted rows are merged away after a forget, so the forgotten words
# are gone from their segments too, not only hidden by a delete marker.
FTS_TABLES = ("entries_fts", "entries_trigram", "entries_cjk", "entries_cue")
VERSION_COLUMNS = "id, type, content, created_at, metadata, content_hash, project, superseded_by"


def _version(row: Sequence[Any]) -> EntryVersion:
    return EntryVersion(row_to_entry(row[:7]), int(row[7]) if row[7] is not None else None)


class AdminMixin:
    """Settings, audit, listing and counting for :class:`SQLiteStore` (see the module docstring)."""

    if TYPE_CHECKING:  # provided by SQLiteStore

        def execute(self, sql: str, bindings: Sequence[Any] | dict[str, Any] = ()) -> list[tuple[Any, ...]]: ...
        def transaction(self) -> AbstractContextManager[None]: ...
        def load_vec(self) -> None: ...
        def get_entry(self, entry_id: int) -> Entry | None: ...

    # -- named settings ------------------------------------------------------------------------

    def integrity_problems(self, limit: int = 10) -> list[str]:
        """What SQLite's ``PRAGMA quick_check`` finds wrong with the file's pages and tables
        (the vector tables and their shadow tables included): ``[]`` for a sound store. For
        ``crib doctor``: it reads every page once."""
        try:
            rows = self.execute(f"PRAGMA quick_check({int(limit)})")
        except Exception as exc:  # noqa: BLE001 -- a page so damaged the check itself stops (apsw or StoreError)
            return [str(exc)]
        return [str(r[0]) for r in rows if str(r[0]) != "ok"]

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

    def embedder_name(self) -> str | None:
        return self.get_setting(EMBEDDER_KEY)

    def set_embedder_name(self, name: str) -> None:
        self.set_setting(EMBEDDER_KEY, name)

    def _float_setting(self, key: str) -> float | None:
        raw = self.get_setting(key)
        return float(raw) if raw is not None else None

    def gate(self, embedder_key: str) -> float | None:
        return self._float_setting(f"gate:{embedder_key}")

    def set_gate(self, embedder_key: str, value: float) -> None:
        self.set_setting(f"gate:{embedder_key}", f"{value:.4f}")

    def clear_gate(self, embedder_key: str) -> None:
        with self.transaction():
            self.execute("DELETE FROM settings WHERE key = ?", (f"gate:{embedder_key}",))

    def vector_floor(self, embedder_key: str) -> float | None:
        return self._float_setting(f"floor:{embedder_key}")

    def set_vector_floor(self, embedder_key: str, value: float) -> None:
        self.set_setting(f"floor:{embedder_key}", f"{value:.4f}")

    def fusion_weights(self) -> dict[str, float]:
        raw = self.get_setting(FUSION_WEIGHTS_KEY)
        return {str(k): float(v) for k, v in json.loads(raw).items()} if raw else {}

    def set_fusion_weights(self, weights: dict[str, float]) -> None:
        self.set_setting(FUSION_WEIGHTS_KEY, json.dumps(weights, sort_keys=True))

    # -- audit -------------------------------------------------------------------------------------

    def record_audit(self, action: str, entry_id: int | None, detail: dict[str, Any]) -> None:
        self.execute(
            "INSERT INTO audit(at, action, entry_id, detail) VALUES (?, ?, ?, ?)",
            (now_iso(), action, entry_id, json.dumps(detail, ensure_ascii=False, sort_keys=True)),
        )

    # the SQL reading one text field of a JSON column ({column}, {key}): the PostgreSQL store overrides it
    JSON_FIELD = "json_extract({column}, '$.{key}')"

    def audit_rows(self, limit: int = 50, entry_id: int | None = None, *, project: str | None = None) -> list[AuditRow]:
        clauses: list[str] = []
        args: list[Any] = []
        if entry_id is not None:
            clauses.append("entry_id = ?")
            args.append(entry_id)
        if project is not None:  # rows recorded from that project, and rows that name none
            field = self.JSON_FIELD.format(column="detail", key="project")
            clauses.append(f"({field} = ? OR {field} IS NULL)")
            args.append(project)
        where = f"WHERE {' AND '.join(clauses)}" if clauses else ""
        rows = self.execute(f"SELECT id, at, action, entry_id, detail FROM audit {where} ORDER BY id DESC LIMIT ?", [*args, limit])

        return [AuditRow(int(r[0]), str(r[1]), str(r[2]), None if r[3] is None else int(r[3]), json.loads(r[4] or "{}")) for r in rows]

    def forgotten_hashes(self) -> set[str]:
        field = self.JSON_FIELD.format(column="detail", key="content_hash")
        return {str(r[0]) for r in self.execute(f"SELECT {field} FROM audit WHERE action = 'forget' AND {field} IS NOT NULL")}

    # -- listing -----------------------------------------------------------------------------------

    def list_versions(
        self, *, types: Sequence[str] = (), since: str | None = None, until: str | None = None,
        limit: int | None = None, include_superseded: bool = True, project: str | None = None,
    ) -> list[EntryVersion]:
        clauses: list[str] = []
        args: list[Any] = []
        if project is not None:  # that project's entries and those of no recorded project
            clauses.append("(project = ? OR project IS NULL)")
            args.append(project)
        if types:
            clauses.append(f"type IN ({','.join('?' * len(types))})")
            args.extend(types)
        if since:
            clauses.append("created_at >= ?")
            args.append(since)
        if until:
            clauses.append("created_at <= ?")
            args.append(until)
        if not include_superseded:
            clauses.append("superseded_by IS NULL")
        where = f"WHERE {' AND '.join(clauses)}" if clauses else ""
        tail = " LIMIT ?" if limit is not None else ""
        if limit is not None:
            args.append(int(limit))
        rows = self.execute(f"SELECT {VERSION_COLUMNS} FROM entries {where} ORDER BY created_at DESC, id DESC{tail}", args)
        return [_version(r) for r in rows]

    def entry_version(self, entry_id: int) -> EntryVersion | None:
        rows = self.execute(f"SELECT {VERSION_COLUMNS} FROM entries WHERE id = ?", (entry_id,))
        return _version(rows[0]) if rows else None

    def superseded_by_entry(self, entry_id: int) -> list[EntryVersion]:
        rows = self.execute(f"SELECT {VERSION_COLUMNS} FROM entries WHERE superseded_by = ? ORDER BY id", (entry_id,))
        return [_version(r) for r in rows]

    def counts(self) -> StoreCounts:
        one = lambda sql: int(self.execute(sql)[0][0])
        by_type = {str(t): int(n) for t, n in self.execute("SELECT type, count(*) FROM entries GROUP BY type ORDER BY type")}
        first, last = self.execute("SELECT min(created_at), max(created_at) FROM entries")[0]
        return StoreCounts(
            entries=one("SELECT count(*) FROM entries"),
            by_type=by_type,
            superseded=one("SELECT count(*) FROM entries WHERE superseded_by IS NOT NULL"),
            facts=one("SELECT count(*) FROM relations WHERE valid_until IS NULL"),
            fact_versions=one("SELECT count(*) FROM relations"),
            entities=one("SELECT count(*) FROM entities"),
            pending=one("SELECT count(*) FROM pending_embeddings"),
            audit_rows=one("SELECT count(*) FROM audit"),
            first=first,
            last=last,
        )

    # -- vectors in bulk and the queue -------------------------------------------------------------

    def all_vectors(self, table: str) -> list[tuple[int, bytes]]:
        self.load_vec()
        return [(int(r[0]), bytes(r[1])) for r in self.execute(f"SELECT rowid, embedding FROM {table}")]

    def clear_embedded_pending(self, table: str) -> None:
        self.load_vec()
        self.execute(
            f"DELETE FROM pending_embeddings WHERE space != ? AND entry_id IN (SELECT rowid FROM {table})", (EXTRACT_QUEUE,)
        )

    # -- secure forgetting -------------------------------------------------------------------------

    def begin_secure_delete(self) -> None:
        self.execute("PRAGMA secure_delete = ON")  # freed pages are zeroed, not left holding the text

    def unsupersede(self, entry_id: int) -> None:
        self.execute("UPDATE entries SET superseded_by = NULL WHERE superseded_by = ?", (entry_id,))

    def purge_deleted_text(self) -> None:
        with self.transaction():
            for table in FTS_TABLES:
                if self.execute("SELECT 1 FROM sqlite_master WHERE name = ?", (table,)):
                    self.execute(f"INSERT INTO {table}({table}) VALUES ('optimize')")
        # the write-ahead log still holds the pages as they were written: copy it back and empty it
        # (a reader holding an old snapshot can delay this; the next checkpoint finishes it)
        self.execute("PRAGMA wal_checkpoint(TRUNCATE)")
