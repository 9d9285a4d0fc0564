"""crib's own implementations of its three hook points, registered ``trylast`` so plugins go first.

- ``on_prompt``: retrieve from the session's memory and render the fenced ``<memory-context>``
  block, skipping entries already injected in this session; fails open (``None``).
- ``on_store``: write through :meth:`Memory.write` (which strips injected blocks first).
- ``register_types``: crib's own kinds of memory (:data:`crib_plugin.entry_types.BUILTIN_TYPES`).
- ``on_response``: a wrapper around every other implementation that feeds the final chunk through
  the stream's scrubber, so memory blocks never reach the user.
"""

from __future__ import annotations

from typing import Any, Callable, Generator

from ..hookspecs import hookimpl


@hookimpl(trylast=True)
def register_types(register: Callable[[Any], None]) -> None:
    from ...core.entry_types import BUILTIN_TYPES

    for entry_type in BUILTIN_TYPES:
        register(entry_type)


@hookimpl(trylast=True)
def on_prompt(prompt: str, session: Any) -> str | None:
    """crib's retrieval, as every host gets it (``crib retrieve``, the prompt hook, agent loops)."""
    try:
        block = _retrieve_block(prompt, session)
    except Exception as exc:  # fail open: a broken retrieval never blocks the agent
        import logging

        logging.getLogger("crib").warning("crib on_prompt failed: %s", exc)
        session.error = exc
        return None
    session.block = block or None
    return block or None


def _retrieve_block(prompt: str, session: Any) -> str:
    """Recall, select (skipping what the session already has), render within the session's cap."""
    from ...output.render import CONTEXT

    memory = session.memory
    template = session.template or CONTEXT
    if session.worker is not None and memory.prefetch(prompt, worker=session.worker, give_up_at=session.give_up_at):
        from ...output.render import warm_template  # while the worker embeds, load the template

        warm_template(template, memory.settings.templates)
    from ...hosts.scoped import scope_key, select_scoped

    scope = getattr(session, "scope", "project")
    # The project store's selection merged with the global store's (scope-keyed ids in ``injected``).
    retrieval = select_scoped(memory, prompt, budget=session.budget, exclude=session.injected, primary_scope=scope,
                              pointed=getattr(session, "pointed", ()))
    retrieval.facts = [f for f in retrieval.facts if f.id not in session.injected_facts]
    session.retrieval = retrieval
    block = render_within(memory, retrieval, template, session.cap)
    if block:
        session.injected.update(scope_key(h.entry.scope or scope, h.entry.id) for h in retrieval.hits)
        session.injected_facts.update(f.id for f in retrieval.facts)
        if isinstance(getattr(session, "pointed", None), set):
            session.pointed.update(scope_key(h.entry.scope or scope, h.entry.id) for h in retrieval.pointers)
    return block


def render_within(memory: Any, retrieval: Any, template: str, cap: int | None) -> str:
    """Render; with a ``cap``, drop the pointers, then the lowest-ranked hits (then facts) until the block fits."""
    while True:
        block: str = memory.render(retrieval, template=template)
        if cap is None or len(block) <= cap:
            return block
        if getattr(retrieval, "pointers", None):
            retrieval.pointers.pop()
        elif retrieval.hits:
            retrieval.hits.pop()
        elif retrieval.facts:
            retrieval.facts.pop()
        else:
            return ""


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
