"""The ``crib`` click application: stdin/stdout like the original crib, plus maintenance and inspection.

Errors crib raises on purpose (:class:`~crib_plugin.errors.CribError`) become one line on stderr
and a non-zero exit. ``retrieve`` and ``hook`` are the exceptions: they always exit 0 and print
nothing on failure, because a broken retrieval must never block the agent or put a traceback into
its context.

The group is lazy (click's documented ``LazyGroup`` pattern): :data:`COMMANDS` names each command's
module and attribute, and a command line imports only the module of the command it runs, which
imports what that command needs at its top. ``crib --help`` loads them all to list their help.
crib's own plugin commands (eval, calibrate, …) come through ``register_commands`` as a third
party's would, as entries of the same table (:mod:`crib_plugin.plugins.default_plugins.commands`).
"""

from __future__ import annotations

import importlib
from typing import Any, Mapping

import click

from ...core.errors import CribError
from ...plugins.manager import get_plugin_manager
from .common import CribGroup

#: The core commands: name → ``module:attribute`` under :mod:`crib_plugin.hosts.cli`.
COMMANDS: dict[str, str] = {
    "write": "writing:write", "types": "data:types", "retrieve": "data:retrieve", "search": "data:search",
    "import": "transfer:import_", "export": "transfer:export", "facts": "transfer:facts", "reindex": "transfer:reindex",
    "init": "admin:init", "doctor": "admin:doctor", "scrub": "admin:scrub", "mcp": "serve:mcp",
    "hook": "hooks:hook", "migrate": "migrate:migrate",
    "where": "manage:where", "list": "manage:list_", "show": "manage:show", "stats": "manage:stats",
    "forget": "manage:forget", "correct": "manage:correct", "cue": "manage:cue", "log": "manage:log_",
    "ui": "ui:ui",
}


class LazyGroup(CribGroup):
    """A click group whose commands are imported when asked for: ``lazy`` maps a name to
    ``"module:attribute"`` (relative to this package, or absolute). A command added with
    ``add_command`` (a plugin's) takes precedence over a lazy entry of the same name."""

    def __init__(self, *args: Any, lazy: Mapping[str, str] | None = None, **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        self.lazy: dict[str, str] = dict(lazy or {})

    def list_commands(self, ctx: click.Context) -> list[str]:
        return sorted({*self.commands, *self.lazy})

    def get_command(self, ctx: click.Context, cmd_name: str) -> click.Command | None:
        if cmd_name not in self.commands and cmd_name in self.lazy:
            self.add_command(load_command(self.lazy[cmd_name]), cmd_name)
        return self.commands.get(cmd_name)


def load_command(spec: str) -> click.Command:
    """The click command ``spec`` (``"module:attribute"``) names; a leading-dot-free module without a
    package prefix is taken relative to :mod:`crib_plugin.hosts.cli`."""
    module_name, _, attr = spec.partition(":")
    package = None if "." in module_name else __package__
    module = importlib.import_module(module_name if package is None else f".{module_name}", package)  # deferred: the command table: only the command run is imported
    command = getattr(module, attr)
    if not isinstance(command, click.Command):
        raise TypeError(f"{spec} is not a click command")
    return command


@click.group(cls=LazyGroup, lazy=COMMANDS)
@click.version_option(package_name="crib-plugin", prog_name="crib")
def cli() -> None:
    """crib — persistent memory for AI agents (one SQLite file: facts, full text, vectors).

    The project store is CRIB_DB (default .state/crib/crib.db at the git repository's root, else
    under the current directory); the global store is CRIB_GLOBAL_DB (default: the user data
    directory). `crib where` prints both.
    """


def load_plugin_commands() -> None:
    """Let every plugin add its commands (``register_commands``); crib's own come last."""
    try:
        get_plugin_manager().hook.register_commands(cli=cli)
    except CribError as exc:  # pragma: no cover - a broken plugin must not break the CLI
        click.echo(f"crib: plugin commands not loaded: {exc}", err=True)



def main(argv: list[str] | None = None) -> None:
    """Console-script entry point."""
    load_plugin_commands()
    cli.main(args=argv, prog_name="crib")
