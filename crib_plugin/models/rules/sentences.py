"""The rule extractor's sentence rules: each returns None when it does not apply, or the triples.

Split from :mod:`crib_plugin.models.rules` (the extractor class that tries them in order).
"""

from __future__ import annotations

import re

from ...core.records import Triple
from ...store.facts import clean_name, normalise_predicate
from .patterns import (
    ARROW,
    DECIDED,
    IS,
    LIGHT_VERBS,
    MAX_DECISION_WORDS,
    MAX_KEY_WORDS,
    MAX_OBJECT_WORDS,
    MAX_VALUE_WORDS,
    NEG_BARE,
    NEG_IS,
    NEG_USE,
    NEG_VERB,
    OF_ATTR,
    PAY,
    PLACE,
    PLACE_PREDICATE,
    POSSESSIVE_ATTR,
    PROJECT,
    RELATION,
    SWITCH,
    SWITCH_BARE,
    TERMS_LIKE,
    UNRESOLVED,
    USE,
    USE_BARE,
    VAGUE,
)
from .phrases import (
    is_concrete,
    make_triples,
    noun_phrase,
    object_phrase,
    split_list,
    subject_name,
    third_person,
    use_facts,
)


def rule_switch(text: str) -> list[Triple] | None:
    match = SWITCH.match(text)
    subject: str | None
    if match:
        subject = subject_name(match.group("s"), decision=True)
    else:
        match = SWITCH_BARE.match(text)
        subject = PROJECT if match else None
    if not match or subject is None:
        return None
    old = object_phrase(match.group("a"))
    found = use_facts(subject, match.group("b"))
    if not found or old is None:
        return None
    return [*found, Triple(subject, "not_uses", old)]


def rule_neg_use(text: str) -> list[Triple] | None:
    match = NEG_USE.match(text)
    subject: str | None
    if match:
        subject = subject_name(match.group("s"), decision=True)
    else:
        match = NEG_BARE.match(text)
        subject = PROJECT if match else None
    if not match or subject is None:
        return None
    obj = object_phrase(match.group("o"))
    return [Triple(subject, "not_uses", o) for o in split_list(obj, "not_uses")] if obj else None


def rule_neg_is(text: str) -> list[Triple] | None:
    match = NEG_IS.match(text)
    if not match:
        return None
    subject = subject_name(match.group("s"))
    obj = object_phrase(match.group("o"))
    if not subject or not obj or not is_concrete(obj):
        return None
    return [Triple(subject, "not_is", obj)]


def rule_neg_verb(text: str) -> list[Triple] | None:
    match = NEG_VERB.match(text)
    if not match:
        return None
    subject = subject_name(match.group("s"), decision=True)
    obj = object_phrase(match.group("o"))
    if not subject or not obj:
        return None
    verb, _, prep = match.group("v").casefold().partition(" ")
    if verb in LIGHT_VERBS:
        return None
    inflected = match.group("neg").casefold() in ("never", "no longer")  # "never rotates": already inflected
    if inflected and verb.endswith("s") and not verb.endswith("ss"):
        verb = verb[:-2] if verb.endswith(("ches", "shes", "sses", "xes", "zes")) else verb[:-1]
    predicate = normalise_predicate(third_person(verb) + ("_" + prep if prep else ""))
    if predicate == "payment_terms" or verb == "pay":
        predicate = "payment_terms"
    return [Triple(subject, f"not_{predicate}", o) for o in split_list(obj, f"not_{predicate}")]


def rule_pay(text: str) -> list[Triple] | None:
    match = PAY.match(text)
    if not match:
        return None
    subject = subject_name(match.group("s"))
    raw = re.sub(r"\s+(?:payment\s+)?terms?\b.*$", "", match.group("o"), flags=re.I)
    obj = object_phrase(raw)
    if not subject or not obj or not TERMS_LIKE.search(obj):
        return None  # "hard work pays off" is not a payment term
    return [Triple(subject, "payment_terms", obj)]


def rule_place(text: str) -> list[Triple] | None:
    match = PLACE.match(text)
    if not match:
        return None
    verb = " ".join(match.group("v").casefold().split())
    subject = subject_name(match.group("s"))
    if verb in ("moved to", "relocated to") and subject == PROJECT:
        return None  # "we moved to Postgres" is a technology switch: the use rule handles it
    obj = object_phrase(match.group("o"))
    if not subject or not obj:
        return None
    predicate = PLACE_PREDICATE[verb]
    return make_triples(subject, predicate, obj)


def rule_use(text: str) -> list[Triple] | None:
    match = USE.match(text)
    subject: str | None = None
    if match:
        subject = subject_name(match.group("s"), decision=True)
        raw = match.group("o")
        if subject is None:
            return None
        verb = match.group("v").casefold()
        if verb in ("moved to",) and subject != PROJECT:
            return None
    else:
        match = USE_BARE.match(text)
        if not match:
            return None
        subject, raw = PROJECT, match.group("o")
    return use_facts(subject, raw)


def rule_decided(text: str) -> list[Triple] | None:
    match = DECIDED.match(text)
    if not match:
        return None
    if match.group("s") and len(match.group("s").split()) > 3:
        return None
    subject = subject_name(match.group("s"), decision=True) if match.group("s") else PROJECT
    obj = object_phrase(match.group("o"), max_words=MAX_DECISION_WORDS)
    if not subject or not obj:
        return None
    return [Triple(subject, "decided", obj)]


def rule_attribute(text: str) -> list[Triple] | None:
    for pattern in (POSSESSIVE_ATTR, OF_ATTR):
        match = pattern.match(text)
        if not match:
            continue
        owner = subject_name(match.group("owner"))
        attr = normalise_predicate(match.group("attr"))
        raw = match.group("value").strip()
        value = object_phrase(raw)
        plain_word = bool(value and len(value.split()) == 1 and value.casefold() not in VAGUE)
        if not owner or not attr or not value or not (plain_word or noun_phrase(raw)) or len(attr.split("_")) > 3:
            return None
        return [Triple(owner, attr, value)]
    return None


def rule_relation(text: str) -> list[Triple] | None:
    match = RELATION.match(text)
    if not match:
        return None
    verb = match.group("v").casefold()
    subject = subject_name(match.group("s"), decision=not verb.endswith(("s", "ed")))
    if not verb.endswith(("s", "ed")) and subject != PROJECT:
        return None  # "Sounds like …", "You must love …": a bare verb form with another subject is not a fact
    obj = object_phrase(match.group("o"))
    if not subject or not obj:
        return None
    return make_triples(subject, verb, obj, match.group("o"))


def rule_is(text: str) -> list[Triple] | None:
    match = IS.match(text)
    if not match:
        return None
    subject = subject_name(match.group("s"))
    raw = re.sub(r"^(?:now|also|still|currently|actually)\s+", "", match.group("o").strip(), flags=re.I)
    if not subject or subject == PROJECT or not noun_phrase(raw):
        return None
    obj = object_phrase(raw)
    if not obj or not is_concrete(obj):
        return None
    return [Triple(subject, "is", obj)]


def arrow(line: str) -> list[Triple] | None:
    """``A → B`` (maps_to) and ``A → predicate → B``; a capitalised middle part means a chain."""
    parts = [p.strip().rstrip(".") for p in ARROW.split(line)]
    if len(parts) < 2 or any(not p for p in parts) or len(parts) > 4:
        return None
    if any(len(p.split()) > MAX_OBJECT_WORDS for p in parts):
        return None
    names = [clean_name(p) for p in parts]
    if any(not n or n.casefold() in UNRESOLVED for n in names):
        return None
    if len(parts) == 3 and re.match(r"^[a-z][a-z_ ]*$", parts[1]) and len(parts[1].split()) <= 3:
        predicate = normalise_predicate(parts[1])
        return [Triple(names[0], predicate, names[2])] if predicate else None
    return [Triple(a, "maps_to", b) for a, b in zip(names, names[1:])]


def key_value(key: str, value: str) -> list[Triple]:
    """``Owner: Dana Lee`` → (project, owner, Dana Lee); ``ClientA's terms: Net30`` → (ClientA, terms …)."""
    if len(key.split()) > MAX_KEY_WORDS:
        return []
    value = value.strip().rstrip(".")
    if not value or len(value.split()) > MAX_VALUE_WORDS or re.search(r"[.!?;]\s", value):
        return []
    subject = PROJECT
    possessive = re.match(r"^(?P<owner>.+?)(?:'s|’s)\s+(?P<attr>.+)$", key)
    if possessive:
        owner = subject_name(possessive.group("owner"))
        if owner:
            subject, key = owner, possessive.group("attr")
    predicate = normalise_predicate(key)
    obj = clean_name(value)
    if not predicate or not obj or predicate.startswith("not_"):
        return []
    return [Triple(subject, predicate, obj)]
