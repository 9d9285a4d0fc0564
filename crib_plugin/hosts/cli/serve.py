"""``crib mcp``: serve crib's memory over MCP on stdio (:mod:`crib_plugin.hosts.mcp_server`).

A module of its own: the ``mcp`` package it loads is the heaviest import crib has, and no other
command needs it.
"""

from __future__ import annotations

import click

from ..mcp_server import main as serve


@click.command()
def mcp() -> None:
    """Serve crib's memory over MCP on stdio: remember, recall, search, list_memories, correct, forget."""
    serve()
