"""Plain BM25, computed by the harness with no crib code: the floor every ranking must clear.

SQLite FTS5 with the ``porter unicode61`` tokenizer over the same texts crib stores; the question's
words (``\\w+``, lower-cased) minus a fixed list of English stop words, each quoted, OR-ed; ranked
by FTS5's ``bm25()``. Nothing here imports :mod:`crib_plugin`: a change to crib's query processing
cannot move the baseline.
"""

from __future__ import annotations

import re
import sqlite3
from collections.abc import Iterable, Sequence

STOP_WORDS = frozenset(
    """a about above after again against all am an and any are as at be because been before being below
    between both but by can could did do does doing down during each few for from further had has have
    having he her here hers herself him himself his how i if in into is it its itself just me more most my
    myself no nor not now of off on once only or other our ours ourselves out over own same she should so
    some such than that the their theirs them themselves then there these they this those through to too
    under until up very was we were what when where which while who whom why will with would you your
    yours yourself yourselves also did does get got let may might must shall us""".split()
)


def query_expression(text: str) -> str:
    """The question's non-stop words, quoted for FTS5 and OR-ed (``""`` when none are left)."""
    words = [w for w in re.findall(r"\w+", text.lower()) if w not in STOP_WORDS]
    return " OR ".join(f'"{w}"' for w in dict.fromkeys(words))


class PlainBM25:
    """An in-memory FTS5 index of ``(key, text)`` pairs, searched with :func:`query_expression`."""

    def __init__(self, items: Iterable[tuple[str, str]]) -> None:
        self.db = sqlite3.connect(":memory:")
        self.db.execute("CREATE VIRTUAL TABLE docs USING fts5(key UNINDEXED, body, tokenize='porter unicode61')")
        self.db.executemany("INSERT INTO docs(key, body) VALUES (?, ?)", list(items))

    def search(self, text: str, limit: int = 25, exclude: Sequence[str] = ()) -> list[str]:
        """Keys best first (FTS5 ``bm25()``: lower is better), ``exclude`` left out."""
        expression = query_expression(text)
        if not expression:
            return []
        skip = set(exclude)
        rows = self.db.execute(
            "SELECT key FROM docs WHERE docs MATCH ? ORDER BY bm25(docs) LIMIT ?", (expression, limit + len(skip))
        ).fetchall()
        return [key for (key,) in rows if key not in skip][:limit]

    def close(self) -> None:
        self.db.close()
