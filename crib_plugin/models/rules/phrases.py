"""Naming for the rule extractor: subjects, objects, lists and roles → predicates and triples.

Split from :mod:`crib_plugin.models.rules`; the sentence rules in :mod:`.sentences` build on it.
"""

from __future__ import annotations

import re

from ...core.records import Triple
from ...store.facts import clean_name, normalise_predicate, single_valued
from .patterns import (
    AND_VERB,
    BAD_OBJECT_START,
    BOUNDARY,
    BOUNDARY_NO_COMMA,
    BULLET,
    FOR_ROLE,
    INSTEAD,
    IRREGULAR_PARTICIPLES,
    LEADING_FILLERS,
    LIST_SPLIT,
    MAX_OBJECT_WORDS,
    MAX_SUBJECT_WORDS,
    NOT_A_SUBJECT_START,
    NOUNISH_START,
    PERSONAL,
    PREPOSITIONS_START,
    PROJECT,
    PRONOUN_WORDS,
    ROLE_PREDICATES,
    SUBORDINATORS,
    TRAILING_FILLERS,
    UNRESOLVED,
    VAGUE,
    VAGUE_NOUNS,
    VERBISH_WORDS,
)


def third_person(verb: str) -> str:
    """``use`` → ``uses``, ``watch`` → ``watches``, ``carry`` → ``carries`` (for ``not_<verb>``)."""
    if verb.endswith(("s", "x", "z", "ch", "sh")):
        return verb + "es"
    if verb.endswith("y") and len(verb) > 2 and verb[-2] not in "aeiou":
        return verb[:-1] + "ies"
    return verb + "s"


def clause_lines(text: str) -> list[str]:
    out: list[str] = []
    for raw in text.splitlines():
        line = BULLET.sub("", raw).strip()
        line = re.sub(r"^type=\w+\s+", "", line)
        line = line.replace("**", "").replace("__", "").replace("`", "")
        line = re.sub(r"^#+\s*", "", line)
        if line:
            out.append(line)
    return out


def tidy(sentence: str) -> str:
    text = " ".join(sentence.split())
    text = re.sub(r"^(?:so|also|now|then|and|but|update|ok|okay|finally|today|yesterday),?\s+", "", text, flags=re.I)
    return text.strip()


def _words(text: str) -> list[str]:
    return text.split()


def subject_name(raw: str, *, decision: bool = False) -> str | None:
    """A clean subject, ``project`` for "we", or None when the subject is not a short name."""
    text = raw.strip().strip(",")
    lower = text.casefold()
    if lower in ("we", "our team", "the team", "our project", "this project", "we've", "we have", "we'll"):
        return PROJECT
    if decision and lower in ("i", "i've", "i have"):
        return PROJECT
    text = re.sub(r"^our\s+", "", text, flags=re.I)
    words = _words(text)
    if not words or len(words) > MAX_SUBJECT_WORDS:
        return None
    if any(c in text for c in ",;:\"()!?") or " - " in f" {text} ":
        return None
    folded = [w.casefold().replace("’", "'").strip(".'") for w in words]
    if "and" in folded or "or" in folded:
        return None  # "Alice and Bob …": conservative, no compound subjects
    first = folded[0]
    if first in SUBORDINATORS or first in NOT_A_SUBJECT_START or first in PREPOSITIONS_START:
        return None
    if any(w in PRONOUN_WORDS or w in VERBISH_WORDS for w in folded):
        return None
    if first.endswith("ing") and len(first) > 4 and len(words) > 0:
        return None  # a gerund ("Winning is a thrill", "Having two dogs is a lot") is not a name
    name = clean_name(text)
    if not name or name.casefold() in UNRESOLVED:
        return None
    return name


def object_phrase(raw: str, *, max_words: int = MAX_OBJECT_WORDS) -> str | None:
    """The object phrase: cut at the clause boundary, fillers trimmed, short and concrete, or None."""
    text = BOUNDARY.split(" " + raw.strip(), maxsplit=1)[0].strip()
    text = AND_VERB.sub("", text)  # "German Shepherd and loves sweaters" → "German Shepherd"
    text = text.rstrip(".!?:").strip()
    changed = True
    while changed:
        changed = False
        lower = text.casefold()
        for filler in LEADING_FILLERS:
            if lower.startswith(filler):
                text, changed = text[len(filler):].strip(), True
                break
        lower = text.casefold()
        for filler in TRAILING_FILLERS:
            if lower.endswith(filler):
                text, changed = text[: -len(filler)].strip(), True
                break
    words = _words(text)
    if not words or len(words) > max_words:
        return None
    if words[0].casefold() in BAD_OBJECT_START:
        return None
    if any(w.casefold().strip(".,'’!") in PERSONAL for w in words):
        return None
    name = clean_name(text)
    if not name or name.casefold() in UNRESOLVED:
        return None
    return name


def is_concrete(value: str) -> bool:
    """Not a vague judgement ("good", "very slow"), a participle ("fixed", "used") or a gerund."""
    words = value.casefold().split()
    if not words:
        return False
    first = words[0]
    if first in VAGUE or (len(words) == 1 and words[0] in VAGUE):
        return False
    if first in ("a", "an", "the") and len(words) > 1:
        first = words[1]
        if first in VAGUE and len(words) == 2:
            return False
        return True
    if first in IRREGULAR_PARTICIPLES or (first.endswith("ed") and len(first) > 4) or first.endswith("ing"):
        return False
    return True


def split_list(obj: str, predicate: str) -> list[str]:
    """``React and Vite`` → two objects for a multi-valued predicate (each part ≤ 3 words)."""
    if single_valued(predicate):
        return [obj]
    parts = [p.strip() for p in LIST_SPLIT.split(obj) if p.strip()]
    if len(parts) > 1 and all(len(p.split()) <= 3 for p in parts):
        return [clean_name(p) for p in parts if clean_name(p)]
    return [obj]


def _list_objects(raw: str, predicate: str) -> list[str] | None:
    """``painting, hiking and jazz`` (commas, then a final "and") → its items, for multi-valued predicates."""
    if single_valued(predicate) or "," not in raw:
        return None
    clause = BOUNDARY_NO_COMMA.split(" " + raw.strip(), maxsplit=1)[0].strip().rstrip(".!")
    if not re.search(r",\s*(?:and|or)\s+|\sand\s", clause):
        return None
    parts = [p.strip() for p in LIST_SPLIT.split(clause) if p.strip()]
    if len(parts) < 2 or any(len(p.split()) > 3 for p in parts):
        return None
    items = [object_phrase(p) for p in parts]
    if any(i is None for i in items):
        return None
    return [i for i in items if i]


def make_triples(subject: str, predicate: str, obj: str, raw: str = "") -> list[Triple]:
    predicate = normalise_predicate(predicate)
    if not predicate:
        return []
    objects = (_list_objects(raw, predicate) if raw else None) or split_list(obj, predicate)
    return [Triple(subject, predicate, o) for o in objects if o.casefold() != subject.casefold()]


def _role(role: str) -> str | None:
    key = " ".join(role.casefold().split()).rstrip(".")
    if key in ROLE_PREDICATES:
        return ROLE_PREDICATES[key]
    if len(key.split()) > 3 or not re.match(r"^[a-z][a-z0-9 +/-]*$", key):
        return None
    return "used_for_" + re.sub(r"[^a-z0-9]+", "_", key).strip("_")


def use_facts(subject: str, raw_object: str) -> list[Triple] | None:
    """"SQLite for storage" → role fact; "React and Vite" → uses facts; "A instead of B" → + not_uses B."""
    extra: list[Triple] = []
    instead = INSTEAD.search(" " + raw_object)
    if instead:
        other = object_phrase(instead.group("other"))
        if other:
            extra.append(Triple(subject, "not_uses", other))
        padded = " " + raw_object
        raw_object = (padded[: instead.start()] + padded[instead.end():]).strip()  # "A over B for X" → "A for X"
    head = BOUNDARY.split(" " + raw_object.strip(), maxsplit=1)[0].strip().rstrip(".")
    role_match = FOR_ROLE.match(head)
    if role_match:
        thing = object_phrase(role_match.group("thing"))
        predicate = _role(role_match.group("role"))
        determined = bool(re.search(r"\b(?:the|our|its|their)\s+$", head[: role_match.start("role")], re.I))
        if thing and predicate and subject == PROJECT and predicate.startswith("used_for_") and determined:
            # "for the billing service" names a component; "for templates" / "for testing" a role
            # "we chose PostgreSQL for the billing service": the billing service is the subject that
            # uses it — a findable entity — not a predicate of the project.
            component = clean_name(role_match.group("role"))
            if component:
                extra = [Triple(component, t.predicate, t.object) for t in extra]
                return [Triple(component, "uses", thing), *extra]
        if thing and predicate:
            return [Triple(subject, predicate, thing), *extra]
    obj = object_phrase(raw_object)
    if obj is None:
        return extra or None
    return make_triples(subject, "uses", obj, raw_object) + extra


def noun_phrase(raw: str) -> bool:
    """The object of "X is …" must name something: "a/the/my …", a Name, or an identifier (Fly.io, v2)."""
    words = raw.split()
    if not words:
        return False
    first = words[0]
    if first.casefold() in NOUNISH_START:
        return len(words) > 1 and words[1].casefold().strip(".,") not in VAGUE_NOUNS and words[1].casefold() not in VAGUE
    if first[0].isupper() or first[0].isdigit():
        return first.casefold() not in VAGUE
    return bool(re.search(r"[._/\-]|\d", first))
