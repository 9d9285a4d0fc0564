"""crib's one tokenizer and stemmer, and the stop words: every stage that splits text into words
(the query parser, the facts, the gate's evidence, the time adjustments, supersession, the
reranker's word overlap) splits it here. It imports only :mod:`crib_plugin.text.cjk`.

* :func:`split_words` — lower-cased words of ``text`` (``don't`` one word; CJK runs left out: they
  are matched by character grams, :mod:`crib_plugin.text.cjk`);
* :func:`stems` / :func:`stem_list` — ``(word, stem)`` pairs / the stems, by SQLite's tokenizers;
* :func:`content_words` — the words that carry content (no stop words, ≥ 3 characters or a number), by stem.

The stemmer is SQLite's own FTS5 ``porter`` tokenizer through a private in-memory apsw connection,
so the facts channel's notion of "the same word" is the full-text channel's.
"""

from __future__ import annotations

import re
from typing import Any

import apsw

from .cjk import CJK_RUN_RE

WORD_RE = re.compile(r"[^\W_]+(?:'[^\W_]+)?", re.UNICODE)

# Question words, auxiliaries, pronouns and fillers: they carry no topic, and OR-ing them into a
# BM25 query only adds noise.
STOP_WORDS = frozenset(
    """
a about above after again against all am an and any are aren't as at be because been before being
below between both but by can can't cannot could couldn't did didn't do does doesn't doing don't down
during each few for from further had hadn't has hasn't have haven't having he he'd he'll he's her here
here's hers herself him himself his how how's i i'd i'll i'm i've if in into is isn't it it's its
itself let's me more most mustn't my myself no nor not of off on once only or other ought our ours
ourselves out over own same shan't she she'd she'll she's should shouldn't so some such than that
that's the their theirs them themselves then there there's these they they'd they'll they're they've
this those through to too under until up very was wasn't we we'd we'll we're we've were weren't what
what's when when's where where's which while who who's whom why why's with won't would wouldn't you
you'd you'll you're you've your yours yourself yourselves
also just like get got go going gone one ever still yet would will shall may might must
s t d ll re ve m
""".split()
)


class Tokenizers:
    """SQLite's FTS5 ``unicode61`` and ``porter`` tokenizers, through a private in-memory apsw connection.

    Using SQLite's own porter stemmer keeps the facts channel's notion of "the same word" identical
    to the full-text channel's (``tokenize='porter unicode61 remove_diacritics 2'``). If apsw cannot
    provide them (another binding), a small suffix stripper stands in.
    """

    def __init__(self) -> None:
        self.conn: Any = None
        self.plain: Any = None
        self.porter: Any = None
        self.query_flag = 0
        try:
            self.conn = apsw.Connection(":memory:")
            args = ["remove_diacritics", "2"]
            self.plain = self.conn.fts5_tokenizer("unicode61", args)
            self.porter = self.conn.fts5_tokenizer("porter", ["unicode61", *args])
            self.query_flag = apsw.FTS5_TOKENIZE_DOCUMENT
        except Exception:  # pragma: no cover - exercised only without apsw's FTS5 tokenizer API
            self.plain = self.porter = None

    def words(self, text: str) -> list[tuple[str, str]]:
        """``(word, stem)`` pairs of ``text``: lower-cased, diacritics removed, porter-stemmed."""
        if not text:
            return []
        if self.plain is None or self.porter is None:  # pragma: no cover - fallback path
            return [(w, fallback_stem(w)) for w in re.findall(r"[^\W_]+", text.casefold())]
        data = text.encode("utf-8")
        plain = self.plain(data, self.query_flag, None)
        stemmed = {start: token for start, _end, token in self.porter(data, self.query_flag, None)}
        return [(token, stemmed.get(start, token)) for start, _end, token in plain]


def fallback_stem(word: str) -> str:  # pragma: no cover - used only without apsw
    for suffix in ("ational", "ations", "ation", "ingly", "edly", "ing", "ies", "ied", "ed", "es", "s"):
        if word.endswith(suffix) and len(word) - len(suffix) >= 3 and not word.endswith(("ss", "us", "is")):
            return word[: -len(suffix)] + ("i" if suffix in ("ies", "ied") else "")
    return word


_TOKENIZERS: Tokenizers | None = None


def tok() -> Tokenizers:
    global _TOKENIZERS
    if _TOKENIZERS is None:
        _TOKENIZERS = Tokenizers()
    return _TOKENIZERS


def stems(text: str) -> list[tuple[str, str]]:
    """``(word, stem)`` pairs of ``text`` — the unit every fact lookup compares."""
    return tok().words(text)


def split_words(text: str) -> list[str]:
    """The lower-cased words of ``text`` (``don't`` is one word); CJK runs are left out."""
    return [w.lower() for w in WORD_RE.findall(CJK_RUN_RE.sub(" ", text))]


def stem_list(text: str) -> list[str]:
    """Porter stems of ``text`` — the same stemmer the FTS index and the facts channel use."""
    return [stem for _word, stem in stems(text)]


def content_words(text: str) -> dict[str, str]:
    """Content words (no stop words, ≥ 3 characters or a number) by stem — what "shared content" means."""
    words: dict[str, str] = {}
    for word, stem in stems(text):
        if word not in STOP_WORDS and (len(word) >= 3 or word.isdigit()):
            words.setdefault(stem, word)
    return words
