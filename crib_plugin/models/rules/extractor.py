"""The offline fact extractor: deterministic rules for the sentences agents actually write.

It is crib's default extractor when Ollama does not answer, so it must be safe: few precise facts
rather than noise. A sentence yields a fact only when it matches one of the patterns below *as a
whole clause* with a short subject (≤ 5 words, a name: no pronouns, verbs, conjunctions or
gerunds) and a short object (≤ 6 words); questions, passive voice ("was fixed"), vague objects
("is good", "is a lot"), subordinate clauses ("if …", "when …"), chit-chat openers ("Looks like
…", "Sounds like …") and first/second-person objects yield nothing. Measured on LoCoMo's 5,882
conversational turns, 1.2% yield a fact (``bench/bench_facts.py``); on agent-style notes, 85%.

Patterns (the table in ``tests/test_rules.py`` exercises each):

==================================================  ==============================================
text                                                triples
==================================================  ==============================================
``ClientA pays Net30`` / ``pays on net 30 terms``   (ClientA, payment_terms, Net30)
``X's payment terms are Y``                         (X, payment_terms, Y) — any ``X's ATTR is Y``
``The status of X is Y``                            (X, status, Y)
``we chose SQLite for storage``                     (project, storage_backend, SQLite)
``crib uses Redis for caching``                     (crib, cache_backend, Redis); other roles
                                                    ``used_for_<role>``
``X uses/chose/picked/adopted/switched to Y``       (X, uses, Y); ``Y and Z`` → two facts
``we switched from A to B``                         (project, uses, B), (project, not_uses, A)
``we use A instead of B`` / ``A over B``           (project, uses, A), (project, not_uses, B)
``we chose A for the billing service`` (no role)    (billing service, uses, A)
``X lives in / moved to Y``                         (X, lives_in, Y)
``X is based in / located in Y``                    (X, located_in, Y)
``X works at/for Y``                                (X, works_at, Y)
``X runs on / is deployed to / depends on Y``       (X, runs_on / deployed_to / depends_on, Y)
``X likes/loves/prefers/needs/requires/owns … Y``   (X, likes …, Y); ``a, b and c`` → three facts;
                                                    bare forms only for the project ("we like …")
``X is/was Y`` (Y a noun phrase or a Name)          (X, is, Y)
``X does not / doesn't / never V Y``                (X, not_<V>s, Y)
``X no longer uses / stopped using / dropped Y``    (X, not_uses, Y)
``X is not Y``                                      (X, not_is, Y)
``we decided to …`` / ``Decided to …``              (project, decided, …)
``A → B``                                           (A, maps_to, B)
``A → predicate → B``                               (A, predicate, B)
``key: value`` line                                 (project, key, value)
==================================================  ==============================================

"we", "our team", "I" (in decisions) and subject-less notes ("Chose SQLite for storage.") stand for
the project: subject ``project``. Role facts keep the holder as subject (``project →
storage_backend → SQLite``), the orientation the Ollama extractor uses too, so "switched to
Postgres for storage" supersedes SQLite under the single-valued rule of ``crib_plugin.store.facts``.
"now" is only a cue ("ClientA now pays Net45" → the new payment_terms); supersession itself is
decided by consolidation, not here.
"""

from __future__ import annotations

from dataclasses import dataclass

from ...core.records import Triple
from .patterns import (
    ARROW,
    KEY_VALUE,
    LABELS,
    ROLE_PREDICATES,
    SENTENCE_SPLIT,
)
from .phrases import (
    clause_lines,
    tidy,
)
from .sentences import (
    arrow,
    key_value,
    rule_attribute,
    rule_decided,
    rule_is,
    rule_neg_is,
    rule_neg_use,
    rule_neg_verb,
    rule_pay,
    rule_place,
    rule_relation,
    rule_switch,
    rule_use,
)

__all__ = ["RuleExtractor", "ROLE_PREDICATES"]


"""``… for <role>`` → the predicate naming that role; unknown roles become ``used_for_<role>``."""


@dataclass
class _Clause:
    """One clause being matched, with the text it came from (for debugging)."""

    text: str


class RuleExtractor:
    """Deterministic, offline fact extraction (see the module docstring for the pattern table)."""

    name = "rules"
    model = "rules-v1"

    def extract(self, text: str) -> list[Triple]:
        """The facts stated in ``text``: same text, same facts, always; never raises on odd input."""
        triples: list[Triple] = []
        seen: set[tuple[str, str, str]] = set()
        for line in clause_lines(text or ""):
            for triple in self._line(line):
                key = (triple.subject.casefold(), triple.predicate, triple.object.casefold())
                if key not in seen:
                    seen.add(key)
                    triples.append(triple)
        return triples

    # -- lines ------------------------------------------------------------------------------

    def _line(self, line: str) -> list[Triple]:
        if ARROW.search(line):
            found = arrow(line)
            if found is not None:
                return found
        match = KEY_VALUE.match(line)
        if match:
            key = match.group("key").strip()
            value = match.group("value").strip()
            if key.casefold() in LABELS or key.casefold().rstrip("s") in LABELS:
                line = value
            else:
                return key_value(key, value)
        out: list[Triple] = []
        for sentence in SENTENCE_SPLIT.split(line):
            out.extend(self._sentence(sentence))
        return out

    # -- sentences --------------------------------------------------------------------------

    def _sentence(self, sentence: str) -> list[Triple]:
        text = tidy(sentence)
        if not text or text.endswith("?"):
            return []
        text = text.rstrip(".!").strip()
        if not text:
            return []
        for rule in (
            rule_switch, rule_neg_use, rule_neg_is, rule_neg_verb, rule_pay, rule_place,
            rule_use, rule_decided, rule_attribute, rule_relation, rule_is,
        ):
            found = rule(text)
            if found is not None:
                return found
        return []
