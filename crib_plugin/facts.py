"""Fact triples: normalisation, consolidation-on-write with history, and the queries over them.

The write path hands every entry's extracted :class:`~crib_plugin.records.Triple` list to
:func:`record_facts`, inside the same transaction as the entry insert. Facts are stored as
``relations`` between ``entities``; a relation is *current* while ``valid_until IS NULL``.
Consolidation never deletes a relation: it closes it (``valid_until``, ``superseded_by``) so
``crib facts ENTITY --all`` can show every version with its dates.

Why normalise: the seed's facts channel matched entity names with ``LIKE '%kw%'`` over whatever
spelling the model produced, so "SQLite" and "sqlite" were two entities and a query could flip
between hit and miss. Here an entity is keyed by :func:`entity_key` (case, whitespace, quotes,
articles, possessive and simple plural folded) and its name is indexed word by word, stemmed with
SQLite's own porter tokenizer (the one the full-text channel uses), in ``entity_terms``.

Consolidation rules (:func:`record_facts`):

- **Identical current fact** (same subject, predicate, object) → one more source row, no new relation.
- **Single-valued predicate** (see :func:`single_valued`) with the same subject and a different object
  → the old relation is closed at the new one's ``valid_from`` and the new one inserted.
  ``ClientA pays Net30`` then ``ClientA now pays Net45``: Net30 closes, Net45 is current.
- **Multi-valued predicate** (``uses``, ``likes``, ``is``, verbs in general): facts accumulate.
- **Negation** ``not_P`` closes the current ``P`` fact with the same subject and object, and vice versa
  (``we no longer use Redis`` closes ``project → uses → Redis``); the negative fact is kept as current.
- **Correction entries** (``type=correction``) treat every predicate as single-valued: what a correction
  states replaces what was current for that subject and predicate.
- **Out-of-order writes** (an import of older entries): a fact older than the conflicting current one
  is inserted already closed, at the time the newer fact begins.

Which predicates are single-valued — the rule, in order:

1. ``not_*`` predicates are multi-valued (each negated object is its own fact);
2. listed in :data:`SINGLE_VALUED` (``payment_terms``, ``lives_in``, ``works_at``, ``status``,
   ``storage_backend``, ``maps_to`` …) → single; listed in :data:`MULTI_VALUED` (``uses``, ``likes``,
   ``is``, ``has``, ``depends_on`` …) → multi;
3. role and attribute shapes → single: ``*_backend``, ``*_terms``, ``*_status``, ``*_version``,
   ``*_owner``, ``*_date`` … and ``used_for_*``, ``default_*``, ``primary_*``;
4. otherwise the predicate's main word decides: a verb form (``…s``, ``…ed``, ``…ing``, an irregular
   past such as ``went``) is a relation that accumulates (multi); a noun (``owner``, ``database``,
   ``contact``, ``deadline``, a ``key: value`` key) is an attribute with one value at a time (single).

The facts channel's search lives here too (:func:`match_facts`) so benchmarks can call it without
the plugin machinery; ``crib_plugin/channels/facts.py`` wraps it as a channel.
"""

from __future__ import annotations

import json
import math
import re
import unicodedata
from dataclasses import dataclass, field
from functools import lru_cache
from typing import TYPE_CHECKING, Any, Iterable, Sequence

from .errors import InputError
from .records import Fact, Triple
from .timeutil import day, now_iso

if TYPE_CHECKING:  # pragma: no cover
    from .store.base import Store
    from .store.records import FactRow

__all__ = [
    "SINGLE_VALUED",
    "MULTI_VALUED",
    "PROJECT",
    "clean_name",
    "entity_key",
    "normalise_predicate",
    "split_negation",
    "single_valued",
    "stems",
    "entity_terms",
    "predicate_terms",
    "record_facts",
    "forget_entry",
    "current_facts",
    "fact_history",
    "facts_for_entries",
    "find_entities",
    "match_facts",
    "FactMatch",
    "facts_command_output",
]

PROJECT = "project"
"""The entity that "we", "our team", "this project" … stand for, so both extractors agree on it."""

MAX_NAME_CHARS = 120
"""Longer entity names are not facts but sentences; such triples are skipped."""

# ----------------------------------------------------------------------------------------------
# Words and stems
# ----------------------------------------------------------------------------------------------

# query.py's list (both take it from the leaf text module), so the two notions of "content word" agree.
def _stop_words() -> frozenset[str]:
    from .text import STOP_WORDS

    return STOP_WORDS


from .text import _fallback_stem, _tok, _Tokenizers, stems  # noqa: E402,F401 - moved to the leaf text module


def _useful(word: str) -> bool:
    """Single letters (the ``s`` of ``ClientA's``) carry nothing; single digits do."""
    return len(word) > 1 or word.isdigit()


_IDENTIFIER = re.compile(r"^[\w.\-/]+$")


def entity_terms(name: str) -> list[str]:
    """The stemmed words an entity is found by (stop words dropped, except inside identifiers).

    ``"the Tokyo office"`` → ``["tokyo", "offic"]``; ``"valid_until"`` → ``["valid", "until"]`` (an
    identifier keeps every part, or "valid" alone would match it fully).
    """
    pairs = [(w, s) for w, s in stems(name) if _useful(w)]
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
        if not word or word in stop or not _useful(word):
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


# ----------------------------------------------------------------------------------------------
# Consolidation on write
# ----------------------------------------------------------------------------------------------


def _entity_id(store: Store, key: str, display: str, now: str, cache: dict[str, int]) -> int:
    if key in cache:
        return cache[key]
    found = store.entity_id(key)
    if found is not None:
        cache[key] = found
        return cache[key]
    terms = entity_terms(display)
    kind = "project" if key == PROJECT else "entity"
    entity_id = store.insert_entity(key, display, kind, terms, now)
    cache[key] = entity_id
    return entity_id


def _index_predicate(store: Store, predicate: str) -> None:
    store.add_predicate_terms(predicate, predicate_terms(predicate))


def _add_source(store: Store, relation_id: int, entry_id: int, now: str) -> None:
    store.add_relation_source(relation_id, entry_id, now)


def _current(store: Store, subject_id: int, predicate: str, object_id: int | None = None) -> list[tuple[int, int, str]]:
    """Current relations ``(id, object_id, valid_from)`` for a subject and predicate (and object)."""
    return store.current_relations(subject_id, predicate, object_id)


def _consolidate(
    store: Store,
    entry_id: int,
    subject_id: int,
    predicate: str,
    object_id: int,
    valid_from: str,
    *,
    correction: bool,
    now: str,
) -> int:
    """Record one normalised fact against what is current; returns the relation id that holds it."""
    same = _current(store, subject_id, predicate, object_id)
    if same:
        relation_id, _obj, since = same[0]
        if valid_from < since and not store.supersedes_any(relation_id):
            # An older statement of the same fact (import out of order): it has held since then.
            store.set_relation_valid_from(relation_id, valid_from)
        _add_source(store, relation_id, entry_id, now)
        return relation_id

    base, negated = split_negation(predicate)
    conflicts: list[tuple[int, int, str]] = []
    if negated:
        conflicts += _current(store, subject_id, base, object_id)
    else:
        conflicts += _current(store, subject_id, f"not_{base}", object_id)
        if correction or single_valued(predicate):
            conflicts += [c for c in _current(store, subject_id, predicate) if c[1] != object_id]

    earlier = [c for c in conflicts if c[2] <= valid_from]
    later = sorted((c for c in conflicts if c[2] > valid_from), key=lambda c: c[2])
    valid_until = later[0][2] if later else None
    superseded_by = later[0][0] if later else None
    relation_id = store.insert_relation(subject_id, predicate, object_id, valid_from, valid_until, superseded_by, now)
    for old_id, _obj, _since in earlier:
        store.close_relation(old_id, valid_from, relation_id)
    _index_predicate(store, predicate)
    _add_source(store, relation_id, entry_id, now)
    return relation_id


def record_facts(
    store: Store,
    entry_id: int,
    triples: Iterable[Triple],
    *,
    valid_from: str,
    entry_type: str = "note",
) -> list[int]:
    """Consolidate the facts one entry states; returns the ids of the relations that hold them.

    Call inside the transaction that inserts the entry (it nests as a savepoint, so it is atomic on
    its own too). ``valid_from`` is the entry's ``created_at``. Triples that normalise to nothing
    findable (pronouns, empty or sentence-long names) are skipped; duplicates within one entry count
    once. See the module docstring for the consolidation rules.
    """
    if not valid_from:
        raise InputError("record_facts needs valid_from (the entry's created_at)")
    now = now_iso()
    cache: dict[str, int] = {}
    seen: set[tuple[str, str, str]] = set()
    ids: list[int] = []
    with store.transaction():
        for triple in triples:
            normal = normalise_triple(triple)
            if normal is None:
                continue
            key = (normal.subject_key, normal.predicate, normal.object_key)
            if key in seen:
                continue
            seen.add(key)
            subject_id = _entity_id(store, normal.subject_key, normal.subject_name, now, cache)
            object_id = _entity_id(store, normal.object_key, normal.object_name, now, cache)
            relation_id = _consolidate(
                store, entry_id, subject_id, normal.predicate, object_id, valid_from,
                correction=(entry_type == "correction"), now=now,
            )
            if relation_id not in ids:
                ids.append(relation_id)
    return ids


def forget_entry(store: Store, entry_id: int) -> int:
    """Remove what one entry contributed to the facts; returns how many relations were deleted.

    Its source rows go. A relation left with no source at all was stated only by this entry, so it
    goes too — and whatever it had superseded takes its place again (reopened if it was current, or
    handed to the next version), so forgetting a mistaken entry restores the earlier fact. Entities
    no relation mentions any more are removed with their terms.
    """
    deleted = 0
    with store.transaction():
        relation_ids = store.relations_of_entry(entry_id)
        store.delete_entry_sources(entry_id)
        touched: set[int] = set()
        for relation_id in relation_ids:
            if store.relation_has_sources(relation_id):
                continue
            row = store.relation_row(relation_id)
            if row is None:
                continue
            store.hand_over_supersession(relation_id, row.valid_until, row.superseded_by)
            store.delete_relation(relation_id)
            touched.update((row.subject_id, row.object_id))
            deleted += 1
        for entity_id in touched:
            if not store.entity_in_use(entity_id):
                store.delete_entity(entity_id)
    return deleted


# ----------------------------------------------------------------------------------------------
# Reading facts
# ----------------------------------------------------------------------------------------------

def _load(store: Store, rows: Sequence[FactRow]) -> list[Fact]:
    sources = store.relation_sources([r.id for r in rows])
    return [
        Fact(
            id=r.id, subject=r.subject, predicate=r.predicate, object=r.object,
            valid_from=r.valid_from, valid_until=r.valid_until,
            source_entry_ids=sources.get(r.id, []),
        )
        for r in rows
    ]


def load_facts(store: Store, relation_ids: Sequence[int]) -> list[Fact]:
    """Facts by relation id, in the order given."""
    facts = {fact.id: fact for fact in _load(store, store.fact_rows(relation_ids=list(relation_ids)))}
    return [facts[i] for i in relation_ids if i in facts]


def find_entities(store: Store, name: str) -> list[int]:
    """Entity ids a user-typed name refers to: its exact key, else entities carrying all its words."""
    key = entity_key(name)
    if not key:
        return []
    found = store.entity_id(key)
    if found is not None:
        return [found]
    terms = entity_terms(clean_name(name))
    if not terms:
        return []
    return store.entities_with_all_terms(terms)


def current_facts(store: Store, entity: str | None = None) -> list[Fact]:
    """Current facts (``valid_until IS NULL``), all or those naming ``entity`` as subject or object."""
    if entity is None:
        return _load(store, store.fact_rows(current_only=True))
    ids = find_entities(store, entity)
    if not ids:
        return []
    return _load(store, store.fact_rows(entity_ids=ids, current_only=True))


def fact_history(store: Store, entity: str | None = None) -> list[Fact]:
    """Every version of every fact (or of those naming ``entity``), oldest first per predicate."""
    if entity is None:
        return _load(store, store.fact_rows())
    ids = find_entities(store, entity)
    if not ids:
        return []
    return _load(store, store.fact_rows(entity_ids=ids))


def facts_for_entries(store: Store, entry_ids: Sequence[int], *, current_only: bool = False) -> list[Fact]:
    """Facts stated by any of ``entry_ids``."""
    if not entry_ids:
        return []
    return _load(store, store.fact_rows(entry_ids=list(entry_ids), current_only=current_only))


# ----------------------------------------------------------------------------------------------
# The facts channel's search
# ----------------------------------------------------------------------------------------------

MIN_PREFIX = 4
"""A query word and an entity word match by prefix only when the shorter has at least this many
characters and covers ≥ :data:`PREFIX_RATIO` of the longer (``postgres`` ~ ``PostgreSQL``)."""
PREFIX_RATIO = 0.6
PREFIX_WEIGHT = 0.5
FULL_NAME_BONUS = 1.0
PREDICATE_WORD_WEIGHT = 0.75
PREDICATE_ONLY_FACTOR = 0.5
GENERIC_PREDICATES = frozenset({"is", "has", "uses", "maps_to", "related_to", "not_is", "not_has"})
MAX_ENTITIES = 200
MAX_RELATIONS = 5000
PREDICATE_ONLY_LIMIT = 20
HUB_DEGREE = 10
"""An entity with more current facts than this is a hub ("project", a conversation's speaker)."""
HUB_KEEP = 3
"""How many of a hub's facts that match *only* through its name pass the floor (the newest), when the
prompt has other content words those facts do not match."""


@dataclass
class FactMatch:
    """What :func:`match_facts` found: scored current facts and the entries that stated them."""

    facts: list[Fact] = field(default_factory=list)
    entries: list[tuple[int, float]] = field(default_factory=list)  # (entry_id, score), best first
    weak_entries: list[tuple[int, float]] = field(default_factory=list)  # sources of weak facts only
    matched_entities: dict[str, float] = field(default_factory=dict)  # display name → score (for --explain)
    dropped: int = 0  # hub facts left out entirely (matched only through a much-connected name)


def query_stems(keywords: Sequence[str]) -> list[str]:
    """Stems of a prompt's keywords and phrases (a phrase keeps all its words; ``'s`` drops)."""
    out: list[str] = []
    for keyword in keywords:
        for word, stem in stems(keyword):
            if _useful(word) and stem not in out:
                out.append(stem)
    return out


Matches = dict[int, dict[str, tuple[float, bool, str]]]


def _entity_matches(store: Any, q_stems: Sequence[str]) -> Matches:
    """entity id → {entity term: (match quality, exact, query stem)} for every entity word a query word reaches."""
    found: Matches = {}

    def note(entity_id: int, term: str, quality: float, exact: bool, q: str) -> None:
        terms = found.setdefault(int(entity_id), {})
        if quality > terms.get(term, (0.0, False, ""))[0]:
            terms[term] = (quality, exact, q)

    for term, entity_id in store.entity_terms_matching(q_stems):
        note(entity_id, term, 1.0, True, term)
    for q in q_stems:
        if len(q) < MIN_PREFIX or q.isdigit():
            continue
        # entity words that start with the query word: "postgr" → "postgresql"
        upper = q[:-1] + chr(ord(q[-1]) + 1)
        for term, entity_id in store.entity_terms_between(q, upper, 200):
            ratio = len(q) / len(term)
            if ratio >= PREFIX_RATIO:
                note(entity_id, str(term), PREFIX_WEIGHT * ratio, False, q)
        # entity words the query word starts with: "postgresql" → "postgr"
        prefixes = [q[:k] for k in range(MIN_PREFIX, len(q)) if k / len(q) >= PREFIX_RATIO]
        if prefixes:
            for term, entity_id in store.entity_terms_matching(prefixes, 200):
                note(entity_id, str(term), PREFIX_WEIGHT * len(str(term)) / len(q), False, q)
    return found


def _entity_scores(store: Any, found: Matches) -> dict[int, float]:
    """Score matched entities: matched words weighted by rarity, scaled by how much of the name matched.

    A fully matched name (every word, exactly) earns :data:`FULL_NAME_BONUS` on top, so "ClientA"
    asked about beats "ClientA billing contact" merely mentioned.
    """
    if not found:
        return {}
    ids = list(found)
    n_terms = {entity_id: max(1, n) for entity_id, n in store.entity_term_counts(ids).items()}
    all_terms = sorted({t for terms in found.values() for t in terms})
    df = store.term_entity_frequencies(all_terms)
    total = store.entity_id_ceiling() or 1
    scores: dict[int, float] = {}
    for entity_id, terms in found.items():
        if entity_id not in n_terms:
            continue
        exact_any = any(exact for _q, exact, _s in terms.values())
        quality = sum(q for q, _exact, _s in terms.values())
        if not exact_any and quality < 0.3:
            continue
        coverage = min(1.0, quality / n_terms[entity_id])
        weight = sum(q * math.log(1.0 + total / max(1, df.get(t, 1))) for t, (q, _e, _s) in terms.items())
        score = weight * (0.5 + 0.5 * coverage)
        if len(terms) >= n_terms[entity_id] and all(exact for _q, exact, _s in terms.values()):
            score += FULL_NAME_BONUS
        scores[entity_id] = score
    return scores


@lru_cache(maxsize=4096)
def _predicate_groups(predicate: str) -> tuple[tuple[str, ...], ...]:
    return tuple(predicate_words(predicate))


def _predicate_bonus(predicate: str, q_set: set[str]) -> tuple[float, bool]:
    """Score for query words naming the predicate, and whether every predicate word was named."""
    groups = _predicate_groups(predicate)
    if not groups:
        return 0.0, False
    matched = sum(1 for group in groups if q_set.intersection(group))
    return PREDICATE_WORD_WEIGHT * matched, matched == len(groups)


def _predicate_stems(predicate: str, q_set: set[str]) -> set[str]:
    return {q for group in _predicate_groups(predicate) for q in q_set.intersection(group)}


def match_facts(store: Any, keywords: Sequence[str], limit: int = 50) -> FactMatch:
    """Current facts about the entities (and predicates) a prompt names, best first.

    1. The prompt's keywords are stemmed and looked up in ``entity_terms`` — exactly, and by prefix
       in either direction for longer words — so ``ClientA's`` finds ClientA, ``postgres`` finds
       PostgreSQL and ``Tokyo`` finds "the Tokyo office".
    2. Each matched entity is scored (:func:`_entity_scores`); every current relation one hop from it
       (as subject or object) scores its subject's and object's scores plus a bonus per predicate word
       the prompt names (``payment terms``, with a few synonyms: ``pay`` → payment_terms).
    3. Predicates the prompt names in full (not generic ones like ``is``) also bring their current
       facts, at a lower score, so "what are the payment terms?" finds them without a name.
    4. Source entries are ranked by their best fact's score, so the channel takes part in fusion.

    The floor. Nothing matched → an empty result. A fact is *strong* when it carries two units of
    evidence — a fully matched name is one unit, each prompt word matched inside a longer name is
    one, each predicate word named is one — or when what matched covers every word of the prompt
    ("postgres" → the PostgreSQL entity); only strong facts' entries are ranked hits.
    A *weak* fact — one name matched while the prompt asks more ("what did Caroline research?"
    → any fact about Caroline) — is still returned as context in ``facts``, but its entries are
    listed in ``weak_entries`` (below the floor, left out of fusion). A hub (more than
    :data:`HUB_DEGREE` current facts, like ``project`` or a conversation's speaker) contributes only
    its :data:`HUB_KEEP` newest weak facts.
    """
    result = FactMatch()
    q_stems = query_stems(keywords)
    if not q_stems:
        return result
    q_set = set(q_stems)
    matches = _entity_matches(store, q_stems)
    scores = _entity_scores(store, matches)
    n_terms = {entity_id: max(1, n) for entity_id, n in store.entity_term_counts(list(scores)).items()}
    top = sorted(scores, key=lambda e: -scores[e])[:MAX_ENTITIES]

    candidates: dict[int, tuple[int, str, int, str]] = {}  # relation id → (subject, predicate, object, valid_from)
    if top:
        for role in ("subject", "object"):
            for rid, sid, pred, oid, since in store.current_relations_of(top, role, MAX_RELATIONS):
                candidates[int(rid)] = (int(sid), str(pred), int(oid), str(since))

    fact_scores: dict[int, float] = {}
    strong: set[int] = set()
    degree: dict[int, int] = {}
    for sid, _pred, oid, _since in candidates.values():
        for entity_id in {sid, oid}:
            if entity_id in scores:
                degree[entity_id] = degree.get(entity_id, 0) + 1

    def covered(entity_id: int) -> set[str]:
        if entity_id not in scores:
            return set()
        return {q for _q, _e, q in matches.get(entity_id, {}).values()}

    def units(entity_id: int) -> int:
        """A fully matched name is one unit of evidence; inside a longer name, each matched word is one."""
        if entity_id not in scores:
            return 0
        terms = matches.get(entity_id, {})
        if len(terms) >= n_terms.get(entity_id, 1):
            return 1
        return len({q for _q, _e, q in terms.values()})

    name_only: dict[int, list[tuple[str, int]]] = {}
    for rid, (sid, pred, oid, since) in candidates.items():
        bonus, _full = _predicate_bonus(pred, q_set)
        fact_scores[rid] = scores.get(sid, 0.0) + scores.get(oid, 0.0) + bonus
        evidence = units(sid) + units(oid) + len(_predicate_stems(pred, q_set))
        # two units from one prompt word ("billing" inside both "billing runbook" and
        # "docs/runbooks/billing.md") are one piece of evidence, not two
        distinct = len(covered(sid) | covered(oid) | _predicate_stems(pred, q_set))
        if (evidence >= 2 and distinct >= 2) or q_set <= covered(sid) | covered(oid) | _predicate_stems(pred, q_set):
            strong.add(rid)
        elif bonus == 0 and degree.get(sid if sid in scores else oid, 0) > HUB_DEGREE:
            name_only.setdefault(sid if sid in scores else oid, []).append((since, rid))
    below_floor: set[int] = set()
    for items in name_only.values():
        items.sort(reverse=True)
        below_floor.update(rid for _since, rid in items[HUB_KEEP:])
    for rid in below_floor:
        del fact_scores[rid]

    named = store.predicates_with_terms(q_stems)
    for pred in named:
        if pred in GENERIC_PREDICATES:
            continue
        bonus, full = _predicate_bonus(pred, q_set)
        if not full:
            continue
        for rid in store.current_relations_with_predicate(pred, PREDICATE_ONLY_LIMIT):
            rid = int(rid)
            if rid in below_floor or rid in fact_scores:
                continue
            fact_scores[rid] = PREDICATE_ONLY_FACTOR * bonus
            if q_set <= _predicate_stems(pred, q_set):
                strong.add(rid)

    if not fact_scores:
        return result
    facts = load_facts(store, list(fact_scores))
    for fact in facts:
        fact.score = round(fact_scores[fact.id], 6)
    facts = sorted(facts, key=lambda f: (-f.score, _desc(f.valid_from), -f.id))[:limit]

    best: dict[int, float] = {}
    weak: dict[int, float] = {}
    for fact in facts:
        target = best if fact.id in strong else weak
        for entry_id in fact.source_entry_ids:
            if fact.score > target.get(entry_id, -1.0):
                target[entry_id] = fact.score
    result.facts = facts
    result.entries = sorted(best.items(), key=lambda item: (-item[1], -item[0]))
    result.weak_entries = sorted(
        ((e, sc) for e, sc in weak.items() if e not in best), key=lambda item: (-item[1], -item[0]))
    result.dropped = len(below_floor)
    if top:
        names = store.entity_display_names(top)
        result.matched_entities = {names[e]: round(scores[e], 4) for e in top if e in names}
    return result


def _desc(text: str) -> str:
    """A sort key that orders ISO timestamps newest first inside an ascending sort."""
    return "".join(chr(0x10FFFF - ord(c)) for c in text)


# ----------------------------------------------------------------------------------------------
# `crib facts`
# ----------------------------------------------------------------------------------------------


def _line(fact: Fact, all_versions: bool) -> str:
    sources = ", ".join(str(i) for i in fact.source_entry_ids) or "none"
    head = f"{fact.subject} → {fact.predicate} → {fact.object}"
    if not all_versions:
        return f"{head} (since {day(fact.valid_from)}) [entries: {sources}]"
    if fact.valid_until is None:
        return f"{head} (from {fact.valid_from}, current) [entries: {sources}]"
    return f"{head} (from {fact.valid_from} until {fact.valid_until}) [entries: {sources}]"


def facts_command_output(store: Any, entity: str | None, all_versions: bool, as_json: bool) -> str:
    """The text ``crib facts [ENTITY] [--all] [--json]`` prints.

    Current facts by default; ``--all`` lists every version with its validity interval (full
    timestamps, since two versions often start on the same day). ``--json`` prints a JSON list of
    facts (``id``, ``subject``, ``predicate``, ``object``, ``valid_from``, ``valid_until``,
    ``sources``). An unknown entity prints an explanatory line (or ``[]``).
    """
    facts = fact_history(store, entity) if all_versions else current_facts(store, entity)
    if as_json:
        return json.dumps([f.to_json() for f in facts], ensure_ascii=False, indent=2)
    if not facts:
        if entity:
            return f"no facts about {entity!r}"
        return "no facts stored yet"
    return "\n".join(_line(f, all_versions) for f in facts)
