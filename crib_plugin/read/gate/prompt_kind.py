"""Is a prompt a *task* ("set up the invoice job") or a *question* ("which broker do we use?")?

The two are served differently (issue 12): a task is best served by the decisions, corrections and
errors that change how it should be done, and its vector similarity is dominated by the project it
names, so only a distinctive cosine counts for it (:mod:`crib_plugin.read.gate.specific`).
"""

from __future__ import annotations

import re

_QUESTION_START = re.compile(
    r"^\s*(?:what|which|who|whom|whose|when|where|why|how|is|are|was|were|do|does|did|can|could|should|"
    r"would|will|have|has|had|any|tell me|remind me|list|show me)\b",
    re.IGNORECASE,
)


def prompt_kind(text: str) -> str:
    """``"question"`` (ends with ``?`` — or a fullwidth ``？``, or the CJK question particles 吗 / 呢 / か
    — or opens with a question word) or ``"task"`` (anything else)."""
    stripped = text.strip()
    if stripped.endswith(("?", "？", "吗", "呢", "か")) or _QUESTION_START.match(stripped):
        return "question"
    return "task"
