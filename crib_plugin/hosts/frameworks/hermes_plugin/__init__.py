"""crib as a Hermes memory provider (a ``MemoryProvider``): the files Hermes loads from
``$HERMES_HOME/plugins/crib/``, copied there by ``python -m crib_plugin.hosts.frameworks.hermes_setup``.
The provider itself is :mod:`crib_plugin.hosts.frameworks.hermes`."""

from crib_plugin.hosts.frameworks.hermes import CribMemoryProvider, register

__all__ = ["CribMemoryProvider", "register"]
