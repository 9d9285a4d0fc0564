"""crib's hook specifications: three hook points around the store, and extension points.

Markers are named after the project (``crib``) and third-party plugins are found through the
``crib`` entry-point group, like simonw/llm. Built-in implementations are registered with
``trylast=True`` so a user's plugin runs first and can override them.

Hook points (called by hosts: the CLI, the Claude Code adapter, a Python agent loop):

- :func:`on_prompt` — every implementation contributes a context block (list result).
- :func:`on_store` — ``firstresult``: the first implementation that stores the memory wins.
- :func:`on_response` — ``firstresult`` transform of a streamed chunk; the built-in scrubber is a
  *wrapper* around it, so it has the last word on what the user sees.

Extension points (called once per plugin manager, each given a ``register`` callable):
:func:`register_channels`, :func:`register_embedders`, :func:`register_extractors`,
:func:`register_rerankers`, :func:`register_judges`, :func:`register_types`, :func:`register_commands`. For a name registered twice the first
registration wins — user plugins are called before the ``trylast`` built-ins.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any, Callable

import pluggy

if TYPE_CHECKING:  # pragma: no cover
    import click

    from ..core.entry_types import EntryType
    from .contracts import MemoryLike  # the protocol: no import of the facade above
    from .session import ResponseStream, Session

hookspec = pluggy.HookspecMarker("crib")
hookimpl = pluggy.HookimplMarker("crib")


@hookspec
def register_channels(register: Callable[[Any], None]) -> None:
    """Register retrieval channels: ``register(channel)``.

    A channel has a ``name`` and ``search(memory, query, limit) -> ChannelResult`` (see
    ``crib_plugin.read.channels.base.Channel``). Called once per plugin manager; every implementation
    runs. A channel whose name is already registered is ignored (first wins).
    """


@hookspec
def register_embedders(register: Callable[[str, Callable[[], Any]], None]) -> None:
    """Register embedders: ``register(name, factory)``; ``factory()`` returns an ``Embedder``.

    ``CRIB_EMBEDDER=name`` picks one; the built-ins are ``minilm`` (offline default) and
    ``ollama``. Called once per plugin manager; every implementation runs, user plugins before
    the ``trylast`` built-ins, so registering an existing name from a plugin replaces the built-in
    of that name (first registration wins).
    """


@hookspec
def register_extractors(register: Callable[[str, Callable[[], Any]], None]) -> None:
    """Register fact extractors: ``register(name, factory)``; ``factory()`` returns an ``Extractor``.

    Built-ins: ``ollama`` (JSON-schema constrained, temperature 0) and ``rules`` (offline).
    Called once per plugin manager; every implementation runs (first registration of a name wins).
    """


@hookspec
def register_rerankers(register: Callable[[str, Callable[[], Any]], None]) -> None:
    """Register rerankers: ``register(name, factory)``; ``factory()`` returns a ``Reranker``.

    Rerankers only score candidates; they never rewrite memory text. Called once per plugin
    manager; every implementation runs (first registration of a name wins).
    """


@hookspec
def register_judges(register: Callable[[str, Callable[[], Any]], None]) -> None:
    """Register judges: ``register(name, factory)``; ``factory()`` returns a
    :class:`crib_plugin.models.base.Judge`, which picks from the best few candidates the memories
    that bear on a prompt (``CRIB_JUDGE=<name>``; the built-in ``ollama`` judge runs a local model,
    ``CRIB_JUDGE_MODEL``).

    :param register: call it once per judge with its name and a factory taking no arguments.

    Judges only read candidates: their picks replace the offline block, made of the stored entries
    unchanged. Called once per plugin manager; every implementation runs (first registration of a
    name wins).
    """


@hookspec
def register_types(register: Callable[["EntryType"], None]) -> None:
    """Register kinds of memory: ``register(EntryType(name, meaning, standing=False))``.

    :param register: call it once per type with a :class:`crib_plugin.core.entry_types.EntryType` —
        ``name`` (lowercase, the value of ``crib write --type`` and of the MCP ``remember`` tool's
        ``type``), ``meaning`` (one line telling an agent when to use it; shown by the CLI help, the
        MCP tool description and SessionStart) and ``standing`` (True: re-injected at every
        SessionStart, like ``preference``, ``decision`` and ``correction``).

    Called once per plugin manager; every implementation runs, user plugins before the ``trylast``
    built-ins, so the first registration of a name wins (a plugin may redefine a built-in type).
    """


@hookspec
def register_commands(cli: "click.Group") -> None:
    """Add subcommands to the ``crib`` command group (``@cli.command()``).

    Called once when the ``crib`` command starts; every implementation runs.
    """


@hookspec
def on_prompt(prompt: str, session: "Session") -> str | None:
    """Return a context block to inject before the model sees ``prompt``, or ``None``.

    Every implementation is called (results are collected in a list, plugin order: user plugins
    first, the built-in retrieval last). ``session.memory`` is the open :class:`~crib_plugin.Memory`;
    ``session.injected`` holds entry ids already injected in this session, so an implementation
    can avoid repeating itself. Must not raise: a failing implementation should return ``None``.
    Hosts: ``crib retrieve``, the Claude Code prompt hook (and, for plugins, the session-start hook),
    and any agent loop; the other :class:`~crib_plugin.plugins.session.Session` fields say how crib's own
    implementation should answer (template, cap, prefetch worker).
    """


@hookspec(firstresult=True)
def on_store(
    text: str, type: str | None, metadata: dict[str, Any], memory: "MemoryLike", created_at: str | None
) -> int | None:
    """Store an agent-initiated memory and return its entry id (``firstresult``: first non-None wins).

    ``type`` None means "from a leading ``type=WORD``, else note"; ``created_at`` None means now.
    ``metadata`` may hold ``when``, the memory's recall cue (:mod:`crib_plugin.core.cues`: the situations
    in which it should come back; ``crib write --when``). The built-in implementation strips
    injected memory blocks from ``text`` first, so recalled memory is never stored again as new
    memory. ``crib write`` calls this hook.
    """


@hookspec(firstresult=True)
def on_response(chunk: str, stream: "ResponseStream") -> str | None:
    """Return ``chunk`` as the user may see it (``firstresult``), or ``None`` to leave it unchanged.

    The built-in scrubber wraps this hook (``wrapper=True``): whatever the implementations return
    is fed through ``stream``'s streaming scrubber, so memory blocks never reach the user even when
    a tag is split across chunks. When ``stream.final`` is true the scrubber also flushes.
    ``crib scrub`` calls this hook for every chunk it reads.
    """
