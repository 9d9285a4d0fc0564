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
Postgres for storage" supersedes SQLite under the single-valued rule of ``crib_plugin.facts``.
"now" is only a cue ("ClientA now pays Net45" → the new payment_terms); supersession itself is
decided by consolidation, not here.
"""

from __future__ import annotations

import re
from dataclasses import dataclass

from ..facts import clean_name, normalise_predicate, single_valued
from ..records import Triple

__all__ = ["RuleExtractor", "ROLE_PREDICATES"]

PROJECT = "project"
MAX_SUBJECT_WORDS = 5
MAX_OBJECT_WORDS = 6
MAX_DECISION_WORDS = 8
MAX_KEY_WORDS = 4
MAX_VALUE_WORDS = 8

ROLE_PREDICATES: dict[str, str] = {
    "storage": "storage_backend", "persistence": "storage_backend", "database": "storage_backend",
    "db": "storage_backend", "data storage": "storage_backend", "the database": "storage_backend",
    "cache": "cache_backend", "caching": "cache_backend",
    "logging": "logging_backend", "logs": "logging_backend",
    "queue": "queue_backend", "queues": "queue_backend", "queueing": "queue_backend", "queuing": "queue_backend",
    "background jobs": "queue_backend", "jobs": "queue_backend",
    "search": "search_backend", "full text search": "search_backend", "full-text search": "search_backend",
    "auth": "auth_backend", "authentication": "auth_backend",
    "embeddings": "embedding_model", "embedding": "embedding_model",
    "hosting": "hosting_provider", "deployment": "hosting_provider", "deploys": "hosting_provider",
    "ci": "ci_provider", "monitoring": "monitoring_backend", "metrics": "monitoring_backend",
}
"""``… for <role>`` → the predicate naming that role; unknown roles become ``used_for_<role>``."""

# Lines that merely introduce a sentence ("Decision: use SQLite") rather than state key: value.
LABELS = frozenset("""
note notes decision decisions correction update updates todo fix fixed error errors summary context
reason why question answer tldr tl;dr important warning example fyi ps result outcome problem issue
cause lesson lessons takeaway takeaways next learned learning observation idea plan action remember
""".split())

SUBORDINATORS = frozenset("""
if when whenever because since although though unless until while after before once so whether
as where how what why which who do does did can could should would will is are was were
""".split())

VAGUE = frozenset("""
good bad great fine ok okay nice done ready important true false correct wrong right better worse best
worst easy hard possible impossible necessary needed required available slow fast here there new old
same different interesting clear unclear annoying weird strange odd broken working fixed cool awesome
terrible obvious tricky complicated simple confusing useful useless likely unlikely sure unsure amazing
incredible beautiful fun tough rewarding inspiring calming exciting lovely wonderful fantastic perfect cute
""".split())

LEADING_FILLERS = ("now ", "also ", "currently ", "still ", "actually ", "finally ", "already ")
TRAILING_FILLERS = (
    " too", " as well", " now", " anymore", " any more", " instead", " again", " already", " currently",
    " today", " yet", " for now", " going forward", " from now on", " for sure",
)
BAD_OBJECT_START = frozenset("""
it them this that these those to which what how if whether who whom whose because so very really quite
also just probably likely being been going getting not no up down out off away back over around
""".split())

# Where an object phrase ends: the rest of the clause is a reason, a condition or an aside.
_BOUNDARY = re.compile(
    r"\s*(?:[,;(]|\s[-–—]\s|\s(?:because|since|so that|so|but|which|who|when|while|until|after|before|"
    r"due to|as|though|although|unless|if|whereas|instead of|rather than|except)\s)",
    re.IGNORECASE,
)
_BOUNDARY_NO_COMMA = re.compile(
    r"\s*(?:[;(]|\s[-–—]\s|\s(?:because|since|so that|so|but|which|who|when|while|until|after|before|"
    r"due to|as|though|although|unless|if|whereas|instead of|rather than|except)\s)",
    re.IGNORECASE,
)
_INSTEAD = re.compile(r"\s(?:instead of|rather than|over)\s+(?P<other>[^,;.()]+?)(?=\s+(?:for|as)\s|[,;.()]|$)", re.IGNORECASE)
_FOR_ROLE = re.compile(r"^(?P<thing>.+?)\s+(?:for|as)\s+(?:the\s+|our\s+|its\s+|their\s+)?(?P<role>[\w .+/-]{2,30})$", re.I)
_LIST_SPLIT = re.compile(r"\s*(?:,\s*(?:and\s+|or\s+)?|\s+and\s+|\s*&\s*)", re.IGNORECASE)
_ARROW = re.compile(r"\s*(?:→|->|=>|⇒)\s*")
_KEY_VALUE = re.compile(r"^(?P<key>[A-Za-z][\w .'’/()-]{0,40}?)\s*:\s+(?P<value>\S.*)$")
_BULLET = re.compile(r"^\s*(?:[-*•+]|\d+[.)])\s+")
_SENTENCE_SPLIT = re.compile(r"(?<=[.!?;])\s+(?=[\"'(\[]?[A-Z0-9])|\s*;\s*")
_POSSESSIVE_ATTR = re.compile(r"^(?P<owner>.+?)(?:'s|’s)\s+(?P<attr>[a-z][\w ]{1,30}?)\s+(?:is|are|was|were)\s+(?:now\s+)?(?P<value>.+)$", re.I)
_OF_ATTR = re.compile(r"^the\s+(?P<attr>[a-z][\w ]{1,30}?)\s+of\s+(?P<owner>.+?)\s+(?:is|are|was|were)\s+(?:now\s+)?(?P<value>.+)$", re.I)

NOW = r"(?:now\s+|also\s+|currently\s+|still\s+)?"

_SWITCH = re.compile(
    rf"^(?P<s>.+?)\s+{NOW}(?:switched|moved|migrated|went)\s+from\s+(?P<a>.+?)\s+to\s+(?P<b>.+)$", re.I)
_SWITCH_BARE = re.compile(r"^(?:switched|moved|migrated)\s+from\s+(?P<a>.+?)\s+to\s+(?P<b>.+)$", re.I)
_NEG_USE = re.compile(
    r"^(?P<s>.+?)\s+(?:no longer uses?|does not use|doesn't use|do not use|don't use|did not use|didn't use|"
    r"never uses?|stopped using|dropped|removed|abandoned|got rid of|is no longer using|are no longer using)\s+(?P<o>.+)$",
    re.I)
_NEG_BARE = re.compile(r"^(?:no longer using|stopped using|dropped|removed|abandoned|got rid of)\s+(?P<o>.+)$", re.I)
_NEG_VERB = re.compile(
    r"^(?P<s>.+?)\s+(?P<neg>does not|doesn't|do not|don't|did not|didn't|never|no longer|will not|won't|cannot|can't|"
    r"should not|shouldn't)\s+(?P<v>[a-z]+(?:\s+(?:on|in|at|to|with|for))?)\s+(?P<o>.+)$", re.I)
_NEG_IS = re.compile(r"^(?P<s>.+?)\s+(?:is not|isn't|are not|aren't|was not|wasn't|is no longer|are no longer)\s+(?P<o>.+)$", re.I)
_PAY = re.compile(rf"^(?P<s>.+?)\s+{NOW}(?:pays|pay|paid|is paying|are paying)\s+(?:on\s+|us\s+)?(?P<o>.+)$", re.I)
_PLACE = re.compile(
    rf"^(?P<s>.+?)\s+{NOW}(?P<v>lives in|live in|lived in|resides in|moved to|relocated to|is based in|are based in|"
    rf"is located in|are located in|is headquartered in|works at|works for|work at|work for|runs on|run on|"
    rf"is running on|is deployed to|are deployed to|is deployed on|deploys to|is hosted on|are hosted on|"
    rf"depends on|depend on|reports to)\s+(?P<o>.+)$", re.I)
_PLACE_PREDICATE = {
    "lives in": "lives_in", "live in": "lives_in", "lived in": "lives_in", "resides in": "lives_in",
    "moved to": "lives_in", "relocated to": "lives_in",
    "is based in": "located_in", "are based in": "located_in", "is located in": "located_in",
    "are located in": "located_in", "is headquartered in": "located_in",
    "works at": "works_at", "works for": "works_at", "work at": "works_at", "work for": "works_at",
    "runs on": "runs_on", "run on": "runs_on", "is running on": "runs_on",
    "is deployed to": "deployed_to", "are deployed to": "deployed_to", "is deployed on": "deployed_to",
    "deploys to": "deployed_to", "is hosted on": "deployed_to", "are hosted on": "deployed_to",
    "depends on": "depends_on", "depend on": "depends_on", "reports to": "reports_to",
}
_USE_VERBS = (
    r"uses|use|used|is using|are using|chose|choose|picked|pick|selected|adopted|adopt|went with|"
    r"settled on|switched to|switch to|migrated to|moved to|standardi[sz]ed on|decided to use|decided on|"
    r"opted for|prefer to use|will use|are going with|is going with"
)
_USE = re.compile(rf"^(?P<s>.+?)\s+{NOW}(?P<v>{_USE_VERBS})\s+(?P<o>.+)$", re.I)
_USE_BARE = re.compile(
    r"^(?:(?:we\s+|i\s+)?(?:chose|picked|selected|adopted|went with|settled on|switched to|migrated to|moved to|"
    r"decided to use|decided on|opted for|using|use|standardi[sz]ed on))\s+(?P<o>.+)$", re.I)
_DECIDED = re.compile(r"^(?:(?P<s>.+?)\s+)?(?:decided|agreed|chose)\s+(?:to|that we would|we would|we will)\s+(?P<o>.+)$", re.I)
_RELATION = re.compile(
    rf"^(?P<s>.+?)\s+{NOW}(?P<v>likes|like|loves|love|enjoys|enjoy|hates|hate|prefers|prefer|supports|support|"
    rf"requires|require|needs|need|owns|own|maintains|maintain|manages|manage|replaced|replaces|includes|contains|"
    rf"wraps|calls|blocks|speaks|studies|plays|knows)\s+(?P<o>.+)$", re.I)
_IS = re.compile(r"^(?P<s>.+?)\s+(?:is|are|was|were)\s+(?:now\s+)?(?P<o>.+)$", re.I)

_IRREGULAR_PARTICIPLES = frozenset("""
done made built written known seen given taken run gone found kept left lost paid sent set shown told
broken chosen driven eaten fallen forgotten frozen gotten hidden ridden risen spoken stolen sworn thrown
woken worn begun drunk sung sunk swum put cut hit hurt let shut split spread read
""".split())


def _third_person(verb: str) -> str:
    """``use`` → ``uses``, ``watch`` → ``watches``, ``carry`` → ``carries`` (for ``not_<verb>``)."""
    if verb.endswith(("s", "x", "z", "ch", "sh")):
        return verb + "es"
    if verb.endswith("y") and len(verb) > 2 and verb[-2] not in "aeiou":
        return verb[:-1] + "ies"
    return verb + "s"


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
        for line in _lines(text or ""):
            for triple in self._line(line):
                key = (triple.subject.casefold(), triple.predicate, triple.object.casefold())
                if key not in seen:
                    seen.add(key)
                    triples.append(triple)
        return triples

    # -- lines ------------------------------------------------------------------------------

    def _line(self, line: str) -> list[Triple]:
        if _ARROW.search(line):
            found = _arrow(line)
            if found is not None:
                return found
        match = _KEY_VALUE.match(line)
        if match:
            key = match.group("key").strip()
            value = match.group("value").strip()
            if key.casefold() in LABELS or key.casefold().rstrip("s") in LABELS:
                line = value
            else:
                return _key_value(key, value)
        out: list[Triple] = []
        for sentence in _SENTENCE_SPLIT.split(line):
            out.extend(self._sentence(sentence))
        return out

    # -- sentences --------------------------------------------------------------------------

    def _sentence(self, sentence: str) -> list[Triple]:
        text = _tidy(sentence)
        if not text or text.endswith("?"):
            return []
        text = text.rstrip(".!").strip()
        if not text:
            return []
        for rule in (
            _rule_switch, _rule_neg_use, _rule_neg_is, _rule_neg_verb, _rule_pay, _rule_place,
            _rule_use, _rule_decided, _rule_attribute, _rule_relation, _rule_is,
        ):
            found = rule(text)
            if found is not None:
                return found
        return []


# ----------------------------------------------------------------------------------------------
# Helpers
# ----------------------------------------------------------------------------------------------


def _lines(text: str) -> list[str]:
    out: list[str] = []
    for raw in text.splitlines():
        line = _BULLET.sub("", raw).strip()
        line = re.sub(r"^type=\w+\s+", "", line)
        line = line.replace("**", "").replace("__", "").replace("`", "")
        line = re.sub(r"^#+\s*", "", line)
        if line:
            out.append(line)
    return out


def _tidy(sentence: str) -> str:
    text = " ".join(sentence.split())
    text = re.sub(r"^(?:so|also|now|then|and|but|update|ok|okay|finally|today|yesterday),?\s+", "", text, flags=re.I)
    return text.strip()


def _words(text: str) -> list[str]:
    return text.split()


def _subject(raw: str, *, decision: bool = False) -> str | None:
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
    if first in SUBORDINATORS or first in NOT_A_SUBJECT_START or first in _PREPOSITIONS_START:
        return None
    if any(w in _PRONOUN_WORDS or w in _VERBISH_WORDS for w in folded):
        return None
    if first.endswith("ing") and len(first) > 4 and len(words) > 0:
        return None  # a gerund ("Winning is a thrill", "Having two dogs is a lot") is not a name
    name = clean_name(text)
    if not name or name.casefold() in _UNRESOLVED:
        return None
    return name


_PRONOUN_WORDS = frozenset("""
i i'm i've i'll i'd im ive me my mine myself you you're you've you'll youre your yours he he's him his she
she's her hers it it's its they they're they've them their theirs this that that's these those there
there's here here's what what's who who's which we we're we've we'll let's someone anyone everyone something
anything everything nothing us all
""".split())
_VERBISH_WORDS = frozenset("""
is are was were be been am being do does did have has had will would can could should must might may
don't doesn't didn't isn't aren't wasn't won't can't
""".split())
NOT_A_SUBJECT_START = frozenset("""
looks sounds seems feels reminds makes keeps gets let thanks thank hope guess bet think wish glad sure yeah
yes yep nope no wow oh ah hey hi hello well maybe especially even plus just really definitely totally
honestly basically probably perhaps anyway btw lol haha omg please sorry congrats congratulations
good great nice awesome cool amazing
""".split())
_PREPOSITIONS_START = frozenset("for with at in on by from to of about like into over under between".split())

_UNRESOLVED = frozenset({
    "i", "me", "you", "he", "him", "she", "her", "it", "they", "them", "this", "that", "these", "those",
    "there", "here", "which", "who", "what", "one", "someone", "something", "everything", "nothing",
    "anything", "everyone", "all", "both", "none", "each", "either", "neither", "some", "many", "most",
})


_AND_VERB = re.compile(r"\s(?:and|but)\s+(?:also\s+)?[a-z]+(?:s|ed)\s.*$")


def _object(raw: str, *, max_words: int = MAX_OBJECT_WORDS) -> str | None:
    """The object phrase: cut at the clause boundary, fillers trimmed, short and concrete, or None."""
    text = _BOUNDARY.split(" " + raw.strip(), maxsplit=1)[0].strip()
    text = _AND_VERB.sub("", text)  # "German Shepherd and loves sweaters" → "German Shepherd"
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
    if any(w.casefold().strip(".,'’!") in _PERSONAL for w in words):
        return None
    name = clean_name(text)
    if not name or name.casefold() in _UNRESOLVED:
        return None
    return name


_PERSONAL = frozenset("i i'm im me you you're your yours it this that these those him he she they them".split())


def _concrete(value: str) -> bool:
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
    if first in _IRREGULAR_PARTICIPLES or (first.endswith("ed") and len(first) > 4) or first.endswith("ing"):
        return False
    return True


def _split_list(obj: str, predicate: str) -> list[str]:
    """``React and Vite`` → two objects for a multi-valued predicate (each part ≤ 3 words)."""
    if single_valued(predicate):
        return [obj]
    parts = [p.strip() for p in _LIST_SPLIT.split(obj) if p.strip()]
    if len(parts) > 1 and all(len(p.split()) <= 3 for p in parts):
        return [clean_name(p) for p in parts if clean_name(p)]
    return [obj]


def _list_objects(raw: str, predicate: str) -> list[str] | None:
    """``painting, hiking and jazz`` (commas, then a final "and") → its items, for multi-valued predicates."""
    if single_valued(predicate) or "," not in raw:
        return None
    clause = _BOUNDARY_NO_COMMA.split(" " + raw.strip(), maxsplit=1)[0].strip().rstrip(".!")
    if not re.search(r",\s*(?:and|or)\s+|\sand\s", clause):
        return None
    parts = [p.strip() for p in _LIST_SPLIT.split(clause) if p.strip()]
    if len(parts) < 2 or any(len(p.split()) > 3 for p in parts):
        return None
    items = [_object(p) for p in parts]
    if any(i is None for i in items):
        return None
    return [i for i in items if i]


def _triples(subject: str, predicate: str, obj: str, raw: str = "") -> list[Triple]:
    predicate = normalise_predicate(predicate)
    if not predicate:
        return []
    objects = (_list_objects(raw, predicate) if raw else None) or _split_list(obj, predicate)
    return [Triple(subject, predicate, o) for o in objects if o.casefold() != subject.casefold()]


def _role(role: str) -> str | None:
    key = " ".join(role.casefold().split()).rstrip(".")
    if key in ROLE_PREDICATES:
        return ROLE_PREDICATES[key]
    if len(key.split()) > 3 or not re.match(r"^[a-z][a-z0-9 +/-]*$", key):
        return None
    return "used_for_" + re.sub(r"[^a-z0-9]+", "_", key).strip("_")


def _use_facts(subject: str, raw_object: str) -> list[Triple] | None:
    """"SQLite for storage" → role fact; "React and Vite" → uses facts; "A instead of B" → + not_uses B."""
    extra: list[Triple] = []
    instead = _INSTEAD.search(" " + raw_object)
    if instead:
        other = _object(instead.group("other"))
        if other:
            extra.append(Triple(subject, "not_uses", other))
        padded = " " + raw_object
        raw_object = (padded[: instead.start()] + padded[instead.end():]).strip()  # "A over B for X" → "A for X"
    head = _BOUNDARY.split(" " + raw_object.strip(), maxsplit=1)[0].strip().rstrip(".")
    role_match = _FOR_ROLE.match(head)
    if role_match:
        thing = _object(role_match.group("thing"))
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
    obj = _object(raw_object)
    if obj is None:
        return extra or None
    return _triples(subject, "uses", obj, raw_object) + extra


# ----------------------------------------------------------------------------------------------
# Rules: each returns None when it does not apply, or the triples (possibly []) when it does
# ----------------------------------------------------------------------------------------------


def _rule_switch(text: str) -> list[Triple] | None:
    match = _SWITCH.match(text)
    subject: str | None
    if match:
        subject = _subject(match.group("s"), decision=True)
    else:
        match = _SWITCH_BARE.match(text)
        subject = PROJECT if match else None
    if not match or subject is None:
        return None
    old = _object(match.group("a"))
    found = _use_facts(subject, match.group("b"))
    if not found or old is None:
        return None
    return [*found, Triple(subject, "not_uses", old)]


def _rule_neg_use(text: str) -> list[Triple] | None:
    match = _NEG_USE.match(text)
    subject: str | None
    if match:
        subject = _subject(match.group("s"), decision=True)
    else:
        match = _NEG_BARE.match(text)
        subject = PROJECT if match else None
    if not match or subject is None:
        return None
    obj = _object(match.group("o"))
    return [Triple(subject, "not_uses", o) for o in _split_list(obj, "not_uses")] if obj else None


def _rule_neg_is(text: str) -> list[Triple] | None:
    match = _NEG_IS.match(text)
    if not match:
        return None
    subject = _subject(match.group("s"))
    obj = _object(match.group("o"))
    if not subject or not obj or not _concrete(obj):
        return None
    return [Triple(subject, "not_is", obj)]


def _rule_neg_verb(text: str) -> list[Triple] | None:
    match = _NEG_VERB.match(text)
    if not match:
        return None
    subject = _subject(match.group("s"), decision=True)
    obj = _object(match.group("o"))
    if not subject or not obj:
        return None
    verb, _, prep = match.group("v").casefold().partition(" ")
    if verb in _LIGHT_VERBS:
        return None
    inflected = match.group("neg").casefold() in ("never", "no longer")  # "never rotates": already inflected
    if inflected and verb.endswith("s") and not verb.endswith("ss"):
        verb = verb[:-2] if verb.endswith(("ches", "shes", "sses", "xes", "zes")) else verb[:-1]
    predicate = normalise_predicate(_third_person(verb) + ("_" + prep if prep else ""))
    if predicate == "payment_terms" or verb == "pay":
        predicate = "payment_terms"
    return [Triple(subject, f"not_{predicate}", o) for o in _split_list(obj, f"not_{predicate}")]


_LIGHT_VERBS = frozenset("""
be been being have has had get got go gone do done know knew think want see saw make made mean say said tell
feel look seem let really even ever always just quite stop try wait remember forget care mind worry
""".split())


_TERMS_LIKE = re.compile(
    r"\d|[$€£¥]|\b(?:net|upfront|up-front|monthly|annually|yearly|weekly|quarterly|advance|delivery|receipt|"
    r"invoice|cash|card|card|upon|prepaid|cod|eom)\b", re.I)


def _rule_pay(text: str) -> list[Triple] | None:
    match = _PAY.match(text)
    if not match:
        return None
    subject = _subject(match.group("s"))
    raw = re.sub(r"\s+(?:payment\s+)?terms?\b.*$", "", match.group("o"), flags=re.I)
    obj = _object(raw)
    if not subject or not obj or not _TERMS_LIKE.search(obj):
        return None  # "hard work pays off" is not a payment term
    return [Triple(subject, "payment_terms", obj)]


def _rule_place(text: str) -> list[Triple] | None:
    match = _PLACE.match(text)
    if not match:
        return None
    verb = " ".join(match.group("v").casefold().split())
    subject = _subject(match.group("s"))
    if verb in ("moved to", "relocated to") and subject == PROJECT:
        return None  # "we moved to Postgres" is a technology switch: the use rule handles it
    obj = _object(match.group("o"))
    if not subject or not obj:
        return None
    predicate = _PLACE_PREDICATE[verb]
    return _triples(subject, predicate, obj)


def _rule_use(text: str) -> list[Triple] | None:
    match = _USE.match(text)
    subject: str | None = None
    if match:
        subject = _subject(match.group("s"), decision=True)
        raw = match.group("o")
        if subject is None:
            return None
        verb = match.group("v").casefold()
        if verb in ("moved to",) and subject != PROJECT:
            return None
    else:
        match = _USE_BARE.match(text)
        if not match:
            return None
        subject, raw = PROJECT, match.group("o")
    return _use_facts(subject, raw)


def _rule_decided(text: str) -> list[Triple] | None:
    match = _DECIDED.match(text)
    if not match:
        return None
    if match.group("s") and len(match.group("s").split()) > 3:
        return None
    subject = _subject(match.group("s"), decision=True) if match.group("s") else PROJECT
    obj = _object(match.group("o"), max_words=MAX_DECISION_WORDS)
    if not subject or not obj:
        return None
    return [Triple(subject, "decided", obj)]


def _rule_attribute(text: str) -> list[Triple] | None:
    for pattern in (_POSSESSIVE_ATTR, _OF_ATTR):
        match = pattern.match(text)
        if not match:
            continue
        owner = _subject(match.group("owner"))
        attr = normalise_predicate(match.group("attr"))
        raw = match.group("value").strip()
        value = _object(raw)
        plain_word = bool(value and len(value.split()) == 1 and value.casefold() not in VAGUE)
        if not owner or not attr or not value or not (plain_word or _noun_phrase(raw)) or len(attr.split("_")) > 3:
            return None
        return [Triple(owner, attr, value)]
    return None


def _rule_relation(text: str) -> list[Triple] | None:
    match = _RELATION.match(text)
    if not match:
        return None
    verb = match.group("v").casefold()
    subject = _subject(match.group("s"), decision=not verb.endswith(("s", "ed")))
    if not verb.endswith(("s", "ed")) and subject != PROJECT:
        return None  # "Sounds like …", "You must love …": a bare verb form with another subject is not a fact
    obj = _object(match.group("o"))
    if not subject or not obj:
        return None
    return _triples(subject, verb, obj, match.group("o"))


_NOUNISH_START = frozenset("a an the my our his her their its".split())
_VAGUE_NOUNS = frozenset("""
bit lot little real big huge great good bad nice dream blast thrill pleasure relief boost game changer
must way thing kind sort piece part couple few
""".split())


def _noun_phrase(raw: str) -> bool:
    """The object of "X is …" must name something: "a/the/my …", a Name, or an identifier (Fly.io, v2)."""
    words = raw.split()
    if not words:
        return False
    first = words[0]
    if first.casefold() in _NOUNISH_START:
        return len(words) > 1 and words[1].casefold().strip(".,") not in _VAGUE_NOUNS and words[1].casefold() not in VAGUE
    if first[0].isupper() or first[0].isdigit():
        return first.casefold() not in VAGUE
    return bool(re.search(r"[._/\-]|\d", first))


def _rule_is(text: str) -> list[Triple] | None:
    match = _IS.match(text)
    if not match:
        return None
    subject = _subject(match.group("s"))
    raw = re.sub(r"^(?:now|also|still|currently|actually)\s+", "", match.group("o").strip(), flags=re.I)
    if not subject or subject == PROJECT or not _noun_phrase(raw):
        return None
    obj = _object(raw)
    if not obj or not _concrete(obj):
        return None
    return [Triple(subject, "is", obj)]


def _arrow(line: str) -> list[Triple] | None:
    """``A → B`` (maps_to) and ``A → predicate → B``; a capitalised middle part means a chain."""
    parts = [p.strip().rstrip(".") for p in _ARROW.split(line)]
    if len(parts) < 2 or any(not p for p in parts) or len(parts) > 4:
        return None
    if any(len(p.split()) > MAX_OBJECT_WORDS for p in parts):
        return None
    names = [clean_name(p) for p in parts]
    if any(not n or n.casefold() in _UNRESOLVED for n in names):
        return None
    if len(parts) == 3 and re.match(r"^[a-z][a-z_ ]*$", parts[1]) and len(parts[1].split()) <= 3:
        predicate = normalise_predicate(parts[1])
        return [Triple(names[0], predicate, names[2])] if predicate else None
    return [Triple(a, "maps_to", b) for a, b in zip(names, names[1:])]


def _key_value(key: str, value: str) -> list[Triple]:
    """``Owner: Dana Lee`` → (project, owner, Dana Lee); ``ClientA's terms: Net30`` → (ClientA, terms …)."""
    if len(key.split()) > MAX_KEY_WORDS:
        return []
    value = value.strip().rstrip(".")
    if not value or len(value.split()) > MAX_VALUE_WORDS or re.search(r"[.!?;]\s", value):
        return []
    subject = PROJECT
    possessive = re.match(r"^(?P<owner>.+?)(?:'s|’s)\s+(?P<attr>.+)$", key)
    if possessive:
        owner = _subject(possessive.group("owner"))
        if owner:
            subject, key = owner, possessive.group("attr")
    predicate = normalise_predicate(key)
    obj = clean_name(value)
    if not predicate or not obj or predicate.startswith("not_"):
        return []
    return [Triple(subject, predicate, obj)]
