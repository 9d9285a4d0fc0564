"""The entry types known to this process: the built-ins plus what plugins registered.

Above :mod:`crib_plugin.core.entry_types` (a leaf the data path reads) and :mod:`crib_plugin.plugins`
(which loads the plugins that register types), so the table never imports the plugin manager.
"""

from __future__ import annotations

from ..core.entry_types import EntryType, as_table
from .manager import registry


def registered_types() -> dict[str, EntryType]:
    """Every type known to this process: the built-ins plus what plugins registered."""
    return as_table(registry().types)
