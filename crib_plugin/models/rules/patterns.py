"""The rule extractor's vocabulary: sentence patterns (regexes), word lists and limits.

Split from :mod:`crib_plugin.models.rules` (the extractor class); data only, no logic.
"""

from __future__ import annotations

import re

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
BOUNDARY = re.compile(
    r"\s*(?:[,;(]|\s[-–—]\s|\s(?:because|since|so that|so|but|which|who|when|while|until|after|before|"
    r"due to|as|though|although|unless|if|whereas|instead of|rather than|except)\s)",
    re.IGNORECASE,
)


BOUNDARY_NO_COMMA = re.compile(
    r"\s*(?:[;(]|\s[-–—]\s|\s(?:because|since|so that|so|but|which|who|when|while|until|after|before|"
    r"due to|as|though|although|unless|if|whereas|instead of|rather than|except)\s)",
    re.IGNORECASE,
)

INSTEAD = re.compile(r"\s(?:instead of|rather than|over)\s+(?P<other>[^,;.()]+?)(?=\s+(?:for|as)\s|[,;.()]|$)", re.IGNORECASE)

FOR_ROLE = re.compile(r"^(?P<thing>.+?)\s+(?:for|as)\s+(?:the\s+|our\s+|its\s+|their\s+)?(?P<role>[\w .+/-]{2,30})$", re.I)

LIST_SPLIT = re.compile(r"\s*(?:,\s*(?:and\s+|or\s+)?|\s+and\s+|\s*&\s*)", re.IGNORECASE)

ARROW = re.compile(r"\s*(?:→|->|=>|⇒)\s*")

KEY_VALUE = re.compile(r"^(?P<key>[A-Za-z][\w .'’/()-]{0,40}?)\s*:\s+(?P<value>\S.*)$")

BULLET = re.compile(r"^\s*(?:[-*•+]|\d+[.)])\s+")

SENTENCE_SPLIT = re.compile(r"(?<=[.!?;])\s+(?=[\"'(\[]?[A-Z0-9])|\s*;\s*")

POSSESSIVE_ATTR = re.compile(r"^(?P<owner>.+?)(?:'s|’s)\s+(?P<attr>[a-z][\w ]{1,30}?)\s+(?:is|are|was|were)\s+(?:now\s+)?(?P<value>.+)$", re.I)

OF_ATTR = re.compile(r"^the\s+(?P<attr>[a-z][\w ]{1,30}?)\s+of\s+(?P<owner>.+?)\s+(?:is|are|was|were)\s+(?:now\s+)?(?P<value>.+)$", re.I)

NOW = r"(?:now\s+|also\s+|currently\s+|still\s+)?"

SWITCH = re.compile(
    rf"^(?P<s>.+?)\s+{NOW}(?:switched|moved|migrated|went)\s+from\s+(?P<a>.+?)\s+to\s+(?P<b>.+)$", re.I)

SWITCH_BARE = re.compile(r"^(?:switched|moved|migrated)\s+from\s+(?P<a>.+?)\s+to\s+(?P<b>.+)$", re.I)

NEG_USE = re.compile(
    r"^(?P<s>.+?)\s+(?:no longer uses?|does not use|doesn't use|do not use|don't use|did not use|didn't use|"
    r"never uses?|stopped using|dropped|removed|abandoned|got rid of|is no longer using|are no longer using)\s+(?P<o>.+)$",
    re.I)

NEG_BARE = re.compile(r"^(?:no longer using|stopped using|dropped|removed|abandoned|got rid of)\s+(?P<o>.+)$", re.I)

NEG_VERB = re.compile(
    r"^(?P<s>.+?)\s+(?P<neg>does not|doesn't|do not|don't|did not|didn't|never|no longer|will not|won't|cannot|can't|"
    r"should not|shouldn't)\s+(?P<v>[a-z]+(?:\s+(?:on|in|at|to|with|for))?)\s+(?P<o>.+)$", re.I)

NEG_IS = re.compile(r"^(?P<s>.+?)\s+(?:is not|isn't|are not|aren't|was not|wasn't|is no longer|are no longer)\s+(?P<o>.+)$", re.I)

PAY = re.compile(rf"^(?P<s>.+?)\s+{NOW}(?:pays|pay|paid|is paying|are paying)\s+(?:on\s+|us\s+)?(?P<o>.+)$", re.I)

PLACE = re.compile(
    rf"^(?P<s>.+?)\s+{NOW}(?P<v>lives in|live in|lived in|resides in|moved to|relocated to|is based in|are based in|"
    rf"is located in|are located in|is headquartered in|works at|works for|work at|work for|runs on|run on|"
    rf"is running on|is deployed to|are deployed to|is deployed on|deploys to|is hosted on|are hosted on|"
    rf"depends on|depend on|reports to)\s+(?P<o>.+)$", re.I)

PLACE_PREDICATE = {
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

USE = re.compile(rf"^(?P<s>.+?)\s+{NOW}(?P<v>{_USE_VERBS})\s+(?P<o>.+)$", re.I)

USE_BARE = re.compile(
    r"^(?:(?:we\s+|i\s+)?(?:chose|picked|selected|adopted|went with|settled on|switched to|migrated to|moved to|"
    r"decided to use|decided on|opted for|using|use|standardi[sz]ed on))\s+(?P<o>.+)$", re.I)

DECIDED = re.compile(r"^(?:(?P<s>.+?)\s+)?(?:decided|agreed|chose)\s+(?:to|that we would|we would|we will)\s+(?P<o>.+)$", re.I)

RELATION = re.compile(
    rf"^(?P<s>.+?)\s+{NOW}(?P<v>likes|like|loves|love|enjoys|enjoy|hates|hate|prefers|prefer|supports|support|"
    rf"requires|require|needs|need|owns|own|maintains|maintain|manages|manage|replaced|replaces|includes|contains|"
    rf"wraps|calls|blocks|speaks|studies|plays|knows)\s+(?P<o>.+)$", re.I)

IS = re.compile(r"^(?P<s>.+?)\s+(?:is|are|was|were)\s+(?:now\s+)?(?P<o>.+)$", re.I)

IRREGULAR_PARTICIPLES = frozenset("""
done made built written known seen given taken run gone found kept left lost paid sent set shown told
broken chosen driven eaten fallen forgotten frozen gotten hidden ridden risen spoken stolen sworn thrown
woken worn begun drunk sung sunk swum put cut hit hurt let shut split spread read
""".split())

PRONOUN_WORDS = frozenset("""
i i'm i've i'll i'd im ive me my mine myself you you're you've you'll youre your yours he he's him his she
she's her hers it it's its they they're they've them their theirs this that that's these those there
there's here here's what what's who who's which we we're we've we'll let's someone anyone everyone something
anything everything nothing us all
""".split())

VERBISH_WORDS = frozenset("""
is are was were be been am being do does did have has had will would can could should must might may
don't doesn't didn't isn't aren't wasn't won't can't
""".split())

NOT_A_SUBJECT_START = frozenset("""
looks sounds seems feels reminds makes keeps gets let thanks thank hope guess bet think wish glad sure yeah
yes yep nope no wow oh ah hey hi hello well maybe especially even plus just really definitely totally
honestly basically probably perhaps anyway btw lol haha omg please sorry congrats congratulations
good great nice awesome cool amazing
""".split())

PREPOSITIONS_START = frozenset("for with at in on by from to of about like into over under between".split())

UNRESOLVED = frozenset({
    "i", "me", "you", "he", "him", "she", "her", "it", "they", "them", "this", "that", "these", "those",
    "there", "here", "which", "who", "what", "one", "someone", "something", "everything", "nothing",
    "anything", "everyone", "all", "both", "none", "each", "either", "neither", "some", "many", "most",
})

AND_VERB = re.compile(r"\s(?:and|but)\s+(?:also\s+)?[a-z]+(?:s|ed)\s.*$")

PERSONAL = frozenset("i i'm im me you you're your yours it this that these those him he she they them".split())

LIGHT_VERBS = frozenset("""
be been being have has had get got go gone do done know knew think want see saw make made mean say said tell
feel look seem let really even ever always just quite stop try wait remember forget care mind worry
""".split())

TERMS_LIKE = re.compile(
    r"\d|[$€£¥]|\b(?:net|upfront|up-front|monthly|annually|yearly|weekly|quarterly|advance|delivery|receipt|"
    r"invoice|cash|card|card|upon|prepaid|cod|eom)\b", re.I)

NOUNISH_START = frozenset("a an the my our his her their its".split())

VAGUE_NOUNS = frozenset("""
bit lot little real big huge great good bad nice dream blast thrill pleasure relief boost game changer
must way thing kind sort piece part couple few
""".split())
