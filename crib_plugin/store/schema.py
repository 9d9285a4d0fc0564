"""Versioned schema migrations for the SQLite store.

The schema version lives in ``PRAGMA user_version``; each migration runs once, in order, inside one
transaction. Append new migrations — never edit one that has shipped.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any, Callable

from . import cjk


@dataclass(frozen=True)
class Migration:
    version: int
    name: str
    sql: str
    # Python run after ``sql`` in the same transaction, for what SQL cannot compute (CJK grams of
    # the entries already stored). Receives the connection.
    backfill: Callable[[Any], Any] | None = None


ENTRIES = """
CREATE TABLE settings (
    key   TEXT PRIMARY KEY,
    value TEXT NOT NULL
);

CREATE TABLE entries (
    id           INTEGER PRIMARY KEY AUTOINCREMENT,
    type         TEXT NOT NULL DEFAULT 'note',
    content      TEXT NOT NULL,
    created_at   TEXT NOT NULL,
    metadata     TEXT NOT NULL DEFAULT '{}',
    content_hash TEXT NOT NULL,
    -- Entries written in one conversation share a thread (metadata "thread"). Their neighbours'
    -- text is kept in `context`, indexed at a lower weight: a short reply ("Yes, last May!")
    -- is found through the topic of the turn around it.
    thread       TEXT,
    context      TEXT NOT NULL DEFAULT ''
);
CREATE INDEX entries_content_hash ON entries(content_hash);
CREATE INDEX entries_created_at ON entries(created_at);
CREATE INDEX entries_thread ON entries(thread, id) WHERE thread IS NOT NULL;

-- Word index: porter stemming over unicode61 tokens; BM25 ranks it. The entry type is indexed
-- beside the content (weighted low) so "every decision we made" can match decision entries.
CREATE VIRTUAL TABLE entries_fts USING fts5(
    content, type, context,
    content='entries', content_rowid='id',
    tokenize='porter unicode61 remove_diacritics 2'
);

-- Substring index for CJK text (no spaces between words) and partial identifiers.
CREATE VIRTUAL TABLE entries_trigram USING fts5(
    content,
    content='entries', content_rowid='id',
    tokenize='trigram'
);

CREATE TRIGGER entries_ai AFTER INSERT ON entries BEGIN
    INSERT INTO entries_fts(rowid, content, type, context) VALUES (new.id, new.content, new.type, new.context);
    INSERT INTO entries_trigram(rowid, content) VALUES (new.id, new.content);
END;
CREATE TRIGGER entries_ad AFTER DELETE ON entries BEGIN
    INSERT INTO entries_fts(entries_fts, rowid, content, type, context) VALUES ('delete', old.id, old.content, old.type, old.context);
    INSERT INTO entries_trigram(entries_trigram, rowid, content) VALUES ('delete', old.id, old.content);
END;
CREATE TRIGGER entries_au AFTER UPDATE OF content, type, context ON entries BEGIN
    INSERT INTO entries_fts(entries_fts, rowid, content, type, context) VALUES ('delete', old.id, old.content, old.type, old.context);
    INSERT INTO entries_trigram(entries_trigram, rowid, content) VALUES ('delete', old.id, old.content);
    INSERT INTO entries_fts(rowid, content, type, context) VALUES (new.id, new.content, new.type, new.context);
    INSERT INTO entries_trigram(rowid, content) VALUES (new.id, new.content);
END;

-- One vec0 table per embedder identity ("name:model:dim"), so vectors of two models never mix.
CREATE TABLE vector_spaces (
    key        TEXT PRIMARY KEY,
    table_name TEXT NOT NULL UNIQUE,
    dim        INTEGER NOT NULL,
    created_at TEXT NOT NULL
);

-- Entries whose embedding failed (model down); `crib reindex` fills them in.
CREATE TABLE pending_embeddings (
    entry_id  INTEGER NOT NULL REFERENCES entries(id) ON DELETE CASCADE,
    space     TEXT NOT NULL,
    reason    TEXT NOT NULL DEFAULT '',
    queued_at TEXT NOT NULL,
    PRIMARY KEY (entry_id, space)
);
"""

FACTS = """
-- Fact triples (crib_plugin/facts.py). Entities are keyed by a normalised name ("SQLite" and
-- "sqlite" are one entity); display_name keeps the first form seen. A relation is current while
-- valid_until IS NULL; consolidation closes relations (valid_until, superseded_by) and never
-- deletes them, so history stays queryable.
CREATE TABLE entities (
    id           INTEGER PRIMARY KEY AUTOINCREMENT,
    name         TEXT NOT NULL UNIQUE,
    display_name TEXT NOT NULL,
    type         TEXT NOT NULL DEFAULT 'entity',
    n_terms      INTEGER NOT NULL DEFAULT 0,
    created_at   TEXT NOT NULL
);

-- Stemmed words of each entity name: the facts channel looks prompt words up here (indexed),
-- instead of scanning names with LIKE '%kw%'.
CREATE TABLE entity_terms (
    term      TEXT NOT NULL,
    entity_id INTEGER NOT NULL REFERENCES entities(id) ON DELETE CASCADE,
    PRIMARY KEY (term, entity_id)
) WITHOUT ROWID;
CREATE INDEX entity_terms_entity ON entity_terms(entity_id);

CREATE TABLE relations (
    id            INTEGER PRIMARY KEY AUTOINCREMENT,
    subject_id    INTEGER NOT NULL REFERENCES entities(id),
    predicate     TEXT NOT NULL,
    object_id     INTEGER NOT NULL REFERENCES entities(id),
    valid_from    TEXT NOT NULL,
    valid_until   TEXT,
    superseded_by INTEGER REFERENCES relations(id),
    created_at    TEXT NOT NULL
);
CREATE INDEX relations_current_sp ON relations(subject_id, predicate, object_id) WHERE valid_until IS NULL;
CREATE INDEX relations_current_o ON relations(object_id, predicate) WHERE valid_until IS NULL;
CREATE INDEX relations_current_p ON relations(predicate) WHERE valid_until IS NULL;
CREATE INDEX relations_subject ON relations(subject_id, predicate);
CREATE INDEX relations_object ON relations(object_id);
CREATE INDEX relations_superseded_by ON relations(superseded_by);

-- Which entries stated a relation (an identical fact stated again adds a row here, not a relation).
CREATE TABLE relation_sources (
    relation_id INTEGER NOT NULL REFERENCES relations(id) ON DELETE CASCADE,
    entry_id    INTEGER NOT NULL REFERENCES entries(id) ON DELETE CASCADE,
    created_at  TEXT NOT NULL,
    PRIMARY KEY (relation_id, entry_id)
) WITHOUT ROWID;
CREATE INDEX relation_sources_entry ON relation_sources(entry_id);

-- Stemmed words (and a few synonyms) of each predicate, so "payment terms" finds payment_terms.
CREATE TABLE predicate_terms (
    term      TEXT NOT NULL,
    predicate TEXT NOT NULL,
    PRIMARY KEY (term, predicate)
) WITHOUT ROWID;
"""

AUDIT = """
CREATE TABLE audit (
    id        INTEGER PRIMARY KEY AUTOINCREMENT,
    at        TEXT NOT NULL,
    action    TEXT NOT NULL,
    entry_id  INTEGER,
    detail    TEXT NOT NULL DEFAULT '{}'
);
CREATE INDEX audit_entry ON audit(entry_id);
ALTER TABLE entries ADD COLUMN superseded_by INTEGER;
CREATE INDEX entries_superseded_by ON entries(superseded_by) WHERE superseded_by IS NOT NULL;
"""

ENTRY_COUNT = """
-- The number of entries, kept by triggers in the writing transaction: a cold count(*) reads a
-- whole index (57-130 ms at 10^6 entries), and the relevance gate asks on every prompt.
CREATE TABLE IF NOT EXISTS entry_count (
    id INTEGER PRIMARY KEY CHECK (id = 1),
    n  INTEGER NOT NULL
);
INSERT OR REPLACE INTO entry_count(id, n) SELECT 1, count(*) FROM entries;
CREATE TRIGGER IF NOT EXISTS entries_count_ai AFTER INSERT ON entries BEGIN
    UPDATE entry_count SET n = n + 1 WHERE id = 1;
END;
CREATE TRIGGER IF NOT EXISTS entries_count_ad AFTER DELETE ON entries BEGIN
    UPDATE entry_count SET n = n - 1 WHERE id = 1;
END;
"""

# Which repository each entry was written from, so one store shared by several projects (a team's
# server) can answer for one of them (``CRIB_PROJECTS``); NULL for entries written before.
PROJECT = """
ALTER TABLE entries ADD COLUMN project TEXT;
CREATE INDEX entries_project ON entries(project, id) WHERE project IS NOT NULL;
"""

# Recall cues (metadata "when", crib_plugin/core/cues.py) in a word index of their own: full text
# finds a memory by the situations its writer said it matters in, as the vector channel does with
# the cue's own vector. Apart from entries_fts, so the store's term statistics (the relevance gate's
# document frequencies) stay those of what the memories say. A plain FTS5 table: it keeps the cue's
# text itself, and a forget deletes it with the entry (AdminMixin merges the segments after).
# Idempotent (IF NOT EXISTS, the index rebuilt from the cues), as migration 5 is.
def _has_cue(metadata: str) -> str:
    """SQL true when the JSON ``metadata`` holds a text cue; an invalid JSON text holds none (and
    never makes the write fail)."""
    return f"CASE WHEN json_valid({metadata}) THEN json_type({metadata}, '$.when') END = 'text'"


CUES = f"""
CREATE VIRTUAL TABLE IF NOT EXISTS entries_cue USING fts5(cue, tokenize='porter unicode61 remove_diacritics 2');
DELETE FROM entries_cue;
INSERT INTO entries_cue(rowid, cue) SELECT id, json_extract(metadata, '$.when') FROM entries WHERE {_has_cue("metadata")};
CREATE TRIGGER IF NOT EXISTS entries_cue_ai AFTER INSERT ON entries WHEN {_has_cue("new.metadata")} BEGIN
    INSERT INTO entries_cue(rowid, cue) VALUES (new.id, json_extract(new.metadata, '$.when'));
END;
CREATE TRIGGER IF NOT EXISTS entries_cue_ad AFTER DELETE ON entries BEGIN
    DELETE FROM entries_cue WHERE rowid = old.id;
END;
CREATE TRIGGER IF NOT EXISTS entries_cue_au AFTER UPDATE OF metadata ON entries BEGIN
    DELETE FROM entries_cue WHERE rowid = old.id;
    INSERT INTO entries_cue(rowid, cue) SELECT new.id, json_extract(new.metadata, '$.when') WHERE {_has_cue("new.metadata")};
END;
"""

MIGRATIONS: list[Migration] = [
    Migration(1, "entries, full text, trigram, vector spaces, pending queue", ENTRIES),
    Migration(2, "fact triples: entities, entity terms, relations with validity, sources", FACTS),
    Migration(3, "CJK gram index (unigrams, bigrams, glued words) for short CJK terms", cjk.SCHEMA, cjk.backfill),
    Migration(4, "audit log; entries superseded by a later entry", AUDIT),
    Migration(5, "the entry count kept by triggers (no count(*) per prompt)", ENTRY_COUNT),
    Migration(6, "entries record the project (repository) they were written from", PROJECT),
    Migration(7, "recall cues in a word index of their own", CUES),
]


def latest_version() -> int:
    return max(m.version for m in MIGRATIONS)
