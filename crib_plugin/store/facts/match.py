"""The facts channel's search: :func:`match_facts` finds current facts about what a prompt names.

It lives outside the channel so benchmarks can call it without the plugin machinery;
``crib_plugin/channels/facts.py`` wraps it as a channel.
"""

from __future__ import annotations

import math
from dataclasses import dataclass, field
from functools import lru_cache
from typing import TYPE_CHECKING, Any, Sequence

from ...core.records import Fact

if TYPE_CHECKING:  # pragma: no cover
    pass

from .query import load_facts
from .terms import predicate_words, stems, useful

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
            if useful(word) and stem not in out:
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
    found = _score_entities(store, q_stems)
    candidates = _candidate_relations(store, found.top)
    fact_scores, strong, below_floor = _score_relations(found, candidates)
    _add_predicate_only(store, q_stems, found.q_set, fact_scores, strong, below_floor)
    if not fact_scores:
        return result
    facts = load_facts(store, list(fact_scores))
    for fact in facts:
        fact.score = round(fact_scores[fact.id], 6)
    result.facts = sorted(facts, key=lambda f: (-f.score, _desc(f.valid_from), -f.id))[:limit]
    result.entries, result.weak_entries = _rank_entries(result.facts, strong)
    result.dropped = len(below_floor)
    if found.top:
        names = store.entity_display_names(found.top)
        result.matched_entities = {names[e]: round(found.scores[e], 4) for e in found.top if e in names}
    return result


Candidates = dict[int, tuple[int, str, int, str]]  # relation id → (subject, predicate, object, valid_from)


@dataclass
class _Found:
    """The entity step's result: which entity words each query stem reached, and the entity scores."""

    q_set: set[str]
    matches: Matches
    scores: dict[int, float]
    n_terms: dict[int, int]
    top: list[int]

    def covered(self, entity_id: int) -> set[str]:
        """The query stems that reached this entity's name."""
        if entity_id not in self.scores:
            return set()
        return {q for _q, _e, q in self.matches.get(entity_id, {}).values()}

    def units(self, entity_id: int) -> int:
        """A fully matched name is one unit of evidence; inside a longer name, each matched word is one."""
        if entity_id not in self.scores:
            return 0
        terms = self.matches.get(entity_id, {})
        if len(terms) >= self.n_terms.get(entity_id, 1):
            return 1
        return len({q for _q, _e, q in terms.values()})


def _score_entities(store: Any, q_stems: Sequence[str]) -> _Found:
    """Step 1: the entities the prompt's stems reach, scored, and the :data:`MAX_ENTITIES` best."""
    matches = _entity_matches(store, q_stems)
    scores = _entity_scores(store, matches)
    n_terms = {entity_id: max(1, n) for entity_id, n in store.entity_term_counts(list(scores)).items()}
    top = sorted(scores, key=lambda e: -scores[e])[:MAX_ENTITIES]
    return _Found(set(q_stems), matches, scores, n_terms, top)


def _candidate_relations(store: Any, top: Sequence[int]) -> Candidates:
    """Step 2: every current relation one hop from a top entity (as subject or object)."""
    candidates: Candidates = {}
    if top:
        for role in ("subject", "object"):
            for rid, sid, pred, oid, since in store.current_relations_of(top, role, MAX_RELATIONS):
                candidates[int(rid)] = (int(sid), str(pred), int(oid), str(since))
    return candidates


def _score_relations(found: _Found, candidates: Candidates) -> tuple[dict[int, float], set[int], set[int]]:
    """Step 2 (scores): each candidate's score, which ones are strong, and hub facts below the floor."""
    scores, q_set = found.scores, found.q_set
    degree: dict[int, int] = {}
    for sid, _pred, oid, _since in candidates.values():
        for entity_id in {sid, oid}:
            if entity_id in scores:
                degree[entity_id] = degree.get(entity_id, 0) + 1
    fact_scores: dict[int, float] = {}
    strong: set[int] = set()
    name_only: dict[int, list[tuple[str, int]]] = {}
    for rid, (sid, pred, oid, since) in candidates.items():
        bonus, _full = _predicate_bonus(pred, q_set)
        fact_scores[rid] = scores.get(sid, 0.0) + scores.get(oid, 0.0) + bonus
        evidence = found.units(sid) + found.units(oid) + len(_predicate_stems(pred, q_set))
        # two units from one prompt word ("billing" inside both "billing runbook" and
        # "docs/runbooks/billing.md") are one piece of evidence, not two
        words = found.covered(sid) | found.covered(oid) | _predicate_stems(pred, q_set)
        if (evidence >= 2 and len(words) >= 2) or q_set <= words:
            strong.add(rid)
        elif bonus == 0 and degree.get(sid if sid in scores else oid, 0) > HUB_DEGREE:
            name_only.setdefault(sid if sid in scores else oid, []).append((since, rid))
    below_floor: set[int] = set()
    for items in name_only.values():
        items.sort(reverse=True)
        below_floor.update(rid for _since, rid in items[HUB_KEEP:])
    for rid in below_floor:
        del fact_scores[rid]
    return fact_scores, strong, below_floor


def _add_predicate_only(
    store: Any, q_stems: Sequence[str], q_set: set[str], fact_scores: dict[int, float], strong: set[int], below_floor: set[int]
) -> None:
    """Step 3: current facts of predicates the prompt names in full (not generic ones), at a lower score."""
    for pred in store.predicates_with_terms(q_stems):
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


def _rank_entries(facts: Sequence[Fact], strong: set[int]) -> tuple[list[tuple[int, float]], list[tuple[int, float]]]:
    """Step 4: source entries ranked by their best fact's score — strong facts' and weak-only ones'."""
    best: dict[int, float] = {}
    weak: dict[int, float] = {}
    for fact in facts:
        target = best if fact.id in strong else weak
        for entry_id in fact.source_entry_ids:
            if fact.score > target.get(entry_id, -1.0):
                target[entry_id] = fact.score
    entries = sorted(best.items(), key=lambda item: (-item[1], -item[0]))
    weak_entries = sorted(((e, sc) for e, sc in weak.items() if e not in best), key=lambda item: (-item[1], -item[0]))
    return entries, weak_entries


def _desc(text: str) -> str:
    """A sort key that orders ISO timestamps newest first inside an ascending sort."""
    return "".join(chr(0x10FFFF - ord(c)) for c in text)
