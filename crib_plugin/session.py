"""Per-conversation state that hook hosts pass to ``on_prompt`` and ``on_response``."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import TYPE_CHECKING

if TYPE_CHECKING:  # pragma: no cover
    from .memory import Memory
    from .scrub import Scrubber


@dataclass
class Session:
    """One agent conversation: its memory, and what was already injected into it."""

    memory: "Memory"
    id: str = ""
    injected: set[int] = field(default_factory=set)
    budget: int | None = None  # characters; None → the memory's configured budget


@dataclass
class ResponseStream:
    """One streamed model reply. Holds the scrubber state between chunks.

    Set ``final=True`` on the last ``on_response`` call (its chunk may be empty) so anything
    held back is flushed — and an unclosed memory block is dropped, never emitted.
    """

    id: str = ""
    final: bool = False
    scrubber: "Scrubber | None" = None

    def get_scrubber(self) -> "Scrubber":
        if self.scrubber is None:
            from .scrub import Scrubber

            self.scrubber = Scrubber()
        return self.scrubber
