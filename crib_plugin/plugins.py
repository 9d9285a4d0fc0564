"""The plugin manager: built-in plugins listed in one place, third-party ones via entry points.

Third-party plugins are packages declaring an entry point in the ``crib`` group. They are loaded
unless ``CRIB_LOAD_PLUGINS`` says otherwise (a comma list of distribution names to load, or an
empty string for none), or the test suite set ``sys._called_from_test`` — the same switch simonw/llm
uses so tests never see plugins that happen to be installed.
"""

from __future__ import annotations

import importlib
import os
import sys
import weakref
from dataclasses import dataclass, field
from typing import Any, Callable

import pluggy

from . import hookspecs
from .errors import ConfigError

DEFAULT_PLUGINS: tuple[str, ...] = (
    "crib_plugin.channels.fulltext",
    "crib_plugin.channels.vectors",
    "crib_plugin.channels.facts",
    "crib_plugin.models.builtin",
    "crib_plugin.builtin_hooks",
)

_pm: pluggy.PluginManager | None = None


def _load_entrypoints(pm: pluggy.PluginManager) -> None:
    wanted = os.environ.get("CRIB_LOAD_PLUGINS")
    if hasattr(sys, "_called_from_test") and wanted is None:
        return
    if wanted is None:
        pm.load_setuptools_entrypoints("crib")
        return
    names = {n.strip() for n in wanted.split(",") if n.strip()}
    if not names:
        return
    from importlib.metadata import entry_points

    for ep in entry_points(group="crib"):
        dist = getattr(ep, "dist", None)
        if ep.name in names or (dist is not None and dist.name in names):
            if pm.get_plugin(ep.name) is None:
                pm.register(ep.load(), name=ep.name)


def new_plugin_manager(*, load_entrypoints: bool = True) -> pluggy.PluginManager:
    """A fresh manager with the hookspecs, built-ins and (optionally) installed plugins."""
    pm = pluggy.PluginManager("crib")
    pm.add_hookspecs(hookspecs)
    if load_entrypoints:
        _load_entrypoints(pm)
    for name in DEFAULT_PLUGINS:
        module = importlib.import_module(name)
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
        return reg

    def make(self, kind: str, name: str) -> Any:
        """Instantiate the ``kind`` ("embedders", …) registered as ``name``; ConfigError if unknown."""
        table: dict[str, Callable[[], Any]] = getattr(self, kind)
        factory = table.get(name.lower())
        if factory is None:
            known = ", ".join(sorted(table)) or "none"
            raise ConfigError(f"unknown {kind[:-1]} {name!r} (registered: {known})")
        return factory()


_registries: "weakref.WeakKeyDictionary[pluggy.PluginManager, Registry]" = weakref.WeakKeyDictionary()


def registry(pm: pluggy.PluginManager | None = None) -> Registry:
    """The registry of a plugin manager, collected once per manager (forgotten with it)."""
    pm = pm or get_plugin_manager()
    if pm not in _registries:
        _registries[pm] = Registry.collect(pm)
    return _registries[pm]
