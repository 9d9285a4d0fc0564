"""The words and stems an entity or a predicate is found by (``entity_terms``, ``predicate_terms``).

Stems come from the leaf :mod:`crib_plugin.text` (SQLite's porter tokenizer), so facts and the
full-text channel agree on what a word is.
"""

from __future__ import annotations

import re
from functools import lru_cache
from typing import TYPE_CHECKING

if TYPE_CHECKING:  # pragma: no cover
    pass

from .normalise import split_negation

# ----------------------------------------------------------------------------------------------
# Words and stems
# ----------------------------------------------------------------------------------------------

# query.py's list (both take it from the leaf text module), so the two notions of "content word" agree.
def _stop_words() -> frozenset[str]:
    return STOP_WORDS


from ...text.words import STOP_WORDS, Tokenizers, fallback_stem, stems, tok  # noqa: E402,F401 - moved to the leaf text module


def useful(word: str) -> bool:
    """Single letters (the ``s`` of ``ClientA's``) carry nothing; single digits do."""
    return len(word) > 1 or word.isdigit()


_IDENTIFIER = re.compile(r"^[\w.\-/]+$")


def entity_terms(name: str) -> list[str]:
    """The stemmed words an entity is found by (stop words dropped, except inside identifiers).

    ``"the Tokyo office"`` → ``["tokyo", "offic"]``; ``"valid_until"`` → ``["valid", "until"]`` (an
    identifier keeps every part, or "valid" alone would match it fully).
    """
    pairs = [(w, s) for w, s in stems(name) if useful(w)]
    identifier = bool(_IDENTIFIER.match(name.strip())) and len(pairs) > 1
    stop = _stop_words()
    kept = pairs if identifier else [(w, s) for w, s in pairs if w not in stop]
    if not kept:
        kept = pairs  # a name made only of stop words ("IT", "The Who") is still findable
    out: list[str] = []
    for _w, s in kept:
        if s not in out:
            out.append(s)
    return out


# A few synonyms per predicate word, so "which database …" finds storage_backend and "what does
# ClientA pay" finds payment_terms. Keys and values are plain words; they are stemmed on use.
PREDICATE_SYNONYMS: dict[str, tuple[str, ...]] = {
    "payment": ("pay", "pays", "paid", "paying", "invoice", "billing"),
    "terms": ("term",),
    "storage": ("database", "db", "store", "stored", "persistence", "persist"),
    "backend": ("database", "engine"),
    "cache": ("caching", "cached"),
    "lives": ("live", "living", "home", "reside", "based", "located"),
    "located": ("location", "based", "live", "lives"),
    "works": ("work", "job", "employer", "employed"),
    "owner": ("owns", "owned", "owning", "responsible", "maintainer"),
    "deadline": ("due", "deadline"),
    "status": ("state",),
    "uses": ("use", "using", "used"),
}


def predicate_words(predicate: str) -> list[tuple[str, ...]]:
    """Each content word of a predicate as a group of stems that count as matching it."""
    base, _negated = split_negation(predicate)
    stop = _stop_words()
    groups: list[tuple[str, ...]] = []
    for word in base.split("_"):
        if not word or word in stop or not useful(word):
            continue
        variants = {s for _w, s in stems(word)}
        for synonym in PREDICATE_SYNONYMS.get(word, ()):
            variants.update(s for _w, s in stems(synonym))
        groups.append(tuple(sorted(variants)))
    return groups


def predicate_terms(predicate: str) -> list[str]:
    """Every stem that finds ``predicate`` (its words and their synonyms), for ``predicate_terms``."""
    return list(_predicate_terms(predicate))


@lru_cache(maxsize=4096)
def _predicate_terms(predicate: str) -> tuple[str, ...]:
    return tuple(sorted({s for group in predicate_words(predicate) for s in group}))
