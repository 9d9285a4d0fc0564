"""Agent hosts crib serves besides Claude Code: one small adapter module each over one hook core.

A host adapter (:class:`.base.Host`) says only what differs between hosts: the name the host gives
each hook event, the fields of its hook JSON, and the JSON it reads back. Everything a hook decides —
the gate, the entries and pointers, the budget, redaction, the fences, the per-session no-repeat
record, the standing memories at session start — is the one core in :mod:`crib_plugin.hosts.claude`
(``on_prompt`` → ``user_prompt_submit``, ``session_start``) and :mod:`crib_plugin.hosts.stream`
(``on_response``: the streaming scrubber); the MCP server (``crib mcp``) is ``on_store`` for every host.

Adding a host is one module here (its :class:`.base.Host`), a line in :data:`HOSTS`, its set-up in
:mod:`crib_plugin.hosts.setup` and its tests.
"""

from __future__ import annotations

import importlib

from .base import CLAUDE, Host

#: host name → ``module:attribute`` of its adapter (imported only when that host's hook runs)
HOSTS: dict[str, str] = {
    "claude": "crib_plugin.hosts.agents.base:CLAUDE",
    "codex": "crib_plugin.hosts.agents.codex:CODEX",
    "gemini": "crib_plugin.hosts.agents.gemini:GEMINI",
    "opencode": "crib_plugin.hosts.agents.opencode:OPENCODE",
}


def get_host(name: str | None) -> Host:
    """The adapter called ``name`` (Claude Code's when empty or unknown: a hook never fails on it)."""
    target = HOSTS.get((name or "").strip().lower())
    if target is None:
        return CLAUDE
    module_name, _, attr = target.partition(":")
    # deferred: each hook process imports only its own host's adapter
    host = getattr(importlib.import_module(module_name), attr)
    assert isinstance(host, Host)
    return host


__all__ = ["CLAUDE", "HOSTS", "Host", "get_host"]
