"""Fact normalisation: entity names and keys, predicate aliases and negation, single- vs multi-valued.

See :mod:`crib_plugin.store.facts` for the rule that decides which predicates are single-valued.
"""

from __future__ import annotations

import re
import unicodedata
from dataclasses import dataclass
from functools import lru_cache
from typing import TYPE_CHECKING

from ...core.records import Triple

if TYPE_CHECKING:  # pragma: no cover
    pass



PROJECT = "project"
"""The entity that "we", "our team", "this project" … stand for, so both extractors agree on it."""

MAX_NAME_CHARS = 120
"""Longer entity names are not facts but sentences; such triples are skipped."""


# ----------------------------------------------------------------------------------------------
# Normalisation
# ----------------------------------------------------------------------------------------------

_SURROUNDING = " \t\r\n\"'`“”‘’«»„‚.,;:!?()[]{}<>*_~|#"
_ARTICLE_RE = re.compile(r"^(?:the|a|an)\s+(?=\S)", re.IGNORECASE)
_POSSESSIVE_RE = re.compile(r"(?:'s|’s|')$", re.IGNORECASE)

WE_NAMES = frozenset({
    "we", "us", "our", "ours", "ourselves", "our team", "team", "our project", "this project",
    "project", "the project", "this repo", "this repository", "our repo", "our codebase", "the codebase",
    "our app", "our service",
})
"""Names that stand for the project the agent works on; they all become the entity ``project``."""

UNRESOLVED = frozenset({
    "i", "me", "my", "myself", "you", "your", "he", "him", "his", "she", "her", "it", "its", "they",
    "them", "their", "this", "that", "these", "those", "there", "here", "which", "who", "what", "one",
    "someone", "something", "everything", "nothing", "anything", "everyone", "all", "both", "none",
})
"""Pronouns and placeholders: a triple naming one of these says nothing findable; it is skipped."""

# Words ending in "s" that are not plurals (or whose singular is another thing).
PLURAL_EXCEPTIONS = frozenset("""
always perhaps towards whereas afterwards besides nevertheless series species news physics analytics
economics mathematics politics ethics statistics kubernetes postgres jenkins windows ios macos chaos canvas
atlas alias bias lens yes thanks tennis diabetes pants jeans glasses means aws dns gps sms css js nodejs
express redis rails sales ops devops mlops gitops https headquarters lyrics graphics odds goods clothes
plus minus corpus status focus campus virus bonus census bus gas this has was does is as us
""".split())


def clean_name(text: str) -> str:
    """The display form of a name: NFKC, one space between words, no surrounding quotes or
    punctuation, no leading article, no trailing possessive. Case is kept."""
    name = unicodedata.normalize("NFKC", str(text))
    name = " ".join(name.split())
    previous = None
    while name != previous:
        previous = name
        name = name.strip(_SURROUNDING)
        name = _POSSESSIVE_RE.sub("", name) if len(name) > 2 else name
        name = _ARTICLE_RE.sub("", name)
    return name


def _singular(word: str) -> str:
    """Simple plural folding of the last word of a name: ``clients`` → ``client``.

    Left alone: short words, words with digits (``Net30``), mixed case (``SQLite``), ``-ss``/``-us``/
    ``-is`` endings (``status``, ``analysis``) and :data:`PLURAL_EXCEPTIONS`. Upper-case acronyms with a
    plural ``s`` fold (``APIs`` → ``api``).
    """
    lower = word.casefold()
    if len(word) > 2 and word.endswith("s") and word[:-1].isupper() and word[:-1].isalpha():
        return lower[:-1]
    if len(lower) < 4 or not lower.isalpha() or lower in PLURAL_EXCEPTIONS:
        return lower
    if any(c.isupper() for c in word[1:]):
        return lower
    if lower.endswith("ies") and len(lower) > 4:
        return lower[:-3] + "y"
    if lower.endswith(("sses", "xes", "ches", "shes", "zzes")):
        return lower[:-2]
    if lower.endswith(("ss", "us", "is")):
        return lower
    if lower.endswith("s"):
        return lower[:-1]
    return lower


def entity_key(text: str) -> str:
    """The unique key of an entity: :func:`clean_name`, case-folded, last word singular.

    ``"SQLite"``, ``"sqlite"`` and ``" 'SQLite'. "`` share a key; so do ``"clients"`` and ``"Client"``.
    Names that stand for the project itself (``we``, ``our team`` …) all map to ``project``.
    """
    name = clean_name(text)
    if not name:
        return ""
    folded = name.casefold()
    if folded in WE_NAMES:
        return PROJECT
    words = name.split(" ")
    words[-1] = _singular(words[-1])
    return " ".join(w.casefold() for w in words)


# Spellings an extractor may produce for one predicate → the canonical predicate.
PREDICATE_ALIASES: dict[str, str] = {
    "use": "uses", "used": "uses", "using": "uses", "is_using": "uses", "are_using": "uses",
    "uses_tool": "uses", "utilizes": "uses", "employs": "uses",
    "pay": "payment_terms", "pays": "payment_terms", "paid": "payment_terms", "payment_term": "payment_terms",
    "payment": "payment_terms", "pays_on": "payment_terms", "terms": "payment_terms",
    "live_in": "lives_in", "lived_in": "lives_in", "living_in": "lives_in", "resides_in": "lives_in",
    "based_in": "located_in", "is_based_in": "located_in", "is_located_in": "located_in",
    "is_in": "located_in", "location": "located_in",
    "work_at": "works_at", "works_for": "works_at", "work_for": "works_at", "employed_by": "works_at",
    "is_a": "is", "is_an": "is", "are": "is", "was": "is", "were": "is", "be": "is", "am": "is",
    "have": "has", "had": "has", "having": "has",
    "like": "likes", "liked": "likes", "love": "loves", "loved": "loves", "enjoy": "enjoys",
    "prefer": "prefers", "preferred": "prefers", "need": "needs", "want": "wants", "hate": "hates",
    "support": "supports", "require": "requires", "include": "includes", "contain": "contains",
    "own": "owns", "know": "knows", "depend_on": "depends_on", "depends_upon": "depends_on",
    "storage": "storage_backend", "database": "storage_backend", "db": "storage_backend",
    "storage_engine": "storage_backend", "persistence": "storage_backend",
    "maps": "maps_to", "map_to": "maps_to", "to": "maps_to",
    "run_on": "runs_on", "deploy_to": "deployed_to", "deploys_to": "deployed_to",
    "owned_by": "owner",
}

SINGLE_VALUED = frozenset({
    "payment_terms", "lives_in", "located_in", "works_at", "born_in", "married_to", "reports_to",
    "belongs_to", "status", "state", "version", "owner", "maps_to", "storage_backend", "runs_on",
    "deployed_to", "hosted_on", "deadline", "due", "timezone", "email", "phone", "address", "role",
    "title", "contact", "manager", "lead", "language", "license", "port", "url", "priority",
    "age", "job", "occupation", "nationality", "spouse", "partner",
})
"""Predicates whose subject has one object at a time: a new object supersedes the old one."""

MULTI_VALUED = frozenset({
    "uses", "likes", "loves", "enjoys", "hates", "dislikes", "prefers", "is", "has", "owns", "knows",
    "includes", "contains", "supports", "requires", "needs", "wants", "depends_on", "related_to",
    "member_of", "works_with", "friend_of", "visited", "attended", "plays", "reads", "decided",
    "mentions", "calls", "replaces", "tried", "learned", "avoids", "speaks", "studies", "teaches",
    "went", "saw", "took", "got", "made", "gave", "ran", "bought", "met", "began", "felt", "found",
    "thought", "told", "became", "wrote", "read", "sent", "built", "kept", "left", "brought", "did",
    "heard", "held", "lost", "won", "spent", "ate", "drew", "grew", "knew", "taught", "caught", "sang",
})
"""Predicates whose subject can have many objects at once: facts accumulate."""

_SINGLE_SUFFIXES = (
    "_backend", "_terms", "_status", "_version", "_owner", "_deadline", "_date", "_id", "_url", "_email",
    "_address", "_location", "_name", "_count", "_size", "_limit", "_timeout", "_port", "_path", "_role",
    "_title", "_manager", "_engine", "_provider", "_host", "_region", "_plan", "_tier", "_policy",
)
_SINGLE_PREFIXES = ("used_for_", "default_", "current_", "primary_", "main_")
_PREPOSITIONS = frozenset({"in", "at", "on", "of", "to", "for", "with", "from", "by", "about", "into", "as"})
_AUXILIARIES = frozenset({"do", "does", "did", "is", "are", "was", "will", "would", "should", "can", "could"})


def _snake(text: str) -> str:
    text = unicodedata.normalize("NFKC", str(text)).casefold()
    text = text.replace("’", "'").replace("can't", "can not").replace("won't", "will not")
    text = text.replace("n't", " not").replace("'", "")
    return re.sub(r"[^0-9a-z]+", "_", unicodedata.normalize("NFKD", text).encode("ascii", "ignore").decode()).strip("_")


def split_negation(predicate: str) -> tuple[str, bool]:
    """``("uses", True)`` for ``not_uses``; ``("uses", False)`` for ``uses``."""
    if predicate.startswith("not_"):
        return predicate[4:], True
    return predicate, False


@lru_cache(maxsize=8192)
def normalise_predicate(text: str) -> str:
    """A predicate in canonical snake_case, negations as ``not_<predicate>``.

    ``"Payment Terms"`` → ``payment_terms``; ``"pays"`` → ``payment_terms``; ``"doesn't use"``,
    ``"no longer uses"``, ``"not_use"`` → ``not_uses``; ``"is not"`` → ``not_is``.
    """
    words = [w for w in _snake(text).split("_") if w]
    negated = False
    kept: list[str] = []
    index = 0
    while index < len(words):
        word = words[index]
        nxt = words[index + 1] if index + 1 < len(words) else ""
        if word in ("not", "never", "cannot"):
            negated = True
        elif word == "no" and nxt == "longer":
            negated = True
            index += 1
        elif word in _AUXILIARIES and nxt in ("not", "never"):
            negated = True
            index += 1
            if word in ("is", "are", "was"):
                kept.append("is")
        else:
            kept.append(word)
        index += 1
    base = "_".join(kept)
    if not base:
        return ""
    base = PREDICATE_ALIASES.get(base, base)[:64].strip("_")
    return f"not_{base}" if negated else base


def single_valued(predicate: str) -> bool:
    """Whether a new object for this predicate replaces the subject's current one (see module doc)."""
    if predicate.startswith("not_"):
        return False
    if predicate in SINGLE_VALUED:
        return True
    if predicate in MULTI_VALUED:
        return False
    if predicate.endswith(_SINGLE_SUFFIXES) or predicate.startswith(_SINGLE_PREFIXES):
        return True
    words = predicate.split("_")
    head = words[0]
    if len(words) > 1 and words[-1] in _PREPOSITIONS:
        head = words[-2]
    if head in MULTI_VALUED:
        return False
    if head.endswith(("ed", "ing")) and len(head) > 4:
        return False
    if head.endswith("s") and not head.endswith(("ss", "us", "is")) and len(head) > 3:
        return False
    return True


@dataclass(frozen=True)
class NormalTriple:
    """A triple after normalisation: entity keys, display names and the canonical predicate."""

    subject_key: str
    subject_name: str
    predicate: str
    object_key: str
    object_name: str


def normalise_triple(triple: Triple) -> NormalTriple | None:
    """Normalise one extracted triple; ``None`` when it names nothing findable (pronoun, empty, too long)."""
    subject_name, object_name = clean_name(triple.subject), clean_name(triple.object)
    predicate = normalise_predicate(triple.predicate)
    if not subject_name or not object_name or not predicate:
        return None
    if len(subject_name) > MAX_NAME_CHARS or len(object_name) > MAX_NAME_CHARS:
        return None
    if subject_name.casefold() in UNRESOLVED or object_name.casefold() in UNRESOLVED:
        return None
    subject_key, object_key = entity_key(subject_name), entity_key(object_name)
    if not subject_key or not object_key or subject_key == object_key:
        return None
    if subject_key == PROJECT:
        subject_name = PROJECT
    if object_key == PROJECT:
        object_name = PROJECT
    return NormalTriple(subject_key, subject_name, predicate, object_key, object_name)
