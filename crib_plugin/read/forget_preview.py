"""What ``crib forget --query`` offers to remove: a read (recall, then the entries that name the
query's words), kept on the read side so the management functions below it never import the read path."""

from __future__ import annotations

from typing import TYPE_CHECKING, Any, Sequence

from ..core.errors import InputError
from ..write.manage import entry_data
from .pipeline import recall
from .query import prepare

if TYPE_CHECKING:  # pragma: no cover
    from ..plugins.contracts import MemoryLike


def mentions(content: str, words: Sequence[str]) -> bool:
    """Whether ``content`` itself contains one of the query's words (a plural or -ing may differ)."""
    text = content.lower()
    return any(word[: max(4, len(word) - 3)] in text if len(word) > 4 else word in text for word in words)


def preview_forget(memory: "MemoryLike", query: str, limit: int = 20) -> list[dict[str, Any]]:
    """The entries ``forget --query`` would remove: the channels' hits for ``query`` whose own text
    contains one of its words. A neighbour found only through its thread's context, or a vector
    that is merely close, is not offered for deletion."""
    if not query.strip():
        raise InputError("forget --query needs some text to match")
    prepared = prepare(query)
    words = [w.lower() for w in prepared.keywords] + list(prepared.cjk_terms)
    hits = [h for h in recall(memory, query).hits if mentions(h.entry.content, words)][:limit]
    out = []
    for hit in hits:
        data = entry_data(memory, hit.entry.id)
        data["score"] = round(hit.score, 6)
        out.append(data)
    return out
