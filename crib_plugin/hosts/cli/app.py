"""The ``crib`` click application: stdin/stdout like the original crib, plus maintenance and inspection.

Errors crib raises on purpose (:class:`~crib_plugin.core.errors.CribError`) become one line on stderr
and a non-zero exit. ``retrieve`` and ``hook`` are the exceptions: they always exit 0 and print
nothing on failure, because a broken retrieval must never block the agent or put a traceback into
its context.

The group is lazy (click's documented ``LazyGroup`` pattern): :data:`COMMANDS` names each command's
module and attribute, and a command line imports only the module of the command it runs, which
imports what that command needs at its top. ``crib --help`` lists each command's help line read from
its module's source (:func:`short_help_of`), so it imports none of them either.
crib's own plugin commands (eval, calibrate, …) come through ``register_commands`` as a third
party's would, as entries of the same table (:mod:`crib_plugin.plugins.default_plugins.commands`).
"""

from __future__ import annotations

import ast
import importlib
import importlib.util
from typing import Any, Mapping

import click

from ...core.errors import CribError
from ...core.notices import drain
from ...plugins.manager import get_plugin_manager
from .common import CribGroup

#: The core commands: name → ``module:attribute`` under :mod:`crib_plugin.hosts.cli`.
COMMANDS: dict[str, str] = {
    "write": "writing:write", "types": "data:types", "retrieve": "data:retrieve", "search": "data:search",
    "import": "transfer:import_", "export": "transfer:export", "facts": "transfer:facts", "reindex": "transfer:reindex",
    "init": "admin:init", "doctor": "admin:doctor", "scrub": "admin:scrub", "mcp": "serve:mcp",
    "hook": "hooks:hook", "migrate": "migrate:migrate",
    "setup": "setup_cmd:setup",
    "where": "manage:where", "list": "manage:list_", "show": "manage:show", "stats": "manage:stats",
    "forget": "manage:forget", "correct": "manage:correct", "cue": "manage:cue", "log": "manage:log_", "sync": "sync:sync",
    "trust": "trust:trust", "ui": "ui:ui",
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

    def format_commands(self, ctx: click.Context, formatter: click.HelpFormatter) -> None:
        """The command list of ``--help``, without importing a lazy command's module (the MCP SDK, numpy,
        the evaluations…): each line is read from the module's source; a command whose help cannot be read
        that way is loaded as click would."""
        names = self.list_commands(ctx)
        limit = formatter.width - 6 - max(map(len, names), default=0)  # click's own layout
        rows = []
        for name in names:
            text = None if name in self.commands else short_help_of(self.lazy[name], limit)
            if text is None:
                command = self.get_command(ctx, name)
                if command is None or command.hidden:
                    continue
                text = command.get_short_help_str(limit)
            rows.append((name, text))
        if rows:
            with formatter.section("Commands"):
                formatter.write_dl(rows)


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


def short_help_of(spec: str, limit: int = 45) -> str | None:
    """The help line of the command ``spec`` names, read from its module's source without importing
    it: the ``short_help=``/``help=`` of its ``click.command`` decorator, else its docstring, shortened
    as click shortens it. None when the source or the function cannot be found (the caller then
    imports the command)."""
    module_name, _, attr = spec.partition(":")
    name = module_name if "." in module_name else f"{__package__}.{module_name}"
    try:
        found = importlib.util.find_spec(name)
        source = found.loader.get_source(name) if found and found.loader else None  # type: ignore[attr-defined]
        tree = ast.parse(source or "")
    except (ImportError, SyntaxError, ValueError, AttributeError):
        return None
    for node in tree.body:
        if isinstance(node, ast.FunctionDef) and node.name == attr:
            for deco in node.decorator_list:
                func = deco.func if isinstance(deco, ast.Call) else None
                called = func.attr if isinstance(func, ast.Attribute) else func.id if isinstance(func, ast.Name) else None
                if not isinstance(deco, ast.Call) or called not in ("command", "group"):
                    continue  # an option's help, not the command's
                for kw in deco.keywords:
                    if kw.arg in ("short_help", "help") and isinstance(kw.value, ast.Constant):
                        return _shortened(str(kw.value.value), limit)
            return _shortened(ast.get_docstring(node) or "", limit)
    return None


def _shortened(help_text: str, limit: int) -> str:
    """``help_text`` cut as click cuts a command's help for a group's list."""
    return click.Command(None, help=help_text).get_short_help_str(limit)


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
    """Console-script entry point; notices a lower layer queued (an upgraded store) go to stderr at the end."""
    load_plugin_commands()
    try:
        cli.main(args=argv, prog_name="crib")
    finally:
        for line in drain():
            click.echo(line, err=True)
