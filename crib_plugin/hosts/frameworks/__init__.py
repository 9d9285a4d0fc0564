"""crib inside Python agent frameworks: one small adapter per framework, over :mod:`.bridge`.

Each adapter (:mod:`.hermes`, :mod:`.openai_agents`, :mod:`.langgraph`, :mod:`.pydantic_ai`) imports
its framework at its top, so nothing here is loaded by ``import crib_plugin`` or by the prompt hook:
a user imports the adapter of the framework they run. :data:`ADAPTERS` names each one with the
distribution it needs (``crib plugins`` lists which are installed).
"""

from __future__ import annotations

from importlib import metadata
from typing import Any

#: adapter module (under this package) → (the distributions it imports, crib's extra installing them)
ADAPTERS: dict[str, tuple[tuple[str, ...], str]] = {
    "hermes": (("hermes-agent",), "hermes"),
    "openai_agents": (("openai-agents",), "openai-agents"),
    "langgraph": (("langgraph", "langchain"), "langgraph"),
    "pydantic_ai": (("pydantic-ai-slim",), "pydantic-ai"),
}


def adapter_report() -> list[dict[str, Any]]:
    """Each adapter: its module, the framework's distribution and version (``None`` when it is not
    installed) and the extra that installs it. Reads package metadata only: imports no framework."""
    rows: list[dict[str, Any]] = []
    for name, (distributions, extra) in ADAPTERS.items():
        versions = [_version(d) for d in distributions]
        rows.append({"name": f"adapter:{name}", "module": f"{__name__}.{name}", "framework": distributions[0],
                     "version": versions[0], "installed": None not in versions, "extra": extra, "hooks": []})
    return rows


def _version(distribution: str) -> str | None:
    try:
        return metadata.version(distribution)
    except metadata.PackageNotFoundError:
        return None
