"""What every framework adapter needs of crib, in plain values: a block per prompt, crib's tools,
a write, a scrub.

The adapters only translate their framework's objects to these calls, which are crib's hook points
and its MCP tools, unchanged:

- :meth:`Crib.block` runs ``on_prompt`` over the project store (the global one read beside it), as
  ``crib retrieve`` and the prompt hook do: the same gate, budget and fences; ``""`` when nothing is
  relevant, and ``""`` (logged to ``crib.log``) when anything fails — a memory never blocks an agent.
- :meth:`Crib.store` runs ``on_store`` (injected blocks stripped, secrets redacted: the write path).
- :meth:`Crib.scrub` runs ``on_response`` with the final flag, so a block the model echoes is cut.
- :func:`tool_specs` / :meth:`Crib.call_tool` are the MCP server's tools (``remember``, ``recall``,
  ``show``, ``correct``, ``forget``): their JSON schemas from the manifest crib ships
  (``hosts/mcp_manifest.json``) and their handlers from :mod:`crib_plugin.hosts.mcp_server`, so an
  agent in any framework gets the descriptions and checks an MCP client gets.

The stores are crib's configured ones (``CRIB_DB``, else the repository's; ``CRIB_GLOBAL_DB``), the
same every other host reads.
"""

from __future__ import annotations

import functools
import json
import threading
import time
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Callable, Mapping

from ...core.config import load_settings
from ...core.errors import CribError
from ...core.faillog import log_failure
from ...core.limits import bound_prompt
from ...output.render import CONTEXT
from ...plugins.manager import get_plugin_manager
from ...plugins.session import ResponseStream, Session
from ...scopes import open_scope
from .. import mcp_server
from ..scoped import open_reading

MANIFEST = Path(__file__).resolve().parent.parent / "mcp_manifest.json"
TOOL_NAMES: tuple[str, ...] = ("remember", "recall", "show", "correct", "forget")
"""The tools an adapter offers by default: store, look up, read one, fix, delete."""
WRITE_TOOLS = frozenset({"remember", "correct", "cue", "forget"})
HANDLERS: dict[str, Callable[..., Any]] = {fn.__name__: fn for fn, _title, _hints in mcp_server.TOOLS}
INSTRUCTIONS = mcp_server.INSTRUCTIONS
"""When to write, in the words the MCP server gives its clients: a system prompt's paragraph."""
REUSE_SECONDS = 60.0
"""How long a prompt's block is reused for the same prompt (one turn's model calls), unless a tool wrote."""


@dataclass(frozen=True)
class ToolSpec:
    """One of crib's tools as every framework describes a function tool."""

    name: str
    description: str
    parameters: dict[str, Any]  # JSON schema of the arguments (an object)


@functools.lru_cache(maxsize=1)
def _manifest_tools() -> dict[str, dict[str, Any]]:
    data = json.loads(MANIFEST.read_text(encoding="utf-8"))
    return {tool["name"]: tool for tool in data["tools"]}


def tool_specs(names: tuple[str, ...] = TOOL_NAMES) -> list[ToolSpec]:
    """The named tools' specs, in the order given (a name crib has no tool for raises KeyError)."""
    tools = _manifest_tools()
    return [ToolSpec(name, tools[name]["description"], dict(tools[name]["inputSchema"])) for name in names]


_lock = threading.Lock()  # frameworks run tools in threads: one store operation at a time, as the MCP server does


def call_tool(name: str, arguments: Mapping[str, Any] | None) -> str:
    """Run crib's tool ``name`` and return its answer as text for the model (JSON for structured
    answers). Never raises: bad arguments and crib's errors come back as ``{"error": "…"}``."""
    handler = HANDLERS.get(name)
    if handler is None:
        return json.dumps({"error": f"crib has no tool named {name!r}"})
    try:
        with _lock:
            result = handler(**dict(arguments or {}))
    except CribError as exc:
        return json.dumps({"error": str(exc)})
    except TypeError as exc:  # missing or unknown arguments
        return json.dumps({"error": f"bad arguments for {name}: {exc}"})
    except Exception as exc:  # a bug: logged, one line for the model
        log_failure(f"tool {name}", exc)
        return json.dumps({"error": f"crib failed: {type(exc).__name__}: {exc}"})
    return result if isinstance(result, str) else json.dumps(result, ensure_ascii=False)


@dataclass
class Crib:
    """crib for one agent: the block before each model call, its tools, writes, the scrubber.

    ``template`` is the block's form (the fenced ``<memory-context>`` by default); ``budget`` its
    characters (None: the configured ``CRIB_BUDGET``). The last prompt's block is kept for
    :data:`REUSE_SECONDS`, so the several model calls of one turn (a tool loop) retrieve once; a
    write through a tool clears it.
    """

    budget: int | None = None
    template: str = CONTEXT
    tools: tuple[str, ...] = TOOL_NAMES
    session_id: str = ""
    _last: tuple[str, str, float] | None = field(default=None, repr=False)

    def block(self, prompt: str) -> str:
        """``on_prompt`` for ``prompt``: the blocks of every implementation (crib's own last), or ``""``."""
        text = bound_prompt((prompt or "").strip())
        if not text:
            return ""
        if self._last is not None and self._last[0] == text and time.monotonic() - self._last[2] < REUSE_SECONDS:
            return self._last[1]
        try:
            block = self._retrieve(text)
        except Exception as exc:  # fail open
            log_failure("framework on_prompt", exc)
            return ""
        self._last = (text, block, time.monotonic())
        return block

    def _retrieve(self, text: str) -> str:
        opened = open_reading(load_settings())
        if opened is None:  # no store yet: nothing to recall, and nothing is created
            return ""
        memory, scope = opened
        with memory:
            session = Session(memory, id=self.session_id, budget=self.budget, template=self.template, scope=scope)
            blocks = memory.pm.hook.on_prompt(prompt=text, session=session)
        if session.error is not None:
            raise session.error
        return "\n".join(b for b in blocks if isinstance(b, str) and b.strip())

    def store(self, text: str, type: str | None = None, metadata: Mapping[str, Any] | None = None,
              scope: str = "project") -> int | None:
        """``on_store``: write ``text`` to the ``scope`` store; its entry id."""
        with _lock, open_scope(scope) as memory:
            entry_id = memory.pm.hook.on_store(text=text, type=type, metadata=dict(metadata or {}), memory=memory,
                                               created_at=None)
        self._last = None
        return entry_id

    def scrub(self, text: str) -> str:
        """``on_response`` over a whole reply: any memory block the model echoed is cut out."""
        stream = ResponseStream(id=self.session_id, final=True)
        out = get_plugin_manager().hook.on_response(chunk=text, stream=stream)
        return text if out is None else str(out)

    def tool_specs(self) -> list[ToolSpec]:
        return tool_specs(self.tools)

    def call_tool(self, name: str, arguments: Mapping[str, Any] | None) -> str:
        """One of this agent's tools (:func:`call_tool`); any other name is refused."""
        if name not in self.tools:
            return json.dumps({"error": f"crib tool {name!r} is not offered here"})
        if name in WRITE_TOOLS:
            self._last = None
        return call_tool(name, arguments)


__all__ = ["Crib", "ToolSpec", "tool_specs", "call_tool", "TOOL_NAMES", "INSTRUCTIONS"]
