"""The ``crib`` command line, by concern (this ``__init__`` stays light: it is loaded on every prompt).

* :mod:`.io` — stdin (bounded, never failing) and the fail-open log (a leaf);
* :mod:`.hotpath` — the console script's ``main``: the per-prompt commands without click, everything
  else handed to :mod:`.app`; :mod:`.retrieve` — ``crib retrieve``, shared by both paths;
* :mod:`.app` — the click group; its commands by group in :mod:`.data` (write, types, retrieve,
  search), :mod:`.transfer` (import, export, facts, reindex), :mod:`.admin` (init, doctor, scrub,
  mcp), :mod:`.hooks` (``crib hook …``), :mod:`.manage` (where, list, show, stats, forget, correct,
  log) and :mod:`.registered` (calibrate, eval, eval-noanswer: added through ``register_commands``);
  :mod:`.common` holds what they share.

``crib_plugin.cli.cli``, ``.main``, ``.REGISTERED_COMMANDS`` and ``._load_plugin_commands`` still work:
they are loaded from :mod:`.app` on first access, so importing :mod:`.io` or :mod:`.hotpath` never
imports click.
"""

from __future__ import annotations

from typing import Any

_FROM_APP = frozenset({"cli", "main", "REGISTERED_COMMANDS", "_load_plugin_commands"})


def __getattr__(name: str) -> Any:
    """The click application's names, imported only when asked for (PEP 562)."""
    if name in _FROM_APP:
        # deferred: the MessageDisplay hook would import it up front (582 ms)
        from . import app

        return getattr(app, name)
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
