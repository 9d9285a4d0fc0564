"""``crib migrate --to TARGET``: copy a store to another backend (a SQLite file ↔ a PostgreSQL URL)."""

from __future__ import annotations

import click

from ...core.config import get_settings
from ...core.dburl import as_location
from ...scopes import global_db
from ...store import open_store
from ...store.transfer import migrate_store
from ..progress import Progress


@click.command()
@click.option("--to", "target", required=True, help="Where to copy the store: a postgresql:// URL or a SQLite file path.")
@click.option("--from", "source", default=None, help="The store to copy (default: the project store, CRIB_DB).")
@click.option("--global", "from_global", is_flag=True, help="Copy the global store (CRIB_GLOBAL_DB) instead.")
def migrate(target: str, source: str | None, from_global: bool) -> None:
    """Copy every memory, fact (with its history), vector, queued item, setting and audit row of a
    store into TARGET, keeping ids and dates. Resumable: run it again after an interruption and it
    goes on where it stopped. The source is left unchanged; point CRIB_DB at TARGET afterwards."""
    origin = as_location(source) if source else (global_db() if from_global else get_settings().db)
    destination = as_location(target)
    if str(origin) == str(destination):
        raise click.UsageError("--to names the store being copied")
    src = open_store(origin, create=False)
    try:
        dst = open_store(destination)
        try:
            with Progress("migrate", unit="rows") as progress:
                copied = migrate_store(src, dst, on_progress=progress)
        finally:
            dst.close()
    finally:
        src.close()
    rows = ", ".join(f"{table} {n}" for table, n in copied.items() if n)
    click.echo(f"copied {origin} → {destination}: {rows or 'nothing new'}")
