"""``crib write``: store a memory (a module of its own: the write is a hot path, and imports only what it uses)."""

from __future__ import annotations

from typing import Any

import click

from ...core.config import get_settings
from ...core.cues import with_cue
from ...core.errors import InputError
from ...core.limits import parse_json
from .common import open_memory, scope_kwargs, warn_all
from .io import read_stdin_text


@click.command()
@click.option("--type", "entry_type", default=None, help="note (default), decision, error, correction, preference or a plugin's type (or a leading type=WORD); `crib types` explains each.")
@click.option("--created-at", default=None, help="ISO 8601 time of the memory (default now).")
@click.option("--metadata", default=None, help="JSON object stored with the entry.")
@click.option("--thread", default=None, help="Conversation this memory belongs to (CRIB_THREAD); neighbours in a thread give each other context.")
@click.option("--when", "cue", default=None, help="When this memory should come back: the tasks, questions or symptoms it bears on, in the words you would use then (a recall cue, never shown).")
@click.option("--global", "to_global", is_flag=True, help="Write to the global store (every project inherits it) instead of the project's.")
@click.argument("text", required=False)
def write(entry_type: str | None, created_at: str | None, metadata: str | None, thread: str | None, cue: str | None,
          to_global: bool, text: str | None) -> None:
    """Store a memory read from stdin (or TEXT). A leading `type=decision` sets its type; `--when`
    says in which situations it should be recalled."""
    raw = text if text is not None else read_stdin_text()
    if not raw.strip():
        raise InputError("nothing to write: stdin is empty")
    meta: dict[str, Any] = {}
    if metadata:
        meta = parse_json(metadata, "--metadata")
        if not isinstance(meta, dict):
            raise InputError("--metadata must be a JSON object")
    if not thread:
        thread = get_settings().thread
    if thread:
        meta["thread"] = thread
    meta = with_cue(meta, cue) if cue is not None else meta
    with open_memory(**scope_kwargs(to_global)) as memory:
        memory.last_write = None
        entry_id = memory.pm.hook.on_store(text=raw, type=entry_type, metadata=meta, memory=memory, created_at=created_at)
        if entry_id is None:
            raise InputError("no on_store implementation stored the memory")
        report = memory.last_write
        warn_all(memory)
    parts = [f"stored entry {entry_id}" + (" (global)" if to_global else "")]
    if report is not None:
        if report.duplicate:
            parts = [f"entry {entry_id} already stored (the same text): not stored again"]
        else:
            background = "vector queued (embedded in the background)" if report.background else ""
            parts.append("vector" if report.embedded else background or "no vector (queued)")
            parts.append(f"{report.facts} fact{'s' if report.facts != 1 else ''}")
        for note in report.notes:
            click.echo(f"crib: {note}", err=True)
    click.echo(", ".join(parts))
