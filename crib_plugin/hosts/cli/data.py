"""``crib write / types / retrieve / search``: store memories and read them back."""

from __future__ import annotations

import json
from typing import Any

import click

from ...core.config import get_settings, parse_channels
from ...core.cues import with_cue
from ...core.errors import InputError
from .common import now_option, open_memory, scope_kwargs, warn_all
from .io import read_stdin, read_stdin_text
from .retrieve import run_retrieve


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
        try:
            meta = json.loads(metadata)
        except (json.JSONDecodeError, RecursionError) as exc:
            raise InputError(f"--metadata is not valid JSON: {exc}") from None
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


@click.command()
@click.option("--json", "as_json", is_flag=True, help="One JSON object per type: name, meaning, standing.")
def types(as_json: bool) -> None:
    """The kinds of memory crib stores, what each means, and which SessionStart re-injects (standing)."""
    # deferred: the SessionStart hook would import it up front (50 ms)
    from ...plugins.type_registry import registered_types

    for t in registered_types().values():
        if as_json:
            click.echo(json.dumps({"name": t.name, "meaning": t.meaning, "standing": t.standing}))
        else:
            click.echo(f"{t.name:<12} {t.meaning}{'  [standing]' if t.standing else ''}")


@click.command()
@click.option("--format", "fmt", type=click.Choice(["memory", "context"]), default="memory", help="memory: <memory> block (default); context: fenced <memory-context> block.")
@click.option("--budget", type=int, default=None, help="Character budget for the block (default CRIB_BUDGET or 8000).")
@click.option("--explain", is_flag=True, help="After the block, print (to stderr) why each memory was kept or dropped.")
@now_option
@click.argument("prompt", required=False)
def retrieve(fmt: str, budget: int | None, explain: bool, prompt: str | None) -> None:
    """Print the memories relevant to the prompt on stdin (or PROMPT); nothing when none are.

    Always exits 0: failures print nothing on stdout and one line on stderr.
    """
    run_retrieve(prompt if prompt is not None else read_stdin(), fmt=fmt, budget=budget, explain=explain)


@click.command()
@click.argument("query")
@click.option("--limit", "-k", type=int, default=10, show_default=True)
@click.option("--json", "as_json", is_flag=True, help="One JSON object per hit (id, score, channels, content, type, created_at, metadata).")
@click.option("--channel", "channels", multiple=True, help="Only these channels (repeatable): triples, fts, vector.")
@click.option("--explain", is_flag=True, help="Show each channel's rank and score, floors and timings.")
@click.option("--scope", type=click.Choice(["project", "global", "all"]), default="all", show_default=True, help="Which stores to search (all: project, then global).")
@now_option
def search(query: str, limit: int, as_json: bool, channels: tuple[str, ...], explain: bool, scope: str) -> None:
    """Ranked hits for QUERY (fused, floors applied, no budget), from the project and global stores."""
    # deferred: `crib mcp` start would import it up front (129 ms)
    from ..scoped import recall_scopes

    names = parse_channels(",".join(channels)) if channels else None
    hits, retrievals = recall_scopes(query, scope=scope, channels=names, limit=limit, warn=lambda n: click.echo(f"crib: warning: {n}", err=True))
    several = len(retrievals) > 1
    # deferred: the SessionStart hook would import it up front (13 ms)
    from ...text.redact import redact_for_render as safe

    for hit in hits:
        if as_json:
            record = hit.to_json()
            if isinstance(record.get("content"), str):
                record["content"] = safe(record["content"])
            click.echo(json.dumps(record, ensure_ascii=False))
        else:
            chans = ",".join(sorted(hit.channels))
            where = f"{hit.entry.scope:<7} " if several else ""
            click.echo(f"{where}{hit.entry.id:>6}  {hit.score:.4f}  [{hit.entry.created_at[:10]} {hit.entry.type}] ({chans}) {safe(hit.entry.content)[:120]}")
    if explain:
        # deferred: the SessionStart hook would import it up front (18 ms)
        from ...output.explain import explain_text

        for name, retrieval in retrievals:
            click.echo((f"[{name}]\n" if several else "") + explain_text(retrieval), err=as_json)


COMMANDS: tuple[click.Command, ...] = (write, types, retrieve, search,)
