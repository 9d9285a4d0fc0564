"""crib in LangGraph: a ``BaseStore`` backed by crib, and an agent middleware that puts crib's block
before each model call and offers crib's tools.

    from langchain.agents import create_agent
    from crib_plugin.hosts.frameworks.langgraph import CribMiddleware, CribStore

    agent = create_agent(model, tools=[], middleware=[CribMiddleware()], store=CribStore())

**The store.** A namespace's first element picks the store: ``("global", …)`` crib's global store,
anything else the project's. ``put(namespace, key, value)`` writes ``value["content"]`` (or
``value["text"]``, else the value as JSON) through ``on_store`` — cleaned, redacted, indexed in every
channel — as a memory of ``value["type"]`` (default note) whose thread is the namespace and key, so
the newest value of a key is one indexed lookup; a new value replaces the old one, ``None`` deletes
it. ``search(prefix, query=…)`` is crib's fused ranking (full text, vectors, facts), restricted to
the prefix; a prefix of just ``("project",)`` or ``("global",)`` also finds the memories written
outside LangGraph (key: the entry id).

**The middleware.** It wraps each model call (``wrap_model_call``): the block for the latest human
message is appended to that call's system message. A ``before_model`` hook would have to write the
block into the agent's state, where it would stay in the conversation and pile up turn after turn;
wrapping the call keeps it to the one request, as every other host does.
"""

from __future__ import annotations

import asyncio
import json
import threading
from datetime import datetime, timezone
from typing import Any, Awaitable, Callable, Iterable, Iterator, Mapping

from langchain.agents.middleware import AgentMiddleware, ModelRequest
from langchain_core.messages import AnyMessage, HumanMessage, SystemMessage
from langchain_core.tools import BaseTool, StructuredTool
from langgraph.store.base import BaseStore, GetOp, Item, ListNamespacesOp, Op, PutOp, Result, SearchItem, SearchOp

from ...core.records import Entry
from ...memory import Memory
from ...scopes import open_scope, scope_path
from .bridge import Crib, ToolSpec

META = "langgraph"  # metadata key: {"namespace": [...], "key": "..."}
SCOPES = ("project", "global")


def scope_of(namespace: tuple[str, ...]) -> str:
    return "global" if namespace[:1] == ("global",) else "project"


def thread_of(namespace: tuple[str, ...], key: str) -> str:
    """The crib thread holding a key's values: one indexed lookup finds the newest."""
    return "langgraph:" + json.dumps([*namespace, key], ensure_ascii=False)


def _when(iso: str) -> datetime:
    return datetime.strptime(iso, "%Y-%m-%dT%H:%M:%SZ").replace(tzinfo=timezone.utc)


def _place(entry: Entry, scope: str) -> tuple[tuple[str, ...], str]:
    """Where an entry sits for LangGraph: its namespace and key (an entry written outside LangGraph
    sits at ``(scope,)`` under its id)."""
    meta = entry.metadata.get(META)
    if isinstance(meta, dict) and isinstance(meta.get("namespace"), list):
        return tuple(str(p) for p in meta["namespace"]), str(meta.get("key", entry.id))
    return (scope,), str(entry.id)


def _value(entry: Entry) -> dict[str, Any]:
    meta = entry.metadata.get(META)
    if isinstance(meta, dict) and isinstance(meta.get("value"), dict):
        return dict(meta["value"])
    return {"content": entry.content, "type": entry.type}


def _content(value: dict[str, Any]) -> str:
    for name in ("content", "text"):
        if isinstance(value.get(name), str) and value[name].strip():
            return str(value[name])
    return json.dumps(value, ensure_ascii=False, sort_keys=True)


def _matches(value: dict[str, Any], wanted: dict[str, Any] | None) -> bool:
    return all(value.get(k) == v for k, v in (wanted or {}).items())


class CribStore(BaseStore):
    """LangGraph's long-term memory store, kept in crib's stores (see the module's docstring)."""

    def __init__(self) -> None:
        self._lock = threading.Lock()

    def batch(self, ops: Iterable[Op]) -> list[Result]:
        with self._lock:
            return [self._run(op) for op in ops]

    async def abatch(self, ops: Iterable[Op]) -> list[Result]:
        return await asyncio.to_thread(self.batch, list(ops))

    def _run(self, op: Op) -> Result:
        if isinstance(op, GetOp):
            return self._get(op.namespace, op.key)
        if isinstance(op, PutOp):
            self._put(op.namespace, op.key, op.value)
            return None
        if isinstance(op, SearchOp):
            return self._search(op)
        if isinstance(op, ListNamespacesOp):
            return self._namespaces(op)
        raise ValueError(f"crib's store does not know the operation {type(op).__name__}")

    def _open(self, namespace: tuple[str, ...], *, write: bool) -> Memory | None:
        scope = scope_of(namespace)
        if not write and not scope_path(scope).exists():
            return None
        return open_scope(scope, create=write, readonly=not write)

    def _item(self, entry: Entry, scope: str, score: float | None = None) -> SearchItem:
        namespace, key = _place(entry, scope)
        when = _when(entry.created_at)
        return SearchItem(namespace, key, _value(entry), when, when, score=score)

    def _get(self, namespace: tuple[str, ...], key: str) -> Item | None:
        memory = self._open(namespace, write=False)
        if memory is None:
            return None
        with memory:
            entry = memory.store.last_in_thread(thread_of(namespace, key))
            return None if entry is None else self._item(entry, scope_of(namespace))

    def _put(self, namespace: tuple[str, ...], key: str, value: Mapping[str, Any] | None) -> None:
        with self._open(namespace, write=True) as memory:  # type: ignore[union-attr]
            old = memory.store.last_in_thread(thread_of(namespace, key))
            new_id = None
            if value is not None:
                metadata = {"thread": thread_of(namespace, key), "source": "langgraph",
                            META: {"namespace": list(namespace), "key": key, "value": dict(value)}}
                kind = value.get("type") if isinstance(value.get("type"), str) else None
                new_id = memory.pm.hook.on_store(text=_content(dict(value)), type=kind, metadata=metadata,
                                                 memory=memory, created_at=None)
            if old is not None and old.id != new_id:
                memory.forget(old.id)

    def _entries(self, op: SearchOp, scope: str, memory: Memory) -> Iterator[tuple[Entry, float | None]]:
        if op.query:
            for hit in memory.search(op.query, limit=max(50, 4 * (op.offset + op.limit))):
                yield hit.entry, hit.score
        else:
            for entry in memory.store.iter_entries(order="id"):
                yield entry, None

    def _search(self, op: SearchOp) -> list[SearchItem]:
        prefix = tuple(op.namespace_prefix)
        scopes = [scope_of(prefix)] if prefix else list(SCOPES)
        found: list[SearchItem] = []
        for scope in scopes:
            memory = self._open((scope,) if not prefix else prefix, write=False)
            if memory is None:
                continue
            with memory:
                for entry, score in self._entries(op, scope, memory):
                    item = self._item(entry, scope, score)
                    if item.namespace[: len(prefix)] == prefix and _matches(item.value, op.filter):
                        found.append(item)
        if not op.query:
            found.sort(key=lambda i: i.created_at, reverse=True)
        return found[op.offset: op.offset + op.limit]

    def _namespaces(self, op: ListNamespacesOp) -> list[tuple[str, ...]]:
        seen: set[tuple[str, ...]] = set()
        for scope in SCOPES:
            memory = self._open((scope,), write=False)
            if memory is None:
                continue
            with memory:
                for entry in memory.store.iter_entries(order="id"):
                    namespace, _key = _place(entry, scope)
                    if all(_condition(namespace, c) for c in op.match_conditions or ()):
                        seen.add(namespace[: op.max_depth] if op.max_depth else namespace)
        return sorted(seen)[op.offset: op.offset + op.limit]


def _condition(namespace: tuple[str, ...], condition: Any) -> bool:
    path = tuple(condition.path)
    part = namespace[: len(path)] if condition.match_type == "prefix" else namespace[-len(path):]
    return len(part) == len(path) and all(p == "*" or p == n for p, n in zip(path, part))


def last_human_text(messages: list[AnyMessage]) -> str:
    for message in reversed(messages):
        if isinstance(message, HumanMessage):
            return message.text if isinstance(message.text, str) else str(message.content)
    return ""


def _tool(crib: Crib, spec: ToolSpec) -> BaseTool:
    def run(**arguments: Any) -> str:
        return crib.call_tool(spec.name, arguments)

    return StructuredTool.from_function(run, name=spec.name, description=spec.description, args_schema=spec.parameters)


class CribMiddleware(AgentMiddleware):
    """crib for a LangChain/LangGraph agent (``create_agent(…, middleware=[CribMiddleware()])``):
    the block on each model call's system message, crib's tools beside the agent's."""

    def __init__(self, crib: Crib | None = None, *, tools: bool = True) -> None:
        super().__init__()
        self.crib = crib or Crib()
        self.tools = [_tool(self.crib, spec) for spec in self.crib.tool_specs()] if tools else []

    def with_block(self, request: ModelRequest) -> ModelRequest:
        block = self.crib.block(last_human_text(list(request.messages)))
        if not block:
            return request
        system = request.system_message
        text = f"{system.text}\n\n{block}" if system is not None and system.text else block
        return request.override(system_message=SystemMessage(text))

    def wrap_model_call(self, request: ModelRequest, handler: Callable[[ModelRequest], Any]) -> Any:
        return handler(self.with_block(request))

    async def awrap_model_call(self, request: ModelRequest, handler: Callable[[ModelRequest], Awaitable[Any]]) -> Any:
        return await handler(await asyncio.to_thread(self.with_block, request))


__all__ = ["CribStore", "CribMiddleware", "scope_of", "thread_of", "last_human_text"]
