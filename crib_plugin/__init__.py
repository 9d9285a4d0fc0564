"""crib — persistent memory for AI agents.

One SQLite file, three retrieval channels (facts, full text, vectors), fused and floored; three
hook points (``on_prompt``, ``on_store``, ``on_response``) for any agent loop.

The names below are resolved lazily, so ``import crib_plugin`` stays cheap on the per-prompt path.
"""

from __future__ import annotations

import importlib
from typing import Any

__all__ = [
    "Memory",
    "Scrubber",
    "Session",
    "ResponseStream",
    "get_plugin_manager",
    "hookimpl",
    "hookspec",
    "__version__",
]
__version__ = "0.1.0"

_LAZY = {
    "Memory": ("memory", "Memory"),
    "Scrubber": ("text.scrub", "Scrubber"),
    "Session": ("plugins.session", "Session"),
    "ResponseStream": ("plugins.session", "ResponseStream"),
    "get_plugin_manager": ("plugins.manager", "get_plugin_manager"),
    "hookimpl": ("plugins.hookspecs", "hookimpl"),  # pluggy is imported on first use, not by the hot path's fork
    "hookspec": ("plugins.hookspecs", "hookspec"),
}


def __getattr__(name: str) -> Any:
    if name in _LAZY:
        module, attr = _LAZY[name]
        return getattr(importlib.import_module(f".{module}", __name__), attr)  # deferred: PEP 562 re-exports; `import crib_plugin` loads none
    raise AttributeError(name)
