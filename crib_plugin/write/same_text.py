"""A memory stated again is the same memory (issue 20), on the write path of ``Memory.write``.

``remember`` of a text already stored, sent again without ``when`` (or with another type), used to
store a second entry that superseded the first, and ``recall`` showed both. Now the current entry
with the same whitespace-normalised text, and the same metadata but for its cue and source, is
reported as the duplicate — its cue updated when a new ``when`` comes with it. The bulk paths
(import, evaluation stores) keep the exact duplicate rule: a conversation's repeated words are
separate turns.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from ..core.cues import cue_of
from ..core.write_types import WriteReport
from .manage import set_cue

if TYPE_CHECKING:  # pragma: no cover
    from ..core.write_types import NewEntry, WriteReport
    from ..plugins.contracts import MemoryLike

NOT_IDENTITY = frozenset({"when", "when_by", "source"})
"""Metadata that does not make a memory another one: its recall cue (``cues.CUE_KEY``,
``CUE_BY_KEY``) and the route it came by. Anything else (a conversation's ``thread``, a
``session``) does: the same words said in another conversation are another turn."""


def same_text_report(memory: "MemoryLike", item: "NewEntry") -> "WriteReport | None":
    """A current memory with ``item``'s text (whitespace-normalised) and, but for its cue and
    source, its metadata — whatever its type — reported as the duplicate it is, its cue updated
    when ``item`` brings a different one; or ``None``.

    A remembered text sent again (an agent retrying, or adding ``when`` later) is the same memory:
    storing it again made a second entry that superseded the first, and recall showed both."""
    def identity(metadata: Any) -> dict[str, Any]:
        return {k: v for k, v in (metadata or {}).items() if k not in NOT_IDENTITY}

    ids = memory.store.find_same_text(item.content)
    entries = memory.store.get_entries(ids) if ids else {}
    found = next((i for i in ids if i in entries and identity(entries[i].metadata) == identity(item.metadata)), None)
    if found is None:
        return None
    report = WriteReport(found, duplicate=True, notes=[f"the same text is memory {found}: not stored again"])
    cue = cue_of(item.metadata)
    if cue and cue != cue_of(entries[found].metadata):
        set_cue(memory, found, cue)
        report.notes.append("its cue (when) is updated")
    return report
