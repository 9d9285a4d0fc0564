"""Tag neutralisation: make memory tags inside stored text inert before it is rendered in a block.

Only the ``<`` of each memory tag (or of a look-alike: fullwidth, entities, invisible characters)
becomes :data:`~crib_plugin.text.scrub.stream.NEUTRAL_LT`; all other text is left as it is.
"""

from __future__ import annotations

import functools
import re
import unicodedata

from .stream import NAME, NEUTRAL_LT


def _prefix_alternatives(word: str) -> str:
    """Regex matching any non-empty prefix of ``word`` (literal characters), longest first."""
    return "|".join(re.escape(word[:k]) for k in range(len(word), 0, -1))


# Characters that render as nothing (zero-width spaces and joiners, soft hyphen, BOM, bidi marks):
# a reader does not see them, so "<mem\u200bory>" reads as a memory tag.
_INVISIBLE = "\u00ad\u034f\u061c\u115f\u1160\u17b4\u17b5\u180e\u200b-\u200f\u202a-\u202e\u2060-\u206f\ufeff"
_Z = f"[{_INVISIBLE}]*"
_SP = f"[ \t\n\r\f\v{_INVISIBLE}]*"
# Every way of writing "<" that a reader (or a model) still takes for one: ASCII, fullwidth, small
# form, HTML entities.  (The single angle quotation mark that neutralising produces is not one.)
_LT_FORMS = r"(?:<|\uff1c|\ufe64|&lt;?|&#0*60;?|&#x0*3c;?)"
_SLASH_FORMS = r"(?:/|\uff0f|&#0*47;?|&#x0*2f;?|&sol;)"


def _letter(ch: str) -> str:
    """A letter of the tag name, ASCII or fullwidth, any case."""
    forms = {ch.lower(), ch.upper(), chr(ord(ch.lower()) + 0xFEE0), chr(ord(ch.upper()) + 0xFEE0)}
    return "[" + "".join(sorted(re.escape(f) for f in forms)) + "]"


def _name_pattern(word: str) -> str:
    """``word`` letter by letter, with invisible characters allowed between the letters."""
    parts = [_letter(c) if c.isalpha() else f"(?:{re.escape(c)}|\uff0d)" for c in word]
    return _Z.join(parts)


_NAME_RE = _name_pattern("memory") + f"(?:{_Z}" + _name_pattern("-context") + ")?"
_BOUNDARY = f"(?:[ \t\n\r\f\v/>\uff1e\uff0f]|&gt;?|&#0*62;?|&#x0*3e;?|{_Z}\\Z)"

# A "<" that starts a memory tag in any form a reader might take for one: whitespace allowed after
# "<" and around "/" (more liberal than the scrubber, on purpose), the name followed by a boundary
# or the end of the text -- or, at the very end of the text, a "<" that the text after it could
# still extend into a memory tag ("<", "</", "<mem", "</memory-cont"), since the template text that
# follows the stored text could complete it.  This is the plain form (ASCII): small, compiled at import.
_NEUTRALISE_RE = re.compile(
    r"<(?=[ \t\n\r\f\v]*/?[ \t\n\r\f\v]*memory(?:-context)?(?:[ \t\n\r\f\v/>]|\Z)"
    r"|/?(?:" + _prefix_alternatives(NAME) + r")?\Z)",
    re.IGNORECASE | re.ASCII,
)
# Any sign of a look-alike: a fullwidth or small "<", a fullwidth letter, an invisible character, an
# entity for "<".  Only then is the large pattern below compiled and used (it takes tens of ms).
_LOOKALIKE_HINT = re.compile(f"[\uff1c\ufe64\uff21-\uff5a{_INVISIBLE}]|&(?:lt|#0*60|#x0*3c)", re.IGNORECASE)


@functools.lru_cache(maxsize=1)
def _lookalike_re() -> re.Pattern[str]:
    """:data:`_NEUTRALISE_RE` widened to look-alikes: "<" in any of its forms (fullwidth, small,
    entities), invisible characters allowed after it, around "/" and between the name's letters,
    the name in ASCII or fullwidth letters."""
    return re.compile(
        f"{_LT_FORMS}(?={_SP}(?:{_SLASH_FORMS})?{_SP}{_NAME_RE}{_Z}{_BOUNDARY}"
        r"|/?(?:" + _prefix_alternatives(NAME) + r")?\Z)",
        re.IGNORECASE,
    )


# Confusables of the tag's characters that NFKC leaves apart (Unicode's confusables.txt, the letters
# of "memory-context" and the brackets): Cyrillic and Greek letters, angle brackets of other
# scripts. Folded before matching, so "</mеmory-context>" with a Cyrillic е reads as the tag it
# looks like. "‹" (NEUTRAL_LT, what neutralising produces) is deliberately not a "<".
_CONFUSABLE = str.maketrans({
    "а": "a", "с": "c", "е": "e", "һ": "h", "і": "i", "к": "k", "м": "m", "н": "h", "о": "o", "р": "p",
    "т": "t", "у": "y", "х": "x", "ү": "y", "г": "r", "ѕ": "s", "ԁ": "d", "ո": "n", "օ": "o", "ս": "u",
    "ο": "o", "ε": "e", "κ": "k", "ν": "v", "ρ": "p", "τ": "t", "υ": "u", "χ": "x", "γ": "y", "μ": "m",
    "ı": "i", "ʏ": "y", "ᴍ": "m", "ᴇ": "e", "ᴏ": "o", "ʀ": "r", "ᴄ": "c", "ɴ": "n", "ᴛ": "t",
    "〈": "<", "〉": ">", "⟨": "<", "⟩": ">", "❬": "<", "❭": ">", "❮": "<", "❯": ">",
    "˂": "<", "˃": ">", "ᐸ": "<", "ᐳ": ">", "‐": "-", "‑": "-", "‒": "-", "–": "-", "—": "-", "−": "-",
    "⁄": "/", "∕": "/", "⧸": "/", "╱": "/",
})
_INVISIBLE_SET = re.compile(f"[{_INVISIBLE}]")


@functools.lru_cache(maxsize=4096)
def _fold_char(ch: str) -> str:
    """One character as the tag matcher reads it: NFKC, then the confusable fold, lowercase;
    invisible characters read as nothing."""
    if _INVISIBLE_SET.match(ch):
        return ""
    return unicodedata.normalize("NFKC", ch).translate(_CONFUSABLE).lower()


def _could_open_a_tag(text: str) -> bool:
    """Whether any character of ``text`` outside ASCII folds to "<" (cheap: no fold otherwise)."""
    return not text.isascii() and any(_fold_char(ch) == "<" for ch in set(text) if not ch.isascii())


def _neutralise_folded(text: str) -> str:
    """Neutralise the tags that only read as tags once folded (:func:`_fold_char`): the text's
    skeleton is matched with the plain pattern, each hit's "<" replaced in the original text."""
    skeleton: list[str] = []
    origin: list[int] = []
    for i, ch in enumerate(text):
        folded = _fold_char(ch)
        skeleton.append(folded)
        origin.extend([i] * len(folded))
    hits = {origin[m.start()] for m in _NEUTRALISE_RE.finditer("".join(skeleton))}
    if not hits:
        return text
    return "".join(NEUTRAL_LT if i in hits else ch for i, ch in enumerate(text))


def neutralise_tags(text: str) -> str:
    """See :func:`_neutralise_ascii_and_lookalikes`; then tags that only read as tags once folded
    by NFKC and the confusable map (a Cyrillic е, a Greek ο, "〈/memory-context〉")."""
    text = _neutralise_ascii_and_lookalikes(text)
    return _neutralise_folded(text) if _could_open_a_tag(text) or _has_folded_name(text) else text


def _has_folded_name(text: str) -> bool:
    """A non-ASCII text with "<" whose name letters may be confusables (only then is it folded)."""
    return "<" in text and not text.isascii()


def _neutralise_ascii_and_lookalikes(text: str) -> str:
    """Make every memory tag in ``text`` inert, so stored text can't open or close a memory fence.

    Only the ``<`` of each memory tag is replaced, by :data:`NEUTRAL_LT` ("‹"); all other text,
    including code and HTML with ``<`` and ``>``, is left exactly as it is.  Covered: everything the
    scrubber treats as a memory tag (any case, attributes, whitespace before ``>``), plus the looser
    forms a human or model might still read as one (``< memory>``, ``< /memory >``, ``</ memory>``),
    plus a memory tag cut off at the end of the text (``<memory``, ``</memory-context a="x``) and a
    trailing ``<`` that the following template text could complete (``<``, ``</``, ``<mem``).
    Look-alikes are neutralised too, so no reader takes stored text for crib's fence: fullwidth
    brackets and letters (``＜memory＞``), HTML entities (``&lt;/memory&gt;``, ``&#60;memory>``)
    and invisible characters inside the tag (``<mem\u200bory>``, ``<\u200b/memory>``); the whole
    ``<`` form (``&lt;`` included) becomes one ``‹``.
    Idempotent: the result contains no such ``<``, so a second pass changes nothing.
    """
    if _LOOKALIKE_HINT.search(text):
        return _lookalike_re().sub(NEUTRAL_LT, text)
    if "<" not in text:
        return text
    return _NEUTRALISE_RE.sub(NEUTRAL_LT, text)
