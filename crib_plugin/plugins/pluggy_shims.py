"""pluggy shims: a plugin manager whose distribution info is filled in lazily, and registering
entry points (from the cache or from a full scan) the way pluggy's ``load_setuptools_entrypoints`` does.
"""

from __future__ import annotations

import importlib
import os
from pathlib import Path
from typing import Any

import pluggy

from .cache import CachedEntryPoint


class CribPluginManager(pluggy.PluginManager):
    """A ``pluggy.PluginManager`` whose distribution bookkeeping may be filled in lazily.

    Plugins registered from the entry-point cache know their distribution only by name and path;
    turning that into pluggy's ``DistFacade`` needs ``importlib.metadata``, which the cache exists
    to avoid. So it is done on the first :meth:`list_plugin_distinfo` call instead.
    """

    def __init__(self, project_name: str) -> None:
        super().__init__(project_name)
        self._pending_distinfo: list[tuple[object, str | None, str | None]] = []
        self.generation = 0  # bumped on every register/unregister: the Registry is rebuilt then

    def register(self, plugin: Any, name: str | None = None) -> str | None:
        """Register ``plugin``; the ``register_*`` registry is collected again on next use."""
        result = super().register(plugin, name)
        self.generation += 1
        return result

    def unregister(self, plugin: Any = None, name: str | None = None) -> Any:
        """Unregister ``plugin``; the ``register_*`` registry is collected again on next use."""
        result = super().unregister(plugin, name)
        self.generation += 1
        return result

    def list_plugin_distinfo(self) -> list[tuple[Any, Any]]:
        """(plugin, distinfo) pairs for every plugin loaded from an entry point, as pluggy's."""
        pending, self._pending_distinfo = self._pending_distinfo, []
        for plugin, dist_name, dist_path in pending:
            facade = _dist_facade(dist_name, dist_path)
            if facade is not None:
                self._plugin_distinfo.append((plugin, facade))
        return super().list_plugin_distinfo()


def _dist_facade(dist_name: str | None, dist_path: str | None) -> Any:
    """pluggy's wrapper around the distribution at ``dist_path`` (else named ``dist_name``), or None."""
    # deferred: the SessionStart hook would import importlib.metadata up front (72 ms)
    import importlib.metadata

    dist: Any = None
    try:
        if dist_path and os.path.isdir(dist_path):
            dist = importlib.metadata.PathDistribution(Path(dist_path))
        elif dist_name:
            dist = importlib.metadata.distribution(dist_name)
    except Exception:  # pragma: no cover - metadata gone since the plugin was imported
        return None
    if dist is None:
        return None
    try:
        # deferred: optional, falls back when missing (<1 ms)
        from pluggy._manager import DistFacade
    except ImportError:  # pragma: no cover - pluggy moved its private class
        return dist
    return DistFacade(dist)


def _wanted(name: str, dist_name: str | None, names: set[str] | None) -> bool:
    """Whether ``CRIB_LOAD_PLUGINS`` (``names``; None: everything) selects this entry point."""
    return names is None or name in names or (dist_name is not None and dist_name in names)


def _resolve(value: str) -> Any:
    """Import what an entry-point value names ("module" or "module:attr.sub"), as ``EntryPoint.load``."""
    spec = value.split("[", 1)[0]  # old-style "[extras]" suffix: ignored, as importlib.metadata does
    module_name, _, attrs = spec.partition(":")
    obj: Any = importlib.import_module(module_name.strip())  # deferred: an installed plugin's entry point
    for attr in attrs.strip().split("."):
        if attr:
            obj = getattr(obj, attr)
    return obj


def register_from_cache(pm: pluggy.PluginManager, eps: list[CachedEntryPoint], names: set[str] | None) -> bool:
    """Register the selected cached entry points; False (nothing registered) if one is stale.

    Everything is imported before anything is registered, so a stale entry leaves ``pm`` untouched
    for the full scan that follows. Names already registered or blocked are skipped, as pluggy's
    ``load_setuptools_entrypoints`` does.
    """
    loaded: list[tuple[str, Any, str | None, str | None]] = []
    seen: set[str] = set()
    for name, value, dist_name, dist_path in eps:
        if not _wanted(name, dist_name, names) or name in seen:
            continue
        if pm.get_plugin(name) is not None or pm.is_blocked(name):
            continue
        try:
            plugin = _resolve(value)
        except (ImportError, AttributeError):
            return False
        seen.add(name)
        loaded.append((name, plugin, dist_name, dist_path))
    for name, plugin, dist_name, dist_path in loaded:
        pm.register(plugin, name=name)
        if isinstance(pm, CribPluginManager):
            pm._pending_distinfo.append((plugin, dist_name, dist_path))
    return True


def register_from_scan(pm: pluggy.PluginManager, found: list[Any], names: set[str] | None) -> None:
    """Register the selected ``EntryPoint`` objects of a full scan (import errors propagate)."""
    facade: Any = None
    try:
        # deferred: optional, falls back when missing (<1 ms)
        from pluggy._manager import DistFacade as facade
    except ImportError:  # pragma: no cover - pluggy moved its private class
        pass
    for ep in found:
        dist = getattr(ep, "dist", None)
        if not _wanted(ep.name, getattr(dist, "name", None), names):
            continue
        if pm.get_plugin(ep.name) is not None or pm.is_blocked(ep.name):
            continue
        plugin = ep.load()
        pm.register(plugin, name=ep.name)
        if dist is not None and facade is not None:
            pm._plugin_distinfo.append((plugin, facade(dist)))
