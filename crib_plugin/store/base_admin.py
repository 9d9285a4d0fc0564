"""Settings, audit and counts: the administrative part of the :class:`~crib_plugin.store.base.Store` contract.

Settings are named methods, never key strings: how a backend stores them is its own affair.
"""

from __future__ import annotations

from typing import Any, Protocol

from .records import AuditRow, StoreCounts


class Settings(Protocol):
    """Per-store choices recorded once (the embedder) or by calibration (gate, floor, weights)."""

    def embedder_name(self) -> str | None:
        """The embedder whose vectors the store holds (recorded at first use), or ``None``."""
        ...

    def set_embedder_name(self, name: str) -> None:
        """Record the store's embedder (``crib reindex --embedder`` switches it)."""
        ...

    def gate(self, embedder_key: str) -> float | None:
        """The calibrated vector relevance gate for an embedder, or ``None`` (use the default)."""
        ...

    def set_gate(self, embedder_key: str, value: float) -> None:
        """Store a calibrated gate (kept to 4 decimals)."""
        ...

    def clear_gate(self, embedder_key: str) -> None:
        """Forget the calibrated gate (``crib calibrate --reset``)."""
        ...

    def vector_floor(self, embedder_key: str) -> float | None:
        """The calibrated per-hit cosine floor for an embedder, or ``None``."""
        ...

    def set_vector_floor(self, embedder_key: str, value: float) -> None:
        """Store a calibrated per-hit floor (kept to 4 decimals)."""
        ...

    def fusion_weights(self) -> dict[str, float]:
        """Per-channel fusion weights stored for this store (empty: the defaults)."""
        ...

    def set_fusion_weights(self, weights: dict[str, float]) -> None:
        """Store per-channel fusion weights (replacing any)."""
        ...


class Audit(Protocol):
    """An append-only log of changes; rows never hold a memory's text."""

    def record_audit(self, action: str, entry_id: int | None, detail: dict[str, Any]) -> None:
        """Append one row (``detail`` must be JSON-serialisable). Inside the change's transaction."""
        ...

    def audit_rows(self, limit: int = 50, entry_id: int | None = None, *, project: str | None = None) -> list[AuditRow]:
        """Rows newest first, optionally only those about ``entry_id``, and only those recorded from
        ``project`` (and those naming no project)."""
        ...

    def forgotten_hashes(self) -> set[str]:
        """The content hashes of every entry ever forgotten (from the audit's ``forget`` rows): what an
        import must not bring back."""
        ...

    def counts(self) -> StoreCounts:
        """What ``crib stats`` reports: entries by type, facts, entities, queue and audit sizes."""
        ...

    def storage_bytes(self) -> int:
        """Bytes the store occupies: the database file and its write-ahead log on SQLite; on a
        server, the total size (tables, indexes, TOAST) of crib's tables in its schema."""
        ...
