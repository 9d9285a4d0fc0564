"""``crib setup HOST [--undo]``: wire crib into an agent host for the current user."""

from __future__ import annotations

import click

from ..setup import HOSTS
from ..setup import setup as run_setup
from ..setup.codex import TRUST_NOTE


@click.command("setup")
@click.argument("host", type=click.Choice(HOSTS))
@click.option("--undo", is_flag=True, help="Remove what crib setup added; the host's other settings stay.")
def setup(host: str, undo: bool) -> None:
    """Wire crib into HOST (claude, codex, gemini, opencode): its prompt and session hooks, its
    output filter where the host has one, crib's MCP server and guidance. Idempotent."""
    changes = run_setup(host, undo=undo)
    if not changes.lines:
        click.echo(f"crib setup {host}{' --undo' if undo else ''}: nothing to change")
        return
    for line in changes.lines:
        click.echo(line)
    if host == "codex" and not undo:

        click.echo(TRUST_NOTE)
    if host == "gemini" and not undo:
        click.echo("Gemini offers MCP tools in headless runs (gemini -p) only with --approval-mode yolo.")

