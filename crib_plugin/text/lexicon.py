"""Irregular English inflections the porter stemmer cannot join ("choose" / "chose" / "chosen").

Porter strips suffixes; it cannot know that "chose" is "choose" or "went" is "go", so "what did we
choose?" would never match "Chose SQLite for storage." Query words are expanded with the other
forms of their verb (and a few irregular plurals); entries are indexed as written.
"""

from __future__ import annotations

_FORMS = """
arise arose arisen|awake awoke awoken|be was were been|bear bore borne|beat beaten|become became
begin began begun|bend bent|bet|bind bound|bite bit bitten|bleed bled|blow blew blown|break broke broken
breed bred|bring brought|build built|burn burnt|buy bought|catch caught|choose chose chosen|cling clung
come came|cost|creep crept|cut|deal dealt|dig dug|do did done|draw drew drawn|dream dreamt|drink drank drunk
drive drove driven|eat ate eaten|fall fell fallen|feed fed|feel felt|fight fought|find found|flee fled
fly flew flown|forbid forbade forbidden|forget forgot forgotten|forgive forgave forgiven|freeze froze frozen
get got gotten|give gave given|go went gone|grind ground|grow grew grown|hang hung|have has had|hear heard
hide hid hidden|hit|hold held|hurt|keep kept|kneel knelt|know knew known|lay laid|lead led|lean leant
leave left|lend lent|let|lie lay lain|light lit|lose lost|make made|mean meant|meet met|pay paid|prove proven
put|quit|read|ride rode ridden|ring rang rung|rise rose risen|run ran|say said|see saw seen|seek sought
sell sold|send sent|set|shake shook shaken|shine shone|shoot shot|show shown|shrink shrank shrunk|shut
sing sang sung|sink sank sunk|sit sat|sleep slept|slide slid|speak spoke spoken|speed sped|spend spent
spin spun|split|spread|spring sprang sprung|stand stood|steal stole stolen|stick stuck|sting stung
stink stank stunk|strike struck|swear swore sworn|sweep swept|swim swam swum|swing swung|take took taken
teach taught|tear tore torn|tell told|think thought|throw threw thrown|understand understood|wake woke woken
wear wore worn|weave wove woven|weep wept|win won|wind wound|withdraw withdrew withdrawn|write wrote written
child children|person people|man men|woman women|mouse mice|foot feet|tooth teeth|analysis analyses
index indices|datum data
"""

VARIANTS: dict[str, tuple[str, ...]] = {}
for _group in _FORMS.replace("\n", "|").split("|"):
    _words = tuple(_group.split())
    for _word in _words:
        VARIANTS.setdefault(_word, _words)


def variants(word: str) -> tuple[str, ...]:
    """All forms of ``word`` (itself first), or just ``(word,)`` when it is regular."""
    forms = VARIANTS.get(word.lower())
    if not forms:
        return (word,)
    return (word, *(f for f in forms if f != word.lower()))
