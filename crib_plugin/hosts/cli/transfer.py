"""``crib import / export / facts / reindex``: move memories in and out, inspect facts, rebuild vectors."""

from __future__ import annotations

import json
import sys
from pathlib import Path

import click

from ...core.config import get_settings
from ...core.errors import ConfigError
from ...store.facts import facts_command_output
from ...text.redact import redact_for_render, redact_value
from ...write.importers import read_records
from ...write.maintenance import FORGOTTEN
from ...write.manage import write_missing_cues
from ..progress import Progress, fetch_model
from .common import open_memory, scope_kwargs, warn_all


@click.command(name="import")
@click.argument("source", type=click.Path(path_type=Path, allow_dash=True))
@click.option("--format", "fmt", type=click.Choice(["jsonl", "claude", "markdown"]), default=None, help="Default: by name (folder or .md: markdown; CLAUDE.md, CLAUDE.local.md, .claude/: claude; else jsonl).")
@click.option("--global", "to_global", is_flag=True, help="Import into the global store (e.g. ~/.claude/CLAUDE.md).")
@click.option("--include-forgotten", is_flag=True, help="Also bring back memories that were forgotten (`crib forget`); by default they stay forgotten.")
def import_(source: Path, fmt: str | None, to_global: bool, include_forgotten: bool) -> None:
    """Import memories from SOURCE (`-` for stdin): crib's JSONL (content, type, created_at,
    metadata), a Claude Code memory file (CLAUDE.md…) or a folder of markdown notes, split into
    one memory per bullet or paragraph under its heading path.

    Everything is checked before anything is written: one bad record writes nothing. A memory you
    forgot stays forgotten when the file that held it is imported again (--include-forgotten).
    """
    kind, records = read_records(source, fmt, stdin=sys.stdin)
    if kind == "claude" and not to_global and str(source) != "-" and (Path.home() / ".claude") in source.resolve().parents:
        click.echo("crib: note: ~/.claude/ memory applies to every project; `--global` imports it into the global store", err=True)
    with open_memory(**scope_kwargs(to_global)) as memory, Progress("import", unit="entries") as progress, \
            Progress("embed", unit="entries") as embedding:
        fetch_model(memory)
        reports = memory.import_records(records, on_progress=progress, on_embed_progress=embedding, include_forgotten=include_forgotten)
        warn_all(memory)
    new = sum(1 for r in reports if not r.duplicate)
    forgotten = sum(1 for r in reports if FORGOTTEN in r.notes)
    rate = f", {progress.rate:.0f} entries/s" if reports else ""
    embedded = f"; embedded {embedding.done} at {embedding.rate:.0f}/s" if embedding.done else ""
    kept_out = f", {forgotten} forgotten before: not brought back (--include-forgotten)" if forgotten else ""
    click.echo(f"imported {new} entries ({len(reports) - new - forgotten} already present{kept_out}) from {kind}{rate}{embedded}")


@click.command()
@click.option("--raw", is_flag=True, help="Print what is stored, unredacted (a byte-faithful backup of entries written before redaction).")
def export(raw: bool) -> None:
    """Write every entry as JSONL to stdout (id, type, content, created_at, metadata), secrets redacted."""
    with open_memory(create=False, readonly=True) as memory:
        for record in memory.export():
            click.echo(json.dumps(record if raw else redact_value(record), ensure_ascii=False))


@click.command()
@click.argument("entity", required=False)
@click.option("--all", "all_versions", is_flag=True, help="Every version with its validity dates, not only current facts.")
@click.option("--json", "as_json", is_flag=True, help="A JSON list of facts.")
def facts(entity: str | None, all_versions: bool, as_json: bool) -> None:
    """List current facts (about ENTITY, or all); --all adds superseded versions with their dates."""
    with open_memory(create=False, readonly=True) as memory:
        text = facts_command_output(memory.store, entity, all_versions, as_json)
    # facts extracted from text stored before redaction existed: redacted as shown (JSON stays JSON)
    click.echo(json.dumps(redact_value(json.loads(text)), ensure_ascii=False, indent=2) if as_json else redact_for_render(text))


@click.command()
@click.option("--embedder", default=None, help="Switch the store to this embedder (e.g. ollama, minilm).")
@click.option("--write-cues", is_flag=True, help="Then let CRIB_CUE_MODEL write the recall cue of every memory stored without one.")
def reindex(embedder: str | None, write_cues: bool) -> None:
    """Embed entries that have no vector (the queue), or switch embedders explicitly."""
    model = get_settings().cue_model
    if write_cues and not model:
        raise ConfigError("--write-cues needs CRIB_CUE_MODEL: the Ollama model that writes the cues (e.g. gemma3:1b)")
    with open_memory(create=False) as memory, Progress("reindex", unit="entries") as progress:
        fetch_model(memory)
        result = memory.reindex(embedder, on_progress=progress)
    if write_cues and model:
        with open_memory(create=False) as memory, Progress("cues", unit="entries") as progress:
            result.update(write_missing_cues(memory, model, on_progress=progress))
    click.echo(json.dumps(result))
