"""The ``crib`` click application: stdin/stdout like the original crib, plus maintenance and inspection.

Errors crib raises on purpose (:class:`~crib_plugin.errors.CribError`) become one line on stderr
and a non-zero exit. ``retrieve`` and ``hook`` are the exceptions: they always exit 0 and print
nothing on failure, because a broken retrieval must never block the agent or put a traceback into
its context.

The commands live by group in :mod:`.data`, :mod:`.transfer`, :mod:`.admin`, :mod:`.hooks`, :mod:`.manage`;
:mod:`.registered` holds the ones :mod:`crib_plugin.builtin_commands` adds through ``register_commands``.
"""

from __future__ import annotations

import click

from ...core.errors import CribError
from ...plugins.manager import get_plugin_manager
from . import admin, data, hooks, migrate, transfer
from .common import CribGroup
from .manage import register as _register_manage
from .registered import REGISTERED_COMMANDS  # noqa: F401 - the names tests and plugins know


@click.group(cls=CribGroup)
@click.version_option(package_name="crib-plugin", prog_name="crib")
def cli() -> None:
    """crib — persistent memory for AI agents (one SQLite file: facts, full text, vectors).

    The project store is CRIB_DB (default .state/crib/crib.db at the git repository's root, else
    under the current directory); the global store is CRIB_GLOBAL_DB (default: the user data
    directory). `crib where` prints both.
    """



for _module in (data, transfer, admin, hooks, migrate):
    for _command in _module.COMMANDS:
        cli.add_command(_command)
_register_manage(cli)  # where, list, show, stats, forget, correct, log


def _load_plugin_commands() -> None:
    try:
        get_plugin_manager().hook.register_commands(cli=cli)
    except CribError as exc:  # pragma: no cover - a broken plugin must not break the CLI
        click.echo(f"crib: plugin commands not loaded: {exc}", err=True)


def main(argv: list[str] | None = None) -> None:
    """Console-script entry point."""
    _load_plugin_commands()
    cli.main(args=argv, prog_name="crib")

