"""crib inside Python agent frameworks: one small adapter per framework, over :mod:`.bridge`.

Each adapter (:mod:`.hermes`, :mod:`.openai_agents`, :mod:`.langgraph`, :mod:`.pydantic_ai`) imports
its framework at its top, so nothing here is loaded by ``import crib_plugin`` or by the prompt hook:
a user imports the adapter of the framework they run. :data:`ADAPTERS` names each one with the
distribution it needs (``crib plugins`` lists which are installed).
"""

from __future__ import annotations

#: adapter module (under this package) → (the framework's distribution, crib's extra)
ADAPTERS: dict[str, tuple[str, str]] = {
    "hermes": ("hermes-agent", "hermes"),
    "openai_agents": ("openai-agents", "openai-agents"),
    "langgraph": ("langgraph", "langgraph"),
    "pydantic_ai": ("pydantic-ai-slim", "pydantic-ai"),
}
