"""``crib mcp``: serve crib's memory over MCP on stdio.

By default through the front (:mod:`crib_plugin.hosts.mcp_front`), which answers the handshake at
once and runs the real server (:mod:`crib_plugin.hosts.mcp_server`) as its child; ``--direct`` is
that server, in this process. Plain ``crib mcp`` never reaches this module: the hot path
(:mod:`crib_plugin.hosts.cli.hotpath`) starts the front without click. A module of its own: the
``mcp`` package the server loads is the heaviest import crib has, and no other command needs it.
"""

from __future__ import annotations

import click

from ..mcp_front import main as front
from ..mcp_server import main as serve


@click.command()
@click.option("--direct", is_flag=True, help="Serve in this process, without the front that answers the handshake at once.")
def mcp(direct: bool) -> None:
    """Serve crib's memory over MCP on stdio: remember, recall, search, show, correct, forget and more."""
    if direct:
        serve()
    else:
        front()
