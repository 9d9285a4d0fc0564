"""crib's own inspection commands, added through ``register_commands`` like a third party's.

Registered ``trylast`` (as datasette registers its built-ins), so a plugin's command of the same
name — added first — wins:

- ``crib calibrate``, ``crib eval``, ``crib eval-noanswer`` (defined in :mod:`crib_plugin.cli`).
- ``crib config [--json]``: every setting, its effective value and where it came from.
- ``crib plugins [--json]``: every loaded plugin with its version and the hooks it implements.
"""

from __future__ import annotations

import json
from typing import TYPE_CHECKING, Any

from ...core.config import describe, get_settings, project_config_file, user_config_file
from ..hookspecs import hookimpl
from ..manager import get_plugin_manager, plugin_report

if TYPE_CHECKING:  # click is imported only by the CLI: this module is loaded on the per-prompt path
    import click


@hookimpl(trylast=True)
def register_commands(cli: click.Group) -> None:
    # deferred: the UserPromptSubmit hook would import it up front (253 ms)
    from ...hosts.cli.registered import REGISTERED_COMMANDS

    for command in [*REGISTERED_COMMANDS, *_commands()]:
        if command.name not in cli.commands:  # a plugin's command of the same name came first
            cli.add_command(command)


def _commands() -> list[click.Command]:
    # deferred: the UserPromptSubmit hook would import it up front (135 ms)
    import click

    config = click.command(name="config")(
        click.option("--json", "as_json", is_flag=True, help="A JSON list: variable, key, value, source, file.")(config_command)
    )
    plugins = click.command(name="plugins")(
        click.option("--json", "as_json", is_flag=True, help="A JSON list: name, version, hooks.")(plugins_command)
    )
    return [config, plugins]



def config_command(as_json: bool) -> None:
    """Every setting: its value and where it came from (env, project file, user file, default).

    Precedence: environment variable, then ./.crib.toml, then the user config.toml, then default.
    """
    # deferred: the UserPromptSubmit hook would import it up front (135 ms)
    import click


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


def plugins_command(as_json: bool) -> None:
    """The plugins loaded (built-ins included): name, version and the hooks each implements."""
    # deferred: the UserPromptSubmit hook would import it up front (135 ms)
    import click


    rows = plugin_report(get_plugin_manager())
    if as_json:
        click.echo(json.dumps(rows, indent=2))
        return
    for row in rows:
        version = f" {row['version']}" if row["version"] else ""
        click.echo(f"{row['name']}{version}: {', '.join(row['hooks'])}")
