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

from .hookspecs import hookimpl


@hookimpl(trylast=True)
def register_types(register: Callable[[Any], None]) -> None:
    from .entry_types import BUILTIN_TYPES

    for entry_type in BUILTIN_TYPES:
        register(entry_type)


@hookimpl(trylast=True)
def on_prompt(prompt: str, session: Any) -> str | None:
    from .render import CONTEXT

    try:
        memory = session.memory
        retrieval = memory.select(
            memory.recall(prompt), budget=session.budget, exclude=session.injected
        )
        block = memory.render(retrieval, template=CONTEXT)
    except Exception as exc:  # fail open: a broken retrieval never blocks the agent
        import logging

        logging.getLogger("crib").warning("crib on_prompt failed: %s", exc)
        return None
    if not block:
        return None
    session.injected.update(h.entry.id for h in retrieval.hits)
    return block


@hookimpl(trylast=True)
def on_store(text: str, type: str, metadata: dict[str, Any], memory: Any) -> int | None:
    return int(memory.write(text, type=type, metadata=metadata))


@hookimpl(wrapper=True)
def on_response(chunk: str, stream: Any) -> Generator[None, Any, str]:
    result = yield
    text = chunk if result is None else result
    scrubber = stream.get_scrubber()
    out = scrubber.feed(text)
    if stream.final:
        out += scrubber.flush()
    return out
