"""``crib calibrate``: derive a store's vector relevance gate (:mod:`crib_plugin.hosts.calibrate`).

Added through ``register_commands`` (:mod:`crib_plugin.plugins.default_plugins.commands`), as a
plugin's command would be.
"""

from __future__ import annotations

import json

import click

from ..calibrate import calibrate as run_calibration
from ..progress import Progress, fetch_model
from .common import open_memory


@click.command()  # added through register_commands
@click.option("--dry-run", is_flag=True, help="Measure and report without writing the gate into the store.")
@click.option("--reset", is_flag=True, help="Forget the calibrated gate and use the shipped default again.")
def calibrate(dry_run: bool, reset: bool) -> None:
    """Derive this store's vector relevance gate from off-topic probes (JSON report)."""
    with open_memory(create=False) as memory:
        if reset:
            memory.store.clear_gate(memory.embedder_key())
            click.echo(json.dumps({"reset": True}))
            return
        fetch_model(memory)
        with Progress("calibrate", unit="texts") as progress:
            report = run_calibration(memory, write=not dry_run, on_progress=progress)
        click.echo(json.dumps(report, indent=2))
