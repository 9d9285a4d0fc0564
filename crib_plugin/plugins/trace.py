"""``CRIB_TRACE_PLUGINS=1``: see what plugins do, and what their failures were.

crib's hooks fail open by design — a plugin's broken channel, factory or hook never breaks a
prompt — so its error never reaches the agent, and a plugin author would not see it either. With
the switch on, every hook call goes to stderr with the plugins that implement it (pluggy's public
``add_hookcall_monitoring``, as datasette's ``DATASETTE_TRACE_PLUGINS``), and so does every error
crib's fail-open paths swallow (:func:`swallowed`). stdout is never touched: a hook's stdout is the
agent's context.
"""

from __future__ import annotations

import sys
from typing import Any

from ..core.config import setting_value

PREFIX = "crib trace:"


def _line(text: str) -> None:
    try:
        print(f"{PREFIX} {text}", file=sys.stderr, flush=True)
    except (OSError, ValueError):  # a closed stderr: tracing must never fail a hook
        pass


def monitor(pm: Any) -> None:
    """Print each hook call of ``pm``: its name, the plugins it runs (in call order) and its
    arguments' names; then how it ended, and any exception it raised."""

    def before(hook_name: str, hook_impls: Any, kwargs: dict[str, Any]) -> None:
        plugins = ", ".join(impl.plugin_name for impl in reversed(hook_impls)) or "no plugin"
        _line(f"{hook_name}({', '.join(kwargs)}) → {plugins}")

    def after(outcome: Any, hook_name: str, hook_impls: Any, kwargs: dict[str, Any]) -> None:
        if outcome.exception is not None:
            _line(f"{hook_name} raised {type(outcome.exception).__name__}: {outcome.exception}")

    pm.add_hookcall_monitoring(before, after)


def swallowed(where: str, exc: BaseException) -> None:
    """Report an exception a fail-open path is about to swallow (``where``: what failed), when
    ``CRIB_TRACE_PLUGINS`` is on; nothing otherwise."""
    if setting_value("trace_plugins", False):
        _line(f"{where} failed (crib went on without it): {type(exc).__name__}: {exc}")
