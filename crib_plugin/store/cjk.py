"""The CJK gram index (``entries_cjk``, migration 3): indexed search for CJK words of any length.

Why it exists: Chinese and Japanese have no spaces, so the word index (unicode61) sees a whole
clause as one token, and the trigram index cannot match a term shorter than three characters —
yet most Chinese words are two characters (缓存, 数据, 设计). Seed 002 fell back to ``LIKE '%缓存%'``,
which scans every row. Here each entry that holds CJK text gets one row of space-separated
tokens: every CJK character (unigram), every pair of adjacent CJK characters (bigram), and the
Latin words glued to CJK text ("使用SQLite作为" → ``sqlite``). unicode61 makes each of them one
token, so a one- or two-character term is an ordinary indexed lookup ranked by BM25, and a long
prompt run is searched as its OR-ed bigrams (:func:`crib_plugin.read.query.cjk_grams`).

The table is contentless (``content=''``, ``contentless_delete=1``, SQLite ≥ 3.43 — apsw ≥ 3.45 is
required anyway): it costs only its index, never a second copy of the text. Grams are computed in
Python, so they are written by :func:`index_entry` from ``SQLiteStore.insert_entry`` in the entry's
own transaction; a trigger (migration 3) deletes the row with its entry; entries written before
migration 3 are indexed by :func:`backfill`, which runs inside the migration's transaction (the
store is at version 3 only once every old entry is indexed). Entry content is never updated in
place (a correction is a new entry), so there is no update path.
"""

from __future__ import annotations

from typing import Any, Iterable, Protocol, Sequence

from ..text.cjk import CJK_RUN_RE, glued_words, normalise_cjk

TABLE = "entries_cjk"

# Migration 3. Each token is one gram, so ``remove_diacritics 0``: grams are compared as written.
SCHEMA = """
CREATE VIRTUAL TABLE entries_cjk USING fts5(
    grams,
    content='', contentless_delete=1,
    tokenize='unicode61 remove_diacritics 0'
);
CREATE TRIGGER entries_cjk_ad AFTER DELETE ON entries BEGIN
    DELETE FROM entries_cjk WHERE rowid = old.id;
END;
"""


class Executor(Protocol):
    """What the helpers need: an apsw connection or a ``SQLiteStore`` (both have ``execute``)."""

    def execute(self, sql: str, bindings: Sequence[Any] = ...) -> Iterable[Any]: ...  # pragma: no cover


def document_grams(text: str) -> str:
    """The indexed form of an entry: unigrams and bigrams of its CJK runs, then its glued words.

    ``""`` when the text holds no CJK (such an entry gets no row). Repeated grams stay repeated:
    BM25 counts term frequency.
    """
    tokens: list[str] = []
    for run in CJK_RUN_RE.findall(normalise_cjk(text)):
        tokens.extend(run)
        tokens.extend(run[i : i + 2] for i in range(len(run) - 1))
    if not tokens:
        return ""
    tokens.extend(glued_words(text))
    return " ".join(tokens)


def index_entry(db: Executor, entry_id: int, content: str) -> bool:
    """Index one entry's grams (call inside the transaction that writes the entry).

    Returns whether a row was written (only entries with CJK text get one).
    """
    grams = document_grams(content)
    if not grams:
        return False
    db.execute(f"INSERT INTO {TABLE}(rowid, grams) VALUES (?, ?)", (int(entry_id), grams))
    return True


def backfill(db: Executor) -> int:
    """Index every entry that has none yet (entries written before migration 3); returns how many.

    Runs inside migration 3's transaction. Entries are read in id order in pages, so memory stays
    flat on large stores.
    """
    written = 0
    last = 0
    while True:
        rows = list(db.execute("SELECT id, content FROM entries WHERE id > ? ORDER BY id LIMIT 1000", (last,)))
        if not rows:
            return written
        for entry_id, content in rows:
            written += index_entry(db, int(entry_id), str(content))
        last = int(rows[-1][0])


def search(db: Executor, expression: str, limit: int) -> list[tuple[int, float]]:
    """Entries matching a gram expression (:func:`crib_plugin.read.query.gram_expression`), best first.

    BM25 is negated so higher is better, like every other channel score.
    """
    if not expression:
        return []
    rows = db.execute(
        f"SELECT rowid, -bm25({TABLE}) AS score FROM {TABLE} WHERE {TABLE} MATCH ? ORDER BY score DESC LIMIT ?",
        (expression, int(limit)),
    )
    return [(int(r[0]), float(r[1])) for r in rows]
