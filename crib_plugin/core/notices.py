"""One-line notices for the person at the terminal, collected by any layer and printed by the CLI.

A lower layer (the store, when it upgrades an older store) has something a person should read
once but no business printing: it calls :func:`notice`. ``crib``'s entry point prints what was
collected on stderr when the command ends (:func:`drain`); the hooks and the MCP server never
print them (stdout is the agent's context there) — each notice is also kept in ``crib.log``.
"""

from __future__ import annotations

from .faillog import log_note

_pending: list[str] = []


def notice(text: str) -> None:
    """Queue ``text`` (one line) for the terminal and record it in ``crib.log``."""
    _pending.append(text)
    log_note("notice", text)


def drain() -> list[str]:
    """The notices queued so far, oldest first; the queue is emptied."""
    queued = list(_pending)
    _pending.clear()
    return queued
