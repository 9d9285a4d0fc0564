"""Prepare a prompt once for every channel: keywords, a safe FTS5 expression, CJK terms.

No user text can raise an FTS5 syntax error: every term reaches ``MATCH`` as a double-quoted
string (inner quotes doubled), so operators, parentheses, ``*``, ``:`` and unbalanced quotes are
inert. Balanced quoted phrases in the prompt stay phrases; dotted, hyphenated and underscored
identifiers (``valid_until``, ``System.out.println``, ``ERR_VAL_9021``) become phrases too, so they
match exactly rather than as loose words.
"""

from __future__ import annotations

import re
from dataclasses import dataclass

from .lexicon import variants
from .records import Query
from .temporal import parse_time_range

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

_CJK_RANGES = (
    "\u3040-\u309f"  # Hiragana
    "\u30a0-\u30ff"  # Katakana
    "\u3400-\u4dbf"  # CJK Extension A
    "\u4e00-\u9fff"  # CJK Unified Ideographs
    "\uf900-\ufaff"  # CJK Compatibility Ideographs
    "\uac00-\ud7af"  # Hangul syllables
    "\u1100-\u11ff"  # Hangul Jamo
)
CJK_RE = re.compile(f"[{_CJK_RANGES}]")
CJK_RUN_RE = re.compile(f"[{_CJK_RANGES}]+")
_PHRASE_RE = re.compile(r'"([^"]+)"')
# An identifier joined by dots, hyphens or underscores: valid_until, System.out.println, ERR_VAL_9021.
_IDENT_RE = re.compile(r"[A-Za-z0-9]+(?:[._\-][A-Za-z0-9]+)+")
_WORD_RE = re.compile(r"[^\W_]+(?:'[^\W_]+)?", re.UNICODE)


@dataclass(frozen=True)
class Term:
    """One unit of the FTS expression: a word or a phrase (several words that must be adjacent)."""

    text: str
    phrase: bool = False

    def fts(self) -> str:
        """The term as a quoted FTS5 string — inert whatever characters it holds.

        A word with irregular forms matches any of them: ``("choose" OR "chose" OR "chosen")``.
        """
        forms = (self.text,) if self.phrase else variants(self.text)
        quoted = ['"' + form.replace('"', '""') + '"' for form in forms]
        return quoted[0] if len(quoted) == 1 else "(" + " OR ".join(quoted) + ")"


def has_cjk(text: str) -> bool:
    return bool(CJK_RE.search(text))


def _words(text: str) -> list[str]:
    return [w.lower() for w in _WORD_RE.findall(CJK_RUN_RE.sub(" ", text))]


def terms(text: str) -> list[Term]:
    """Phrases, identifiers and content words of ``text``, in order, without duplicates or stop words."""
    found: list[Term] = []
    seen: set[str] = set()

    def add(term: Term) -> None:
        key = term.text.lower()
        if key and key not in seen:
            seen.add(key)
            found.append(term)

    rest = text
    for match in _PHRASE_RE.finditer(text):
        words = _words(match.group(1))
        if len(words) > 1:
            add(Term(" ".join(words), phrase=True))
        elif words and words[0] not in STOP_WORDS:
            add(Term(words[0]))
    rest = _PHRASE_RE.sub(" ", rest)
    for match in _IDENT_RE.finditer(rest):
        words = _words(match.group(0))
        if len(words) > 1:
            add(Term(" ".join(words), phrase=True))
    rest = _IDENT_RE.sub(lambda m: " " + " ".join(_words(m.group(0))) + " ", rest)
    for word in _words(rest):
        if word in STOP_WORDS or (len(word) < 2 and not word.isdigit()):
            continue
        add(Term(word))
    return found


def fts_expression(text: str) -> str:
    """A safe FTS5 MATCH expression: every term quoted, OR-ed. ``""`` when nothing is searchable."""
    return " OR ".join(t.fts() for t in terms(text))


def cjk_terms(text: str) -> list[str]:
    """The runs of CJK characters in ``text`` (each run is searched as a substring)."""
    return CJK_RUN_RE.findall(text)


def trigram_expression(runs: list[str]) -> str:
    """Trigram MATCH expression for CJK runs of three or more characters (OR-ed substrings)."""
    return " OR ".join('"' + r.replace('"', '""') + '"' for r in runs if len(r) >= 3)


def prepare(text: str) -> Query:
    """Everything the channels need from a prompt, computed once (the embedding comes later)."""
    text = text.strip()
    found = terms(text)
    runs = cjk_terms(text)
    return Query(
        text=text,
        keywords=[t.text for t in found],
        fts_expression=" OR ".join(t.fts() for t in found),
        cjk=bool(runs),
        cjk_terms=runs,
        time_range=parse_time_range(text),
    )
