"""Per-conversation state that hook hosts pass to ``on_prompt`` and ``on_response``."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

from ..text.scrub import Scrubber

if TYPE_CHECKING:  # pragma: no cover
    from ..core.records import Retrieval
    from ..text.scrub import Scrubber
    from .contracts import MemoryLike  # the protocol: no import of the facade above


@dataclass
class Session:
    """One agent conversation: its memory, and what was already injected into it.

    The fields after ``budget`` let a host say how crib's own ``on_prompt`` should answer (every
    one has a default that suits a Python agent loop); crib's implementation reports back in
    ``retrieval``, ``block`` and ``error``, so a host can explain or log what happened.
    """

    memory: "MemoryLike"
    id: str = ""
    injected: set[int] = field(default_factory=set)
    budget: int | None = None  # characters; None → the memory's configured budget
    injected_facts: set[int] = field(default_factory=set)  # fact ids already injected
    template: str | None = None  # None → the fenced <memory-context> block (render.CONTEXT)
    cap: int | None = None  # hard limit on the rendered block: lowest-ranked items dropped until it fits
    worker: Any = None  # a prefetch worker forked before the Memory was opened (cold processes)
    give_up_at: float | None = None  # perf_counter time the vector channel stops waiting for it
    retrieval: "Retrieval | None" = None  # set by crib's on_prompt: what was selected
    block: str | None = None  # set by crib's on_prompt: the block it contributed
    error: BaseException | None = None  # set by crib's on_prompt when it failed open
    scope: str = "project"  # which store ``memory`` is: "project" (the global one is read beside it) or "global"
    pointed: set[int] = field(default_factory=set)  # entries already given as pointers (scope keys, crib_plugin.read.pointers)
    journal: dict[str, Any] | None = None  # set by crib's on_prompt: this prompt's record (crib_plugin.output.session_journal)


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
            self.scrubber = Scrubber()
        return self.scrubber
