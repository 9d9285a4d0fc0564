"""A prompt's search terms and their safe FTS5 spelling: pure text, so the write path (supersession's
candidate search) and the read path (:func:`crib_plugin.read.query.prepare`) build them alike.

No user text can raise an FTS5 syntax error: every term reaches ``MATCH`` as a double-quoted
string (inner quotes doubled), so operators, parentheses, ``*``, ``:`` and unbalanced quotes are
inert. Balanced quoted phrases stay phrases; dotted, hyphenated and underscored identifiers
(``valid_until``, ``System.out.println``, ``ERR_VAL_9021``) become phrases too.
"""

from __future__ import annotations

import re
from dataclasses import dataclass

from ..core.limits import MAX_TERM_CHARS, MAX_TERMS
from .cjk import CJK_RE
from .lexicon import variants
from .words import STOP_WORDS, split_words

_PHRASE_RE = re.compile(r'"([^"]+)"')
# An identifier joined by dots, hyphens or underscores: valid_until, System.out.println, ERR_VAL_9021.
# Anchored at the start of an alphanumeric run and possessive, so a long run without a separator
# fails in one pass: unanchored, a 16,000-character run cost a quadratic 21 s.
_IDENT_RE = re.compile(r"(?<![A-Za-z0-9])[A-Za-z0-9]++(?:[._\-][A-Za-z0-9]++)+")


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
        words = split_words(match.group(1))
        literal = match.group(1).strip()
        if len(words) > 1:
            add(Term(" ".join(words), phrase=True, exact=True, literal=literal if is_code_identifier(literal) else ""))
            loose.extend(words)
        elif words and words[0] not in STOP_WORDS:
            add(Term(words[0], exact=True))
    rest = _PHRASE_RE.sub(" ", rest)
    for match in _IDENT_RE.finditer(rest):
        words = split_words(match.group(0))
        if len(words) > 1:
            code = is_code_identifier(match.group(0))
            add(Term(" ".join(words), phrase=True, exact=code, literal=match.group(0) if code else ""))
    rest = _IDENT_RE.sub(lambda m: " " + " ".join(split_words(m.group(0))) + " ", rest)
    for word in loose + split_words(rest):
        if word in STOP_WORDS or (len(word) < 2 and not word.isdigit()):
            continue
        add(Term(word))
    return found


def fts_expression(text: str) -> str:
    """A safe FTS5 MATCH expression: every term quoted, OR-ed. ``""`` when nothing is searchable."""
    return " OR ".join(t.fts() for t in terms(text))
