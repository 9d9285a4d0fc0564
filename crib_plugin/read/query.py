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

import re
from dataclasses import dataclass
from typing import Sequence

from ..core.limits import MAX_TERM_CHARS, MAX_TERMS
from ..core.records import Query
from ..text.cjk import CJK_RE, CJK_RUN_RE, _NonAsciiPattern, glued_words, normalise_cjk  # noqa: F401 - the leaf; importable from here too
from ..text.lexicon import variants
from ..text.words import STOP_WORDS  # noqa: E402,F401 - moved to the leaf text module; importable from here too
from .temporal import find_time_expression

_PHRASE_RE = re.compile(r'"([^"]+)"')
# An identifier joined by dots, hyphens or underscores: valid_until, System.out.println, ERR_VAL_9021.
# Anchored at the start of an alphanumeric run and possessive, so a long run without a separator
# fails in one pass: unanchored, a 16,000-character run cost a quadratic 21 s.
_IDENT_RE = re.compile(r"(?<![A-Za-z0-9])[A-Za-z0-9]++(?:[._\-][A-Za-z0-9]++)+")
_WORD_RE = re.compile(r"[^\W_]+(?:'[^\W_]+)?", re.UNICODE)


@dataclass(frozen=True)
class Term:
    """One unit of the FTS expression: a word or a phrase (several words that must be adjacent).

    ``exact`` marks what the prompt asked for literally — a quoted phrase or word, or a code
    identifier (:func:`is_code_identifier`) — which the full-text channel boosts. An identifier
    also keeps its ``literal`` spelling (``valid_until``): the word index sees it as the words
    "valid until", which "valid until Friday" matches too, so its boost is a substring match of
    the literal in the trigram index.
    """

    text: str
    phrase: bool = False
    exact: bool = False
    literal: str = ""

    def fts(self) -> str:
        """The term as a quoted FTS5 string — inert whatever characters it holds.

        A word with irregular forms matches any of them: ``("choose" OR "chose" OR "chosen")``.
        """
        forms = (self.text,) if self.phrase else variants(self.text)
        quoted = [quote(form) for form in forms]
        return quoted[0] if len(quoted) == 1 else "(" + " OR ".join(quoted) + ")"


def quote(text: str) -> str:
    """``text`` as an FTS5 string literal: double-quoted, inner quotes doubled (no operator survives)."""
    return '"' + text.replace('"', '""') + '"'


def has_cjk(text: str) -> bool:
    return bool(CJK_RE.search(text))


def _words(text: str) -> list[str]:
    return [w.lower() for w in _WORD_RE.findall(CJK_RUN_RE.sub(" ", text))]


def is_code_identifier(token: str) -> bool:
    """An identifier of code or logs — joined by ``_`` or ``.``, or holding a digit or a capital
    after the first letter (``valid_until``, ``System.out.println``, ``ERR-VAL-9021``, ``GPT-4``) —
    rather than a hyphenated English compound (``self-care``, ``dairy-free``).

    Both are phrases of the word index; only the former is an exact term, boosted by its literal
    spelling. On LoCoMo's conversational questions boosting compounds cost recall (fused R@10
    −0.1): a turn that says "dairy-free" is not more likely the evidence than one that says "vegan".
    """
    if not _IDENT_RE.fullmatch(token):
        return False
    return "_" in token or "." in token or any(c.isdigit() for c in token) or any(c.isupper() for c in token[1:])


def terms(text: str) -> list[Term]:
    """Phrases, identifiers and content words of ``text``, in order, without duplicates or stop words.

    A quoted phrase or identifier is kept whole (an exact term) *and* its content words are kept as
    loose words, so an entry that paraphrases the phrase still matches, below one that quotes it.
    """
    found: list[Term] = []
    seen: set[str] = set()

    def add(term: Term) -> None:
        key = term.text.lower()
        if len(found) >= MAX_TERMS or len(key) > (4 * MAX_TERM_CHARS if term.phrase else MAX_TERM_CHARS):
            return  # bounded cost: a long prompt or a base64 run cannot make the query huge
        if key and key not in seen:
            seen.add(key)
            found.append(term)

    rest = text
    loose: list[str] = []
    for match in _PHRASE_RE.finditer(text):
        words = _words(match.group(1))
        literal = match.group(1).strip()
        if len(words) > 1:
            add(Term(" ".join(words), phrase=True, exact=True, literal=literal if is_code_identifier(literal) else ""))
            loose.extend(words)
        elif words and words[0] not in STOP_WORDS:
            add(Term(words[0], exact=True))
    rest = _PHRASE_RE.sub(" ", rest)
    for match in _IDENT_RE.finditer(rest):
        words = _words(match.group(0))
        if len(words) > 1:
            code = is_code_identifier(match.group(0))
            add(Term(" ".join(words), phrase=True, exact=code, literal=match.group(0) if code else ""))
    rest = _IDENT_RE.sub(lambda m: " " + " ".join(_words(m.group(0))) + " ", rest)
    for word in loose + _words(rest):
        if word in STOP_WORDS or (len(word) < 2 and not word.isdigit()):
            continue
        add(Term(word))
    return found


def fts_expression(text: str) -> str:
    """A safe FTS5 MATCH expression: every term quoted, OR-ed. ``""`` when nothing is searchable."""
    return " OR ".join(t.fts() for t in terms(text))


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
_HIRAGANA_RE = _NonAsciiPattern("[\u3040-\u309f]+")


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
    if content or any(w not in STOP_WORDS for w in _words(text)):
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
