"""``crib sync``: bring the agent hosts' own memory files into crib and keep them in step."""

from __future__ import annotations

import json
from pathlib import Path

import click

from ..host_memories import project_memories, user_memories
from .common import open_memory, scope_kwargs, warn_all


@click.command()
@click.argument("paths", nargs=-1, type=click.Path(path_type=Path))
@click.option("--global", "to_global", is_flag=True, help="The user's own files (~/.claude/CLAUDE.md, ~/.codex/…, ~/.gemini/GEMINI.md), into the global store.")
@click.option("--json", "as_json", is_flag=True, help="One JSON object per file: added, updated, removed, unchanged, forgotten.")
def sync(paths: tuple[Path, ...], to_global: bool, as_json: bool) -> None:
    """Bring the hosts' own memory files (CLAUDE.md, AGENTS.md, GEMINI.md, Claude Code's auto memory,
    Codex's memories) into crib and keep them in step: a changed line corrects its memory, a removed
    line is superseded, a memory you forgot in crib is not brought back. The files are only read.

    Without PATHS: the files of this repository and Claude Code's auto memory for it (with --global:
    the user's own files instead).
    """
    found = [(p, "markdown") for p in paths] or [
        (m.path, m.host) for m in (user_memories() if to_global else project_memories())]
    if not found:
        click.echo("crib: no host memory file found (CLAUDE.md, AGENTS.md, GEMINI.md, ~/.claude/projects/…/memory)", err=True)
        return
    with open_memory(**scope_kwargs(to_global)) as memory:
        for path, source in found:
            report = memory.sync(path, "claude" if source == "claude" else "markdown")
            if as_json:
                click.echo(json.dumps({**report.to_json(), "host": source}))
            elif report.missing:
                click.echo(f"{path}: not found, skipped", err=True)
            else:
                click.echo(f"{report.path}: {report.added} added, {report.updated} updated, {report.removed} removed, "
                           f"{report.unchanged} unchanged" + (f", {report.forgotten} forgotten (not brought back)" if report.forgotten else ""))
        warn_all(memory)
