"""The plugin manager: crib's own plugins listed in one place, third-party ones from entry points.

Third-party plugins are packages declaring an entry point in the ``crib`` group. They are loaded
unless ``CRIB_LOAD_PLUGINS`` says otherwise (a comma list of entry-point or distribution names, or
an empty string for none), or the test suite set ``sys._called_from_test`` — the switch simonw/llm
uses so tests never see plugins that happen to be installed. Only pluggy's public API is used.

The entry points come from :mod:`crib_plugin.plugins.cache` (a scan of the installed
distributions, cached per interpreter and ``sys.path``: the scan costs a cold ``crib retrieve``
45–55 ms). A plugin that fails to import is skipped with one line on stderr; crib and every other
plugin keep working. ``CRIB_TRACE_PLUGINS=1`` prints every hook call (:mod:`.trace`).
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
from . import hookspecs, trace
from .cache import CACHE_FILE, CachedEntryPoint, cache_key, entry_points, plugin_cache_dir  # noqa: F401  (re-exported)

DEFAULT_PLUGINS: tuple[str, ...] = (
    "crib_plugin.read.channels.fulltext",
    "crib_plugin.read.channels.vectors",
    "crib_plugin.read.channels.facts",
    "crib_plugin.plugins.default_plugins.models",
    "crib_plugin.plugins.default_plugins.hooks",
    "crib_plugin.plugins.default_plugins.commands",
)

_pm: pluggy.PluginManager | None = None
#: Per manager: the distribution (name, version) of each plugin loaded from an entry point.
_dists: "weakref.WeakKeyDictionary[pluggy.PluginManager, dict[str, tuple[str | None, str | None]]]" = weakref.WeakKeyDictionary()


class Stale(Exception):
    """A cached entry point that no longer names anything: its module or attribute is gone."""


def resolve(value: str) -> Any:
    """Import what an entry-point value names ("module" or "module:attr.sub"), as ``EntryPoint.load``.

    Raises :class:`Stale` when the module itself is not there, or lacks the attribute; any other
    exception is the plugin's own failure (a missing dependency of its own) and propagates."""
    module_name, _, attrs = value.split("[", 1)[0].partition(":")  # "[extras]": ignored, as importlib.metadata does
    try:
        obj: Any = importlib.import_module(module_name.strip())  # deferred: an installed plugin's entry point
    except ModuleNotFoundError as exc:
        if exc.name is not None and (module_name.strip() + ".").startswith(exc.name + "."):
            raise Stale(value) from exc
        raise
    for attr in filter(None, attrs.strip().split(".")):
        if not hasattr(obj, attr):
            raise Stale(value)
        obj = getattr(obj, attr)
    return obj


def register_entry_points(pm: pluggy.PluginManager, eps: list[CachedEntryPoint], names: set[str] | None) -> None:
    """Import the selected entry points, then register them (all imports first: a stale one raises
    :class:`Stale` with ``pm`` untouched). Names already registered or blocked are skipped, as
    pluggy's ``load_setuptools_entrypoints`` does."""
    loaded: dict[str, tuple[Any, str | None, str | None]] = {}
    for name, value, dist, version in eps:
        if name in loaded or pm.get_plugin(name) is not None or pm.is_blocked(name):
            continue
        if names is not None and name not in names and dist not in names:
            continue
        try:
            loaded[name] = (resolve(value), dist, version)
        except Stale:
            raise
        except Exception as exc:  # noqa: BLE001 - a third party's module may raise anything on import
            lines = str(exc).strip().splitlines()
            print(f"crib: plugin {name!r} failed to load: {type(exc).__name__}{': ' + lines[0] if lines else ''}", file=sys.stderr)
    for name, (plugin, dist, version) in loaded.items():
        pm.register(plugin, name=name)
        _dists.setdefault(pm, {})[name] = (dist, version)


def _load_entrypoints(pm: pluggy.PluginManager) -> None:
    """Register the third-party plugins ``CRIB_LOAD_PLUGINS`` selects (cached entry points first)."""
    wanted = get_settings().load_plugins
    if (hasattr(sys, "_called_from_test") and wanted is None) or wanted == []:
        return
    names = set(wanted) if wanted is not None else None
    try:
        register_entry_points(pm, entry_points(), names)
    except Stale:  # a cached module removed without the key noticing: scan once, and cache that
        register_entry_points(pm, entry_points(rescan=True), names)


def new_plugin_manager(*, load_entrypoints: bool = True) -> pluggy.PluginManager:
    """A fresh manager with the hookspecs, built-ins and (optionally) installed plugins."""
    pm = pluggy.PluginManager("crib")
    pm.add_hookspecs(hookspecs)
    if get_settings().trace_plugins:
        trace.monitor(pm)
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

        def add_type(entry_type: Any) -> None:
            if not isinstance(entry_type, EntryType):
                raise ConfigError(f"register_types: expected an EntryType, got {type(entry_type).__name__}")
            reg.types.setdefault(entry_type.name, entry_type)

        pm.hook.register_channels(register=add_channel)
        pm.hook.register_embedders(register=adder(reg.embedders))
        pm.hook.register_extractors(register=adder(reg.extractors))
        pm.hook.register_rerankers(register=adder(reg.rerankers))
        pm.hook.register_judges(register=adder(reg.judges))
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
            trace.swallowed(f"{kind[:-1]} {name!r}", exc)
            return None, str(exc)


_registries: "weakref.WeakKeyDictionary[pluggy.PluginManager, tuple[tuple[int, ...], Registry]]" = weakref.WeakKeyDictionary()


def registry(pm: pluggy.PluginManager | None = None) -> Registry:
    """The registry of a plugin manager, collected once per set of plugins (forgotten with it): a
    plugin registered or removed later is seen by every ``Memory`` opened afterwards."""
    pm = pm or get_plugin_manager()
    plugins = tuple(id(plugin) for _, plugin in pm.list_name_plugin())
    cached = _registries.get(pm)
    if cached is None or cached[0] != plugins:
        cached = (plugins, Registry.collect(pm))
        _registries[pm] = cached
    return cached[1]


def plugin_report(pm: pluggy.PluginManager) -> list[dict[str, Any]]:
    """What ``crib plugins`` shows: per registered plugin, its name, distribution version and hooks."""
    dists = _dists.get(pm, {})
    rows: list[dict[str, Any]] = []
    for name, plugin in pm.list_name_plugin():
        if plugin is None:
            continue
        hooks = sorted(caller.name for caller in pm.get_hookcallers(plugin) or [])
        version = dists.get(name, (None, None))[1] or (str(__version__) if name.startswith("crib_plugin.") else None)
        rows.append({"name": name, "version": version, "hooks": hooks})
    return rows
