"""pluggy shims: a plugin manager whose distribution info is filled in lazily, and registering
entry points (from the cache or from a full scan) the way pluggy's ``load_setuptools_entrypoints`` does.

A third-party plugin that fails to import (a bug in it, a missing dependency) is skipped with one
line on stderr (``crib: plugin 'x' failed to load: ImportError: …``); crib and every other plugin
keep working. pluggy's own loader would let the exception (and its traceback) end every command.
"""

from __future__ import annotations

import importlib
import os
import sys
from pathlib import Path
from typing import Any

import pluggy

from .cache import CachedEntryPoint

try:  # pluggy's wrapper of a distribution (its version, for `crib plugins`): a private class
    from pluggy._manager import DistFacade
except ImportError:  # pragma: no cover - pluggy moved it: the distribution itself is used
    DistFacade = None  # type: ignore[assignment,misc]


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
    return dist if DistFacade is None else DistFacade(dist)


def _wanted(name: str, dist_name: str | None, names: set[str] | None) -> bool:
    """Whether ``CRIB_LOAD_PLUGINS`` (``names``; None: everything) selects this entry point."""
    return names is None or name in names or (dist_name is not None and dist_name in names)


def report_failed(name: str, exc: BaseException) -> None:
    """The one stderr line for a plugin that could not be loaded (its first line of message only)."""
    lines = str(exc).strip().splitlines()
    why = f"{type(exc).__name__}: {lines[0]}" if lines else type(exc).__name__
    print(f"crib: plugin {name!r} failed to load: {why}", file=sys.stderr)


class _Stale(Exception):
    """A cached entry point that no longer names anything: its module or attribute is gone."""


def _resolve(value: str) -> Any:
    """Import what an entry-point value names ("module" or "module:attr.sub"), as ``EntryPoint.load``.

    Raises :class:`_Stale` when the module itself is not there, or imports but lacks the attribute
    (the cache is out of date); any other exception is the plugin's own failure and propagates.
    """
    spec = value.split("[", 1)[0]  # old-style "[extras]" suffix: ignored, as importlib.metadata does
    module_name, _, attrs = spec.partition(":")
    module_name = module_name.strip()
    try:
        obj: Any = importlib.import_module(module_name)  # deferred: an installed plugin's entry point
    except ModuleNotFoundError as exc:
        gone = exc.name is not None and (module_name == exc.name or module_name.startswith(exc.name + "."))
        if gone:
            raise _Stale(value) from exc
        raise  # the plugin imports something that is not installed: its failure, not the cache's
    for attr in attrs.strip().split("."):
        if attr:
            try:
                obj = getattr(obj, attr)
            except AttributeError as exc:
                raise _Stale(value) from exc
    return obj


def register_from_cache(pm: pluggy.PluginManager, eps: list[CachedEntryPoint], names: set[str] | None) -> bool:
    """Register the selected cached entry points; False (nothing registered) if one is stale.

    Everything is imported before anything is registered, so a stale entry leaves ``pm`` untouched
    for the full scan that follows. Names already registered or blocked are skipped, as pluggy's
    ``load_setuptools_entrypoints`` does; a plugin that fails to import is skipped with one line on
    stderr (the cache stays: a rescan would find the same broken plugin).
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
        except _Stale:
            return False
        except Exception as exc:  # noqa: BLE001 - a third party's module may raise anything on import
            report_failed(name, exc)
            seen.add(name)
            continue
        seen.add(name)
        loaded.append((name, plugin, dist_name, dist_path))
    for name, plugin, dist_name, dist_path in loaded:
        pm.register(plugin, name=name)
        if isinstance(pm, CribPluginManager):
            pm._pending_distinfo.append((plugin, dist_name, dist_path))
    return True


def register_from_scan(pm: pluggy.PluginManager, found: list[Any], names: set[str] | None) -> None:
    """Register the selected ``EntryPoint`` objects of a full scan; one that fails to import is
    skipped with one line on stderr."""
    facade: Any = DistFacade
    for ep in found:
        dist = getattr(ep, "dist", None)
        if not _wanted(ep.name, getattr(dist, "name", None), names):
            continue
        if pm.get_plugin(ep.name) is not None or pm.is_blocked(ep.name):
            continue
        try:
            plugin = ep.load()
        except Exception as exc:  # noqa: BLE001 - a third party's module may raise anything on import
            report_failed(ep.name, exc)
            continue
        pm.register(plugin, name=ep.name)
        if dist is not None and facade is not None:
            pm._plugin_distinfo.append((plugin, facade(dist)))
