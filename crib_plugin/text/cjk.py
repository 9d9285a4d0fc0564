"""CJK text helpers shared by the query parser, the relevance gate and the store's gram index:
the CJK character classes, NFKC folding and Latin words glued to CJK text. A leaf module (stdlib
only), so that ``store/cjk`` can index grams without importing the query layer above it.
"""

from __future__ import annotations

import functools
import re
import unicodedata

_CJK_RANGES = (
    "\u3005-\u3007"  # 々 〆 〇 (iteration mark, closing mark, ideographic zero)
    "\u3040-\u309f"  # Hiragana
    "\u30a0-\u30ff"  # Katakana (with the prolonged sound mark ー)
    "\u3130-\u318f"  # Hangul compatibility jamo
    "\u31f0-\u31ff"  # Katakana phonetic extensions
    "\u3400-\u4dbf"  # CJK Extension A
    "\u4e00-\u9fff"  # CJK Unified Ideographs
    "\uf900-\ufaff"  # CJK Compatibility Ideographs
    "\uac00-\ud7af"  # Hangul syllables
    "\u1100-\u11ff"  # Hangul Jamo
    "\uff66-\uff9f"  # half-width katakana (NFKC folds them to full width before gramming)
    "\U00020000-\U0002fa1f"  # CJK Extensions B–F and compatibility supplement
)


class NonAsciiPattern:
    """A regex of non-ASCII characters only, compiled on first use, that answers ASCII text itself.

    The CJK character classes take ~12 ms to compile (their charset tables are large), and the
    per-prompt process compiles them anew every time, although most prompts are ASCII and can
    never match: for ASCII text each method returns what the compiled pattern would, at once.
    """

    def __init__(self, source: str) -> None:
        self.source = source

    @functools.cached_property
    def compiled(self) -> "re.Pattern[str]":
        return re.compile(self.source)

    def search(self, text: str) -> "re.Match[str] | None":
        return None if text.isascii() else self.compiled.search(text)

    def fullmatch(self, text: str) -> "re.Match[str] | None":
        return None if text.isascii() else self.compiled.fullmatch(text)

    def findall(self, text: str) -> list[str]:
        return [] if text.isascii() else self.compiled.findall(text)

    def sub(self, replacement: str, text: str) -> str:
        return text if text.isascii() else self.compiled.sub(replacement, text)

    def split(self, text: str) -> list[str]:
        return [text] if text.isascii() else self.compiled.split(text)


CJK_RE = NonAsciiPattern(f"[{_CJK_RANGES}]")
CJK_RUN_RE = NonAsciiPattern(f"[{_CJK_RANGES}]+")
_TOKEN_RE = re.compile(r"[^\W_]+", re.UNICODE)  # what unicode61 calls a token


def normalise_cjk(text: str) -> str:
    """NFKC: half-width katakana and compatibility ideographs fold to their usual forms.

    Applied to entries when their grams are indexed and to prompts when theirs are computed, so the
    two sides always agree.
    """
    return unicodedata.normalize("NFKC", text)


def glued_words(text: str) -> list[str]:
    """Latin words written against CJK characters with no space: "使用SQLite作为" → ``sqlite``.

    The word index (unicode61) would keep "使用sqlite作为" as one token, so such words could never be
    found by themselves; the CJK gram index holds them as words of their own.
    """
    found: list[str] = []
    for token in _TOKEN_RE.findall(normalise_cjk(text)):
        if CJK_RE.search(token) and not CJK_RUN_RE.fullmatch(token):
            found.extend(piece.lower() for piece in CJK_RUN_RE.split(token) if piece)
    return found


def entry_grams(text: str) -> set[str]:
    """Every unigram and adjacent pair of an entry's (normalised) CJK text: what a CJK prompt's
    grams (``read.query.cjk_grams``) are looked up in."""
    grams: set[str] = set()
    for run in CJK_RUN_RE.findall(normalise_cjk(text)):
        grams.update(run)
        grams.update(run[i:i + 2] for i in range(len(run) - 1))
    return grams
