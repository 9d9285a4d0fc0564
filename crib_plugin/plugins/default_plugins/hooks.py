"""crib's own implementations of its three hook points, registered ``trylast`` so plugins go first.

- ``on_prompt``: retrieve from the session's memory and render the fenced ``<memory-context>``
  block, skipping entries already injected in this session; fails open (``None``).
- ``on_store``: write through :meth:`Memory.write` (which strips injected blocks first).
- ``register_types``: crib's own kinds of memory (:data:`crib_plugin.core.entry_types.BUILTIN_TYPES`).
- ``on_response``: a wrapper around every other implementation that feeds the final chunk through
  the stream's scrubber, so memory blocks never reach the user.
"""

from __future__ import annotations

import logging
from typing import Any, Callable, Generator

from ...core.entry_types import BUILTIN_TYPES
from ...core.errors import StoreMissing
from ...hosts.scoped import global_beside
from ...output.block import produce_block
from ...output.render import CONTEXT, warm_template
from ...output.session_journal import prompt_record
from ...read.across import scope_key
from ..hookspecs import hookimpl
from ..trace import swallowed


@hookimpl(trylast=True)
def register_types(register: Callable[[Any], None]) -> None:
    for entry_type in BUILTIN_TYPES:
        register(entry_type)


@hookimpl(trylast=True)
def on_prompt(prompt: str, session: Any) -> str | None:
    """crib's retrieval, as every host gets it (``crib retrieve``, the prompt hook, agent loops)."""
    try:
        block = _retrieve_block(prompt, session)
    except StoreMissing:  # a server store nobody has written to yet: nothing to recall, as for a missing file
        return None
    except Exception as exc:  # fail open: a broken retrieval never blocks the agent
        swallowed("crib's on_prompt", exc)
        logging.getLogger("crib").warning("crib on_prompt failed: %s", exc)
        session.error = exc
        return None
    session.block = block or None
    return block or None


def _retrieve_block(prompt: str, session: Any) -> str:
    """The session's block (:func:`~crib_plugin.output.block.produce_block`), skipping what the
    session already has, within its cap; the project store's merged with the global store's."""
    memory = session.memory
    template = session.template or CONTEXT
    if session.worker is not None and memory.prefetch(prompt, worker=session.worker, give_up_at=session.give_up_at):
        warm_template(template, memory.settings.templates)
    scope = getattr(session, "scope", "project")
    with global_beside(memory, scope) as other:
        block, retrieval = produce_block(memory, prompt, other=other, template=template, budget=session.budget,
                                         exclude=session.injected, cap=session.cap, scope=scope,
                                         exclude_facts=session.injected_facts, pointed=getattr(session, "pointed", ()))
    session.retrieval = retrieval
    if hasattr(session, "journal"):  # what this prompt was given and why, for `crib ui`'s sessions page
        session.journal = prompt_record(prompt, retrieval, block, memory.settings.log_prompts)
    if block:
        session.injected.update(scope_key(h.entry.scope or scope, h.entry.id) for h in retrieval.hits)
        session.injected_facts.update(f.id for f in retrieval.facts)
        if isinstance(getattr(session, "pointed", None), set):
            session.pointed.update(scope_key(h.entry.scope or scope, h.entry.id) for h in retrieval.pointers)
    return block


@hookimpl(trylast=True)
def on_store(text: str, type: str | None, metadata: dict[str, Any], memory: Any, created_at: str | None) -> int | None:
    return int(memory.write(text, type=type, metadata=metadata, created_at=created_at))


@hookimpl(wrapper=True)
def on_response(chunk: str, stream: Any) -> Generator[None, Any, str]:
    result = yield
    text = chunk if result is None else result
    scrubber = stream.get_scrubber()
    out = scrubber.feed(text)
    if stream.final:
        out += scrubber.flush()
    return out
