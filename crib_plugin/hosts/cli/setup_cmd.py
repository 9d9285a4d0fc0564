"""``crib setup HOST [--undo]``: wire crib into an agent host for the current user."""

from __future__ import annotations

from pathlib import Path

import click

from ..setup import HOSTS
from ..setup import setup as run_setup


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
        from ..setup.codex import TRUST_NOTE  # deferred: only codex needs it

        click.echo(TRUST_NOTE)
    if host == "gemini" and not undo:
        click.echo("Gemini offers MCP tools in headless runs (gemini -p) only with --approval-mode yolo.")


@click.command("sync")
@click.argument("files", nargs=-1, type=click.Path(path_type=Path, exists=True, dir_okay=False))
def sync(files: tuple[Path, ...]) -> None:
    """Bring the hosts' own memory files into crib and keep them in step: CLAUDE.md, AGENTS.md,
    GEMINI.md and Claude Code's auto memory (MEMORY.md) for this repository, or FILES. A changed
    line corrects its memory, a removed line's memory is forgotten, a memory you forgot in crib is
    not brought back. The hosts' own memory is never changed."""
    from ...core.config import cache_dir  # deferred: only sync needs these
    from ...core.repo import repo_root
    from ..host_memory import STATE_FILE, host_memory_files
    from ..host_memory import sync as run_sync
    from .common import open_memory

    root = repo_root(Path.cwd()) or Path.cwd()
    chosen = list(files) or host_memory_files(root)
    if not chosen:
        click.echo("crib sync: no host memory file here (CLAUDE.md, AGENTS.md, GEMINI.md, Claude Code's MEMORY.md)")
        return
    with open_memory() as memory:
        db = str(memory.settings.db)
        folder = cache_dir() if "://" in db else Path(db).parent  # a server store: kept in crib's cache
        reports = run_sync(memory, chosen, folder / STATE_FILE)
    for report in reports:
        click.echo(report.line())
