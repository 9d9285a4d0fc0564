"""Records of the no-answer set and the coding queries, and the targets a prompt can carry.

Split from :mod:`crib_eval.noanswer` (loading, running), which re-exports them; the
reports in :mod:`.noanswer_report` use them too.
"""

from __future__ import annotations

from dataclasses import dataclass

TARGETS = ("locomo", "coding", "both")


@dataclass(frozen=True)
class NoAnswerPrompt:
    """A prompt with no relevant memory in its target store(s), and why it is there."""

    prompt: str
    target: str  # locomo | coding | both
    why: str = ""

    def runs_on(self, store_kind: str) -> bool:
        """True when this prompt is asserted to have no answer in stores of ``store_kind``."""
        return self.target == "both" or self.target == store_kind


@dataclass(frozen=True)
class CodingQuery:
    """A prompt that should inject the coding-memory entries at ``expected`` (0-based line numbers)."""

    prompt: str
    expected: tuple[int, ...]
    kind: str = ""  # keyword | paraphrase | identifier | cjk
