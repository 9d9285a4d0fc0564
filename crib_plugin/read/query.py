"""Prepare a prompt once for every channel: keywords, safe FTS5 expressions, CJK grams.

No user text can raise an FTS5 syntax error: every term reaches ``MATCH`` as a double-quoted
string (inner quotes doubled), so operators, parentheses, ``*``, ``:`` and unbalanced quotes are
inert. Balanced quoted phrases in the prompt stay phrases; dotted, hyphenated and underscored
identifiers (``valid_until``, ``System.out.println``, ``ERR_VAL_9021``) become phrases too, so they
match exactly rather than as loose words. Quoted phrases and code identifiers are *exact* terms:
the full-text channel boosts the entries that contain them above entries that only share loose
words (:func:`boost_expression`, :func:`literal_expression`).

CJK text has no spaces between words, so a Chinese or Japanese prompt is one long run. Runs are
cut into overlapping bigrams (a one-character run stays a unigram) and matched, OR-ed and ranked by
BM25, against the gram index of :mod:`crib_plugin.store.cjk` (:func:`cjk_grams`): "我们选择了哪个
数据库" finds "我们决定使用SQLite作为数据库" through 数据 and 据库, which a trigram match of the
whole run never would.
"""

from __future__ import annotations

from typing import Sequence

from ..core.records import Query
from ..text.cjk import CJK_RE, CJK_RUN_RE, NonAsciiPattern, glued_words, normalise_cjk  # noqa: F401 - the leaf; importable from here too
from ..text.terms import Term, fts_expression, has_cjk, is_code_identifier, quote, terms  # noqa: F401 - importable from here too
from ..text.words import STOP_WORDS, split_words  # noqa: F401 - STOP_WORDS: importable from here too
from .temporal import find_time_expression


def _boosted_terms(found: Sequence[Term]) -> list[Term]:
    """The exact terms worth a boost: none when every term is exact (a boost for all is none)."""
    exact = [t for t in found if t.exact]
    return exact if len(exact) < len(found) else []


def boost_expression(found: Sequence[Term]) -> str:
    """Word-index MATCH for the quoted phrases and words of the prompt, OR-ed (``""``: none)."""
    return " OR ".join(t.fts() for t in _boosted_terms(found) if not t.literal)


def literal_expression(found: Sequence[Term]) -> str:
    """Trigram-index MATCH for the prompt's identifiers as written (``valid_until`` with its
    underscore), OR-ed: a case-insensitive substring match (``""``: none)."""
    return " OR ".join(quote(t.literal) for t in _boosted_terms(found) if len(t.literal) >= 3)


def cjk_terms(text: str) -> list[str]:
    """The runs of CJK characters in ``text``, as written (runs of three or more characters are
    also matched whole, as substrings, in the trigram index: an exact-run boost)."""
    return CJK_RUN_RE.findall(text)


def trigram_expression(runs: list[str]) -> str:
    """Trigram MATCH expression for CJK runs of three or more characters (OR-ed substrings)."""
    return " OR ".join(quote(r) for r in runs if len(r) >= 3)


# -- CJK grams -------------------------------------------------------------------------------------

# Grams that are grammar, not topic — the CJK counterpart of English stop words. A query gram is
# dropped when it is made only of Chinese function characters
# (我们, 什么, 哪个, 的是), when it straddles a word boundary marked by a particle (择了 in 选择了,
# 们选 in 我们选, スは and は何 in データベースは何), or when it is only hiragana (です, ます, する).
# Without this, "我们选择了哪个数据库" ranks "前端框架选择了React" (选择, 择了) above the SQLite memory
# (数据, 据库) in a small store.
CJK_STOP_CHARS = frozenset("的了是在和与及或有也都就吗呢吧啊呀么这那哪个些我你他她它们您谁什怎之其把被给")
_ZH_ENDS_WORD = frozenset("了的们吗呢吧啊呀么")  # attach to the word before: a bigram ending in one crosses a boundary
_ZH_NEVER_STARTS = frozenset("们吗呢吧啊呀么")  # never begin a word: a bigram starting with one crosses a boundary
_JA_PARTICLES = frozenset("はがをにでともへやの")  # paired with kanji/katakana, a particle marks a boundary
_KO_PARTICLES = frozenset("은는이가을를에의도로와과")  # a lone syllable after a Latin word: "SQLite를"
_HIRAGANA_RE = NonAsciiPattern("[\u3040-\u309f]+")


def _stop_gram(gram: str) -> bool:
    """Whether a query gram is grammar rather than topic (see ``CJK_STOP_CHARS``)."""
    if all(c in CJK_STOP_CHARS for c in gram) or _HIRAGANA_RE.fullmatch(gram):
        return True
    if len(gram) == 1:
        return gram in _KO_PARTICLES
    first, second = gram[0], gram[1]
    if second in _ZH_ENDS_WORD or first in _ZH_NEVER_STARTS:
        return True
    return first in _JA_PARTICLES or second in _JA_PARTICLES


def cjk_grams(text: str) -> list[str]:
    """The grams a prompt's CJK text is searched by, in order, without duplicates.

    A one-character run is searched as itself (a unigram); longer runs as their overlapping bigrams,
    so any two adjacent characters the prompt shares with a memory count, wherever its word
    boundaries lie. Stop grams are dropped, as English stop words are: a prompt of nothing but
    function words ("我们", "的了吗") searches nothing — except that a prompt in hiragana alone
    keeps its hiragana grams, which are then all its words.
    """
    grams: list[str] = []
    for run in CJK_RUN_RE.findall(normalise_cjk(text)):
        if len(run) == 1:
            grams.append(run)
        else:
            grams.extend(run[i : i + 2] for i in range(len(run) - 1))
    unique = list(dict.fromkeys(grams))
    content = [g for g in unique if not _stop_gram(g)]
    if content or any(w not in STOP_WORDS for w in split_words(text)):
        return content
    # A prompt written in hiragana alone ("たま", "ねこ"): its hiragana grams are all it has.
    return [g for g in unique if _HIRAGANA_RE.fullmatch(g) and not all(c in _JA_PARTICLES for c in g)]


def gram_expression(grams: Sequence[str], words: Sequence[str] = ()) -> str:
    """MATCH expression for the CJK gram index: the prompt's grams and plain words, quoted, OR-ed."""
    return " OR ".join(quote(t) for t in dict.fromkeys([*grams, *words]) if t)


def prepare(text: str) -> Query:
    """Everything the channels need from a prompt, computed once (the embedding comes later)."""
    text = text.strip()
    found = terms(text)
    runs = cjk_terms(text)
    when = find_time_expression(text)
    return Query(
        text=text,
        keywords=[t.text for t in found],
        fts_expression=" OR ".join(t.fts() for t in found),
        cjk=bool(runs),
        cjk_terms=runs,
        time_range=when.range if when else None,
        time_phrase=when.phrase if when else "",
    )
