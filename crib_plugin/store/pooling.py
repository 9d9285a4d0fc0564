"""Whether this process pools its PostgreSQL connections (the MCP server does; a per-prompt hook
does not: it opens one store and exits). Its own module so that both the caller that switches
it on and :mod:`.postgres`, which reads it, import it without importing each other."""

from __future__ import annotations

_POOLING = False


def use_pool() -> None:
    """From now on, PostgreSQL stores opened in this process borrow pooled connections
    (``psycopg_pool``) and give them back on close: for long-lived hosts (the MCP server)."""
    global _POOLING
    _POOLING = True


def stop_pooling() -> None:
    global _POOLING
    _POOLING = False


def pooling() -> bool:
    return _POOLING
