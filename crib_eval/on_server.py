"""Measurement stores on a PostgreSQL server: ``crib eval --db-url URL`` copies each conversation's
SQLite store (built and cached as usual) into its own database on the server, so the same rows are
scored through the other backend — recall on PostgreSQL beside recall on SQLite."""

from __future__ import annotations

import re
from pathlib import Path
from typing import Callable


def stores_on_server(stores: dict[str, Path], server_url: str, progress: Callable[[str], None] | None = None) -> dict[str, str]:
    """For each sample id, a fresh database ``crib_eval_<id>`` holding a copy of its store; returns
    sample id → URL. Needs a role that may create databases."""
    from crib_plugin.store import open_store
    from crib_plugin.store.postgres import create_database
    from crib_plugin.store.transfer import migrate_store

    urls: dict[str, str] = {}
    for sample_id, path in stores.items():
        name = "crib_eval_" + re.sub(r"[^a-z0-9]+", "_", sample_id.lower())
        url = create_database(server_url, name, replace=True)
        source, target = open_store(path, create=False), open_store(url)
        try:
            copied = migrate_store(source, target)
        finally:
            source.close()
            target.close()
        if progress:
            progress(f"{sample_id}: copied to the server ({copied.get('entries', 0)} entries)")
        urls[sample_id] = url
    return urls
