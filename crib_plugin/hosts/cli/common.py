"""What every ``crib`` command shares: the clean one-line failure, the group class, opening a store, ``--now``."""

from __future__ import annotations

import logging
import os
import sys
from typing import Any, NoReturn

import click

from ...core.errors import CribError
from ...core.faillog import log_failure
from ...memory import Memory
from ...scopes import global_db

log = logging.getLogger("crib")


def fail(message: str, code: int = 1) -> NoReturn:
    click.echo(f"crib: {message}", err=True)
    sys.exit(code)


class CribGroup(click.Group):
    """Turns CribError into a clean one-line message (no traceback) for every subcommand; anything
    else (a bug) into one line naming it, logged to ``crib.log`` — a command never ends in a
    traceback."""

    def invoke(self, ctx: click.Context) -> Any:
        try:
            return super().invoke(ctx)
        except CribError as exc:
            fail(str(exc), exc.exit_code)
        except (click.exceptions.ClickException, click.exceptions.Exit, click.exceptions.Abort):
            raise
        except Exception as exc:  # noqa: BLE001 -- the last line of defence: one line, exit 1, logged
            log_failure(f"crib {ctx.invoked_subcommand or ''}".strip(), exc)
            fail(f"failed: {type(exc).__name__}: {str(exc)[:300]} (a bug; logged to crib.log)")


def open_memory(create: bool = True, **kwargs: Any) -> Any:
    return Memory(create=create, **kwargs)


def scope_kwargs(to_global: bool) -> dict[str, Any]:
    """``open_memory`` arguments for the global store (``--global``), else none (the project's)."""
    if not to_global:
        return {}
    return {"path": global_db()}


def warn_all(memory: Any) -> None:
    for note in memory.warnings:
        click.echo(f"crib: warning: {note}", err=True)


def _set_now(_ctx: click.Context, _param: click.Parameter, value: str | None) -> None:
    """``--now``: the same as ``CRIB_NOW`` for this process (checked where it is read)."""
    if value:
        os.environ["CRIB_NOW"] = value


now_option = click.option(
    "--now", default=None, expose_value=False, callback=_set_now,
    help="ISO 8601 time taken as now for time expressions (CRIB_NOW); reproducible evaluations.",
)

