"""crib's own optional commands, added through ``register_commands`` like a third party's.

Registered ``trylast`` (as datasette registers its built-ins), so a plugin's command of the same
name — added first — wins. They are entries of the ``crib`` group's lazy command table
(:class:`crib_plugin.hosts.cli.app.LazyGroup`): naming them imports nothing, and only the command
run is loaded.

- ``crib calibrate``, ``crib eval``, ``crib eval-noanswer``, ``crib recall``;
- ``crib config [--json]``: every setting, its effective value and where it came from;
- ``crib plugins [--json]``: every loaded plugin with its version and the hooks it implements.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from ..hookspecs import hookimpl

if TYPE_CHECKING:  # click is imported only by the CLI: this module is loaded on the per-prompt path
    import click

#: name → ``module:attribute`` of the click command.
BUILT_IN_COMMANDS: dict[str, str] = {
    "calibrate": "crib_plugin.hosts.cli.calibration:calibrate",
    "eval": "crib_plugin.hosts.cli.registered:eval_",
    "eval-noanswer": "crib_plugin.hosts.cli.registered:eval_noanswer",
    "recall": "crib_plugin.hosts.cli.recall:recall",
    "config": "crib_plugin.hosts.cli.describe:config",
    "plugins": "crib_plugin.hosts.cli.describe:plugins",
}


@hookimpl(trylast=True)
def register_commands(cli: click.Group) -> None:
    """Add the built-in optional commands to crib's lazy group, unless a plugin added one of the name."""
    for name, spec in BUILT_IN_COMMANDS.items():
        if name not in cli.commands:  # a plugin's command of the same name came first
            cli.lazy.setdefault(name, spec)  # type: ignore[attr-defined]
