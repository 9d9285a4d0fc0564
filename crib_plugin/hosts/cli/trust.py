"""``crib trust``: let this repository's ``.crib.toml`` set what a project file may not set untrusted.

A project file may tune retrieval; the keys that name code, another store, a path outside the
repository or weaker redaction are ignored until the user trusts the file (:mod:`crib_plugin.core.trust`).
``crib trust`` records the file's path and the SHA-256 of its bytes, so an edited file is untrusted
again; ``--list`` shows what is trusted, ``--revoke`` forgets it.
"""

from __future__ import annotations

from pathlib import Path

import click

from ...core.config import project_config_file, read_toml, specs
from ...core.errors import InputError
from ...core.trust import TUNES, digest, revoke, trust_store, trusted_files
from ...core.trust import trust as record


@click.command(name="trust")
@click.argument("file", required=False, type=click.Path(dir_okay=False, path_type=Path))
@click.option("--list", "listing", is_flag=True, help="List the trusted project files (and whether each is unchanged).")
@click.option("--revoke", "forget", is_flag=True, help="Stop trusting the file.")
def trust(file: Path | None, listing: bool, forget: bool) -> None:
    """Trust FILE (default: ./.crib.toml) to set every setting, as the user's own config can.

    Without trust, a project file's `templates`, `vec_extension`, `db`, `redact = false` and the
    like are ignored (docs/safety.md). Trust is for these exact bytes: an edited file is untrusted again.
    """
    if listing:
        entries = trusted_files()
        for path, sha in entries.items():
            state = "trusted" if digest(Path(path)) == sha else "changed since trusted (ignored)"
            click.echo(f"{path}  {state}")
        if not entries:
            click.echo(f"no trusted project files ({trust_store()})")
        return
    target = file or project_config_file()
    if forget:
        if not revoke(target):
            raise InputError(f"{target.resolve()} was not trusted")
        click.echo(f"no longer trusted: {target.resolve()}")
        return
    if not target.is_file():
        raise InputError(f"no project file at {target.resolve()}")
    table = read_toml(target, {spec.key for _, spec in specs()})
    sha = record(target)
    gained = sorted(k for k in table if k not in TUNES)
    click.echo(f"trusted: {target.resolve()} (sha256 {sha[:12]}…)")
    if gained:
        click.echo(f"it may now set: {', '.join(gained)}")
