"""Hermes' output hook for crib: ``transform_llm_output`` runs crib's scrubber (``on_response``) over
each final reply, so a memory block the model echoes never reaches the user.

A Hermes general plugin, found through the ``hermes_agent.plugins`` entry point ``crib-scrub``
(pyproject.toml) and enabled with ``hermes plugins enable crib-scrub``. Hermes loads memory
providers on their own path (which ignores a provider's hooks), hence this second, tiny plugin.
It imports only crib's plugin manager: no store is opened, nothing is written.
"""

from __future__ import annotations

from typing import Any

from ...plugins.manager import get_plugin_manager
from ...plugins.session import ResponseStream


def scrub(response_text: str = "", session_id: str = "", **_kwargs: Any) -> str | None:
    """The reply without memory blocks; ``None`` (unchanged) when there was none. A reply that was
    nothing but a block becomes one space: Hermes keeps the original for an empty answer."""
    if not isinstance(response_text, str) or "<memory" not in response_text.lower():
        return None
    stream = ResponseStream(id=session_id, final=True)
    out = get_plugin_manager().hook.on_response(chunk=response_text, stream=stream)
    text = response_text if out is None else str(out)
    if text == response_text:
        return None
    return text if text.strip() else " "


def register(ctx: Any) -> None:
    """Hermes' plugin entry: the output hook."""
    ctx.register_hook("transform_llm_output", scrub)


__all__ = ["scrub", "register"]
