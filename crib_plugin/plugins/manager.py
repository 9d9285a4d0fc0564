"""The plugin manager: built-in plugins listed in one place, third-party ones via entry points.

Third-party plugins are packages declaring an entry point in the ``crib`` group. They are loaded
unless ``CRIB_LOAD_PLUGINS`` says otherwise (a comma list of entry-point or distribution names to
load, or an empty string for none), or the test suite set ``sys._called_from_test`` — the same switch
simonw/llm uses so tests never see plugins that happen to be installed.

The entry-point cache lives in :mod:`crib_plugin.plugins_cache`; pluggy shims (lazy distribution
info, registering cached entry points) in :mod:`crib_plugin.plugins_pluggy`.
"""

from __future__ import annotations

import importlib
import sys
import weakref
from dataclasses import dataclass, field
from typing import Any, Callable

import pluggy

from .. import __version__
from ..core.config import get_settings
from ..core.entry_types import EntryType
from ..core.errors import ConfigError
from . import hookspecs
from .cache import (  # noqa: F401  (CACHE_FILE, plugin_cache_dir, cache_key: re-exported)
    CACHE_FILE,
    cache_enabled,
    cache_key,
    cache_lookup,
    cache_write,
    key_is_racy,
    plugin_cache_dir,
    scan_entry_points,
)
from .pluggy_shims import CribPluginManager, register_from_cache, register_from_scan

DEFAULT_PLUGINS: tuple[str, ...] = (
    "crib_plugin.read.channels.fulltext",
    "crib_plugin.read.channels.vectors",
    "crib_plugin.read.channels.facts",
    "crib_plugin.plugins.default_plugins.models",
    "crib_plugin.plugins.default_plugins.hooks",
    "crib_plugin.plugins.default_plugins.commands",
)

_pm: pluggy.PluginManager | None = None


def _load_entrypoints(pm: pluggy.PluginManager) -> None:
    """Register the third-party plugins ``CRIB_LOAD_PLUGINS`` selects, from the cache when it is valid."""
    wanted = get_settings().load_plugins
    if hasattr(sys, "_called_from_test") and wanted is None:
        return
    names: set[str] | None = None
    if wanted is not None:
        names = set(wanted)
        if not names:
            return
    use_cache = cache_enabled()
    key: dict[str, Any] | None = None
    if use_cache:
        try:
            key = cache_key()
        except Exception:
            key = None
    if key is not None:
        cached = cache_lookup(key)
        if cached is not None:
            if register_from_cache(pm, cached, names):
                return
            cache_write(key, None)  # stale: forget it, then scan once
    cached_eps, found = scan_entry_points()
    if key is not None and not key_is_racy(key):
        cache_write(key, cached_eps)
    register_from_scan(pm, found, names)


def new_plugin_manager(*, load_entrypoints: bool = True) -> pluggy.PluginManager:
    """A fresh manager with the hookspecs, built-ins and (optionally) installed plugins."""
    pm = CribPluginManager("crib")
    pm.add_hookspecs(hookspecs)
    if load_entrypoints:
        _load_entrypoints(pm)
    for name in DEFAULT_PLUGINS:
        module = importlib.import_module(name)  # deferred: the built-in plugins, by name, registered on first use
        pm.register(module, name)
    return pm


def get_plugin_manager() -> pluggy.PluginManager:
    """The process-wide plugin manager (created on first use)."""
    global _pm
    if _pm is None:
        _pm = new_plugin_manager()
    return _pm


@dataclass
class Registry:
    """Everything plugins registered through the ``register_*`` hooks. First registration wins."""

    channels: dict[str, Any] = field(default_factory=dict)
    embedders: dict[str, Callable[[], Any]] = field(default_factory=dict)
    extractors: dict[str, Callable[[], Any]] = field(default_factory=dict)
    rerankers: dict[str, Callable[[], Any]] = field(default_factory=dict)
    judges: dict[str, Callable[[], Any]] = field(default_factory=dict)
    types: dict[str, Any] = field(default_factory=dict)  # name -> entry_types.EntryType

    @classmethod
    def collect(cls, pm: pluggy.PluginManager) -> "Registry":
        reg = cls()

        def add_channel(channel: Any) -> None:
            reg.channels.setdefault(channel.name, channel)

        def adder(target: dict[str, Callable[[], Any]]) -> Callable[[str, Callable[[], Any]], None]:
            def add(name: str, factory: Callable[[], Any]) -> None:
                target.setdefault(name.lower(), factory)

            return add

        pm.hook.register_channels(register=add_channel)
        pm.hook.register_embedders(register=adder(reg.embedders))
        pm.hook.register_extractors(register=adder(reg.extractors))
        pm.hook.register_rerankers(register=adder(reg.rerankers))
        pm.hook.register_judges(register=adder(reg.judges))

        def add_type(entry_type: Any) -> None:
            if not isinstance(entry_type, EntryType):
                raise ConfigError(f"register_types: expected an EntryType, got {type(entry_type).__name__}")
            reg.types.setdefault(entry_type.name, entry_type)

        pm.hook.register_types(register=add_type)
        return reg

    def make(self, kind: str, name: str) -> Any:
        """Instantiate the ``kind`` ("embedders", …) registered as ``name``; ConfigError if unknown."""
        table: dict[str, Callable[[], Any]] = getattr(self, kind)
        factory = table.get(name.lower())
        if factory is None:
            known = ", ".join(sorted(table)) or "none"
            raise ConfigError(f"unknown {kind[:-1]} {name!r} (registered: {known})")
        return factory()

    def try_make(self, kind: str, name: str) -> tuple[Any | None, str | None]:
        """:meth:`make`, failing open: ``(instance, None)``, or ``(None, why)`` for an unknown name
        or a plugin's broken factory — for optional stages (rerankers, judges) that fall back."""
        try:
            return self.make(kind, name), None
        except Exception as exc:  # noqa: BLE001 - a third party's factory may raise anything
            return None, str(exc)


_registries: "weakref.WeakKeyDictionary[pluggy.PluginManager, tuple[int, Registry]]" = weakref.WeakKeyDictionary()


def registry(pm: pluggy.PluginManager | None = None) -> Registry:
    """The registry of a plugin manager, collected once per set of plugins (forgotten with it).

    A :class:`CribPluginManager` counts its registrations; when a plugin was registered or removed
    since the registry was collected, it is collected again, so a late plugin's channels,
    embedders, extractors and rerankers are seen by every ``Memory`` opened afterwards.
    """
    pm = pm or get_plugin_manager()
    generation = getattr(pm, "generation", 0)
    cached = _registries.get(pm)
    if cached is None or cached[0] != generation:
        cached = (generation, Registry.collect(pm))
        _registries[pm] = cached
    return cached[1]


def plugin_report(pm: pluggy.PluginManager) -> list[dict[str, Any]]:
    """What ``crib plugins`` shows: per registered plugin, its name, version and hooks."""
    versions: dict[int, str] = {}
    for plugin, dist in pm.list_plugin_distinfo():
        versions[id(plugin)] = str(getattr(dist, "version", "") or "")
    rows: list[dict[str, Any]] = []
    for name, plugin in pm.list_name_plugin():
        if plugin is None:
            continue
        hooks = sorted(caller.name for caller in pm.get_hookcallers(plugin) or [])
        version = versions.get(id(plugin)) or (_crib_version() if name.startswith("crib_plugin.") else None)
        rows.append({"name": name, "version": version, "hooks": hooks})
    return rows


def _crib_version() -> str:
    return str(__version__)
