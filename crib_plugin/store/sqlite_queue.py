"""The work queue of the SQLite store: entries waiting for an embedding or for fact extraction.

A mixin of :class:`~crib_plugin.store.sqlite.SQLiteStore`; one ``pending_embeddings`` table holds
both kinds of work (extraction under :data:`~crib_plugin.store.sqlite_rows.EXTRACT_QUEUE`).
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import TYPE_CHECKING, Any

from ..core.timeutil import now_iso
from .sqlite_rows import EXTRACT_QUEUE


class QueueMixin:
    """The work queue of the SQLite store: entries waiting for an embedding or for fact extraction."""

    if TYPE_CHECKING:  # provided by SQLiteStore

        def execute(self, sql: str, bindings: Sequence[Any] | dict[str, Any] = ()) -> list[tuple[Any, ...]]: ...

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
