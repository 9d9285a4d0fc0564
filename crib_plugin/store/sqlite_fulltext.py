"""Full-text statements for the SQLite store: FTS5 words, trigrams, CJK grams and a LIKE fallback.

A mixin of :class:`~crib_plugin.store.sqlite.SQLiteStore`; the channels build the expressions.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import TYPE_CHECKING, Any

from ..text.terms import quote
from . import cjk
from .sqlite_rows import CONTEXT_WEIGHT, TYPE_WEIGHT


class FullTextMixin:
    """Full-text statements for the SQLite store: FTS5 words, trigrams, CJK grams and a LIKE fallback."""

    if TYPE_CHECKING:  # provided by SQLiteStore

        _vocab_ready: bool

        def execute(self, sql: str, bindings: Sequence[Any] | dict[str, Any] = ()) -> list[tuple[Any, ...]]: ...
        def _statistics(self) -> dict[str, int]: ...

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

    def cue_search(self, expression: str, limit: int) -> list[tuple[int, float]]:
        """Entries whose recall cue matches an FTS5 expression, best first, BM25 (positive)."""
        rows = self.execute(
            "SELECT rowid, -bm25(entries_cue) AS score FROM entries_cue WHERE entries_cue MATCH ? ORDER BY score DESC LIMIT ?",
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

    def documents_up_to(self, text: str, limit: int) -> int:
        """Entries holding ``text`` (a word or a phrase), counted up to ``limit``: FTS5 reads the
        posting lists lazily, so this stops after ``limit`` rows (an fts5vocab count reads them all)."""
        return self._matching_up_to("entries_fts", text, limit)

    def cue_documents_up_to(self, text: str, limit: int) -> int:
        """Entries whose recall cue holds ``text``, counted up to ``limit`` (as :meth:`documents_up_to`)."""
        return self._matching_up_to("entries_cue", text, limit)

    def _matching_up_to(self, table: str, text: str, limit: int) -> int:
        """Rows of the FTS5 ``table`` matching ``text`` as a phrase, counted no further than ``limit``."""
        if not text.strip() or limit <= 0:
            return 0
        phrase = '"' + text.replace('"', '""') + '"'
        rows = self.execute(f"SELECT count(*) FROM (SELECT rowid FROM {table} WHERE {table} MATCH ? LIMIT ?)", (phrase, int(limit)))
        return int(rows[0][0])

    def entries_holding(self, words: Sequence[str], limit: int) -> list[int]:
        """Entries whose content holds every word, oldest first, up to ``limit`` (no ``bm25``: its
        inverse document frequencies would read each word's whole posting list)."""
        words = [w for w in words if w.strip()]
        if not words or limit <= 0:
            return []
        expression = " AND ".join("content : " + quote(word) for word in words)
        rows = self.execute("SELECT rowid FROM entries_fts WHERE entries_fts MATCH ? LIMIT ?", (expression, int(limit)))
        return [int(r[0]) for r in rows]

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
