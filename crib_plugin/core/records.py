"""Plain records that travel along the data path (write → store → channels → fusion → render).

They are dataclasses so every stage can be tested on its own with literal values.
"""

from __future__ import annotations

from dataclasses import dataclass, field, replace
from typing import Any

from .entry_types import builtin_names

ENTRY_TYPES = builtin_names()  # crib's own types; their meanings live in entry_types.py (plugins may add more)


@dataclass
class Entry:
    """One stored memory: a row of ``entries``."""

    id: int
    type: str
    content: str
    created_at: str  # ISO 8601, UTC, "YYYY-MM-DDTHH:MM:SSZ"
    metadata: dict[str, Any] = field(default_factory=dict)
    content_hash: str = ""
    scope: str = ""  # "project" / "global" once a read merged both stores (crib_plugin.hosts.scoped)
    superseded_by: int | None = None  # set on injection when a later entry replaced this one
    project: str | None = None  # the repository it was written from (None: written before crib recorded it)

    def to_json(self) -> dict[str, Any]:
        data = {
            "id": self.id,
            "type": self.type,
            "content": self.content,
            "created_at": self.created_at,
            "metadata": self.metadata,
        }
        if self.scope:
            data["scope"] = self.scope
        return data


@dataclass(frozen=True)
class Triple:
    """A fact as an extractor states it, before entity normalisation."""

    subject: str
    predicate: str
    object: str


@dataclass
class Fact:
    """A stored relation with its validity interval and the entries that stated it."""

    id: int
    subject: str
    predicate: str
    object: str
    valid_from: str
    valid_until: str | None = None
    source_entry_ids: list[int] = field(default_factory=list)
    score: float = 0.0

    @property
    def current(self) -> bool:
        return self.valid_until is None

    def to_json(self) -> dict[str, Any]:
        return {
            "id": self.id,
            "subject": self.subject,
            "predicate": self.predicate,
            "object": self.object,
            "valid_from": self.valid_from,
            "valid_until": self.valid_until,
            "sources": self.source_entry_ids,
        }


@dataclass
class Query:
    """A prompt prepared once for every channel."""

    text: str
    keywords: list[str] = field(default_factory=list)
    fts_expression: str = ""  # sanitised FTS5 MATCH expression ("" → channel has nothing to match)
    cjk: bool = False
    cjk_terms: list[str] = field(default_factory=list)
    embedding: Any = None  # numpy vector or None when no embedder ran
    time_range: tuple[str, str] | None = None  # ISO bounds parsed from "last month", "in May 2023", …
    time_phrase: str = ""  # the words that named ``time_range`` ("last month"), as matched


@dataclass
class ChannelHit:
    """One entry as a single channel ranked it (rank starts at 1)."""

    entry_id: int
    rank: int
    score: float
    channel: str
    passed_floor: bool = True
    strength: float = 1.0  # the channel's own relevance, normalised to [0, 1]; gates its RRF share
    via: str = ""  # what matched when not the entry's text: "cue" (its recall cue, crib_plugin.core.cues)


@dataclass
class ChannelResult:
    """What one channel returned for one query, including why it may have returned nothing."""

    channel: str
    hits: list[ChannelHit] = field(default_factory=list)
    facts: list[Fact] = field(default_factory=list)
    ran: bool = True
    note: str = ""  # e.g. "embedder unavailable: connection refused"
    dropped_by_floor: int = 0
    seconds: float = 0.0


@dataclass
class Hit:
    """A fused result: an entry with its fused score and each channel's view of it."""

    entry: Entry
    score: float
    channels: dict[str, ChannelHit] = field(default_factory=dict)
    evidence: float | None = None  # the fusion's evidence sum the per-entry cut judges on (None: the score)

    @property
    def weight(self) -> float:
        """What the per-entry cut compares with the best hit's: the evidence, else the score."""
        return self.score if self.evidence is None else self.evidence

    def to_json(self) -> dict[str, Any]:
        data = self.entry.to_json()
        data["score"] = round(self.score, 6)
        data["channels"] = sorted(self.channels)
        return data


@dataclass(frozen=True)
class Retrieval:
    """Everything one retrieval produced: hits to inject, facts, per-channel reports, timings.

    Frozen: each stage of the read pipeline (:mod:`crib_plugin.read.pipeline`) returns a new value
    (``dataclasses.replace``) and never rebinds a field of the one it was given."""

    query: Query
    hits: list[Hit] = field(default_factory=list)
    facts: list[Fact] = field(default_factory=list)
    channels: list[ChannelResult] = field(default_factory=list)
    dropped: list[tuple[int, str]] = field(default_factory=list)  # (entry_id, reason)
    timings: dict[str, float] = field(default_factory=dict)
    notes: list[tuple[int, str]] = field(default_factory=list)  # (entry_id, why it moved): time, type, rerank
    gate: Any = None  # relevance.GateDecision once select() has applied the gate
    evidence: Any = None  # (list of evidence.Evidence, evidence.Cut) once select() has applied the per-entry cut
    pointers: list[Hit] = field(default_factory=list)  # one-line pointers below the entries (crib_plugin.read.pointers)
    judged: bool = False  # a judge model picked the entries (the gated stage): no pointers beside them

    @property
    def search_type(self) -> str:
        """Which channels ran, e.g. ``"fts+vector"`` or ``"fts_only"`` — never a silent downgrade."""
        ran = [c.channel for c in self.channels if c.ran]
        if not ran:
            return "none"
        if len(ran) == 1:
            return f"{ran[0]}_only"
        return "+".join(ran)

    @property
    def empty(self) -> bool:
        return not self.hits and not self.facts and not self.pointers


def fresh(retrieval: Retrieval) -> Retrieval:
    """A stage's own copy of the value it was given: new lists and dicts (the hits, entries and
    reports in them are shared, as the stage before left them), so a stage never changes its input."""
    return replace(retrieval, hits=list(retrieval.hits), facts=list(retrieval.facts), channels=list(retrieval.channels),
                   dropped=list(retrieval.dropped), timings=dict(retrieval.timings), notes=list(retrieval.notes),
                   pointers=list(retrieval.pointers))
