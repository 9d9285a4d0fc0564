"""Former home of the ``crib`` console script's ``main``, now :mod:`crib_plugin.cli.hotpath`.

Kept so that an environment installed before the move (its ``crib`` script names
``crib_plugin.hotpath:main``) keeps working until it is reinstalled.
"""

from __future__ import annotations

from .cli.hotpath import fast_exit, main  # noqa: F401
