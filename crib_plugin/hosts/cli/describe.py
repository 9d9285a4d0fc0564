"""``crib config`` and ``crib plugins``: what is configured and what is loaded.

Added through ``register_commands`` (:mod:`crib_plugin.plugins.default_plugins.commands`), as a
plugin's commands would be.
"""

from __future__ import annotations

import json
from typing import Any

import click

from ...core.config import describe, get_settings, project_config_file, user_config_file
from ...plugins.manager import get_plugin_manager, plugin_report
from ..frameworks import adapter_report


@click.command(name="config")
@click.option("--json", "as_json", is_flag=True, help="A JSON list: variable, key, value, source, file.")
def config(as_json: bool) -> None:
    """Every setting: its value and where it came from (env, project file, user file, default).

    Precedence: environment variable, then ./.crib.toml, then the user config.toml, then default.
    """
    rows = describe(get_settings())
    if as_json:
        click.echo(json.dumps(rows, indent=2))
        return
    values = ["—" if r["value"] is None else _plain(r["value"]) for r in rows]
    width = max(len(r["variable"]) for r in rows)
    value_width = min(40, max(len(v) for v in values))
    for row, value in zip(rows, values):
        where = row["source"] + (f" ({row['file']})" if row["file"] else "")
        click.echo(f"{row['variable']:<{width}}  {value:<{value_width}}  [{where}]")
    click.echo(f"\nfiles: project {project_config_file().resolve()}, user {user_config_file()}")


def _plain(value: Any) -> str:
    if isinstance(value, list):
        return ",".join(str(v) for v in value)
    if isinstance(value, bool):
        return "1" if value else "0"
    return str(value)


@click.command(name="plugins")
@click.option("--json", "as_json", is_flag=True, help="A JSON list: name, version, hooks (adapters: framework, installed, extra).")
def plugins(as_json: bool) -> None:
    """The plugins loaded (built-ins included): name, version and the hooks each implements; then
    crib's adapters for Python agent frameworks and whether each framework is installed."""
    rows = plugin_report(get_plugin_manager())
    adapters = adapter_report()
    if as_json:
        click.echo(json.dumps(rows + adapters, indent=2))
        return
    for row in rows:
        version = f" {row['version']}" if row["version"] else ""
        click.echo(f"{row['name']}{version}: {', '.join(row['hooks'])}")
    click.echo("adapters for Python agent frameworks (docs/python.md):")
    for row in adapters:
        state = f"installed ({row['framework']} {row['version']})" if row["installed"] else \
            f"not installed (pip install 'crib-plugin[{row['extra']}]')"
        click.echo(f"  {row['module']}: {state}")
