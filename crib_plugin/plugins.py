"""The plugin manager: built-in plugins listed in one place, third-party ones via entry points.

Third-party plugins are packages declaring an entry point in the ``crib`` group. They are loaded
unless ``CRIB_LOAD_PLUGINS`` says otherwise (a comma list of entry-point or distribution names to
load, or an empty string for none), or the test suite set ``sys._called_from_test`` — the same switch
simonw/llm uses so tests never see plugins that happen to be installed.

Entry-point cache. Finding entry points means importing ``importlib.metadata`` (~25 ms: email,
zipfile, csv…) and reading the metadata of every installed distribution (~20-30 ms more), and
``crib retrieve`` runs in a fresh process on every prompt. So the ``crib`` group is cached in
``entry-points.json`` in the user cache directory (``$CRIB_CACHE_DIR``, else
``$XDG_CACHE_HOME/crib``, else ``~/.cache/crib``). The cache key is the interpreter
(``sys.version``, ``sys.executable``), crib's version and every ``sys.path`` entry with its
``st_mtime_ns``: installing, upgrading or removing a distribution creates or removes a
``*.dist-info`` folder in a ``sys.path`` directory, which changes that directory's mtime (editable
installs add their ``.pth`` and dist-info there too; a zip on ``sys.path`` counts by its own mtime).
On a hit the entry points are imported directly (``importlib.import_module`` plus ``getattr``),
without ``importlib.metadata``; if one of them no longer imports (a package removed without an
mtime change) the cache entry is dropped and the full scan runs once. A cache that cannot be read or
written (read-only home, corrupt file, permissions) is ignored silently. ``CRIB_PLUGIN_CACHE=0``
turns the cache off (every process scans, nothing is read or written).

Known blind spots of an mtime key, all needing a by-hand edit: an ``entry_points.txt`` rewritten in
place inside an existing dist-info folder, and distributions served by custom ``sys.meta_path``
finders rather than ``sys.path`` folders. ``CRIB_PLUGIN_CACHE=0`` (or deleting the file) covers them.
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
    "crib_plugin.builtin_commands",
)

_pm: pluggy.PluginManager | None = None

ENTRY_POINT_GROUP = "crib"
CACHE_FILE = "entry-points.json"
#: Bumped whenever the layout of the cache file changes; other formats are treated as a miss.
_CACHE_FORMAT = 1
#: Cache entries kept per file: one per distinct key (two virtualenvs, or ``python -m crib_plugin``
#: from several folders, would otherwise keep evicting each other).
_MAX_CACHE_ENTRIES = 8
#: A key whose newest mtime is this close to "now" is not stored: on file systems with coarse
#: timestamps a second install in the same tick would leave the mtime unchanged (git's "racily
#: clean" problem). The next process, a moment later, stores it.
_RACY_WINDOW_NS = 2_000_000_000

#: One cached entry point: (entry-point name, "module:attr" or "module", distribution name,
#: path of the distribution's metadata folder). The last two may be None.
CachedEntryPoint = tuple[str, str, str | None, str | None]


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
    import importlib.metadata

    dist: Any = None
    try:
        if dist_path and os.path.isdir(dist_path):
            from pathlib import Path

            dist = importlib.metadata.PathDistribution(Path(dist_path))
        elif dist_name:
            dist = importlib.metadata.distribution(dist_name)
    except Exception:  # pragma: no cover - metadata gone since the plugin was imported
        return None
    if dist is None:
        return None
    try:
        from pluggy._manager import DistFacade
    except ImportError:  # pragma: no cover - pluggy moved its private class
        return dist
    return DistFacade(dist)


# -- the cache ----------------------------------------------------------------------------------


def plugin_cache_dir() -> str:
    """Where the entry-point cache lives: :func:`crib_plugin.config.cache_dir`."""
    from .config import cache_dir

    return str(cache_dir())


def _cache_enabled() -> bool:
    """False when ``CRIB_PLUGIN_CACHE`` is ``0`` (or ``false``/``no``/``off``)."""
    from .config import get_settings

    return get_settings().plugin_cache


def _cache_path() -> str:
    return os.path.join(plugin_cache_dir(), CACHE_FILE)


def _cache_key() -> dict[str, Any]:
    """What the cached entry points depend on: interpreter, crib version, ``sys.path`` and mtimes.

    A missing entry, or a folder without distribution metadata, is kept with a null mtime (see
    :func:`_metadata_mtime`), so adding a distribution there later changes the key too. Relative
    entries ("" is the current folder) are made absolute, so the same command run from two folders
    gets two keys.
    """
    from . import __version__

    paths: list[list[Any]] = []
    for entry in sys.path:
        if not isinstance(entry, str):
            entry = os.fspath(entry) if isinstance(entry, os.PathLike) else str(entry)
        path = os.path.abspath(entry)
        paths.append([path, _metadata_mtime(path)])
    return {
        "python": sys.version,
        "executable": sys.executable,
        "crib": __version__,
        "group": ENTRY_POINT_GROUP,
        "path": paths,
    }


def _metadata_mtime(path: str) -> int | None:
    """The mtime that matters for entry points found under a ``sys.path`` entry.

    A folder counts by its mtime only while it holds distribution metadata (``*.dist-info``,
    ``*.egg-info``): ``sys.path[0]`` is often the current folder (``python -m crib_plugin``, as the
    hooks may run it), whose mtime moves with every file the user touches — keying on it would
    make nearly every prompt rescan. A folder that gains metadata gains its mtime, so the key
    still changes then. A zip counts by its mtime; a missing entry is None.
    """
    try:
        mtime = os.stat(path).st_mtime_ns
        if not os.path.isdir(path):
            return mtime
        with os.scandir(path) as listing:
            if any(item.name.endswith((".dist-info", ".egg-info")) for item in listing):
                return mtime
    except (OSError, ValueError):
        return None
    return None


def _read_entries(path: str) -> list[dict[str, Any]]:
    """The entries of the cache file; [] when it is missing, unreadable or not ours."""
    import json

    try:
        with open(path, encoding="utf-8") as fh:
            data = json.load(fh)
    except Exception:
        return []
    if not isinstance(data, dict) or data.get("format") != _CACHE_FORMAT:
        return []
    entries = data.get("entries")
    if not isinstance(entries, list):
        return []
    return [e for e in entries if isinstance(e, dict) and "key" in e]


def _parse_cached(raw: Any) -> list[CachedEntryPoint] | None:
    """The entry points of one cache entry, or None if any of them is malformed."""
    if not isinstance(raw, list):
        return None
    out: list[CachedEntryPoint] = []
    for item in raw:
        if not (isinstance(item, list) and len(item) == 4):
            return None
        name, value, dist_name, dist_path = item
        if not (isinstance(name, str) and isinstance(value, str) and value.strip()):
            return None
        if not all(v is None or isinstance(v, str) for v in (dist_name, dist_path)):
            return None
        out.append((name, value, dist_name, dist_path))
    return out


def _cache_lookup(key: dict[str, Any]) -> list[CachedEntryPoint] | None:
    """The cached entry points for ``key``, or None on a miss (or any trouble reading)."""
    try:
        for entry in _read_entries(_cache_path()):
            if entry.get("key") == key:
                return _parse_cached(entry.get("entry_points"))
    except Exception:
        pass
    return None


def _cache_write(key: dict[str, Any], eps: list[CachedEntryPoint] | None) -> None:
    """Store ``eps`` under ``key`` (None: drop ``key``), atomically; errors are ignored.

    The newest entry goes first and at most ``_MAX_CACHE_ENTRIES`` are kept. Two processes writing
    at once each replace the whole file, so one entry may be lost: the next run just scans again.
    """
    import json

    tmp: str | None = None
    try:
        path = _cache_path()
        entries = [e for e in _read_entries(path) if e.get("key") != key]
        if eps is not None:
            entries.insert(0, {"key": key, "entry_points": [list(ep) for ep in eps]})
        data = {"format": _CACHE_FORMAT, "entries": entries[:_MAX_CACHE_ENTRIES]}
        os.makedirs(os.path.dirname(path), exist_ok=True)
        tmp = f"{path}.{os.getpid()}.tmp"
        with open(tmp, "w", encoding="utf-8") as fh:
            json.dump(data, fh, separators=(",", ":"))
        os.replace(tmp, path)
        tmp = None
    except Exception:
        pass
    finally:
        if tmp is not None:
            try:
                os.unlink(tmp)
            except OSError:
                pass


def _key_is_racy(key: dict[str, Any]) -> bool:
    """True if some ``sys.path`` mtime is too recent to trust (see ``_RACY_WINDOW_NS``)."""
    import time

    newest = max((m for _, m in key["path"] if m is not None), default=0)
    return time.time_ns() - newest < _RACY_WINDOW_NS


# -- loading ------------------------------------------------------------------------------------


def _scan_entry_points() -> tuple[list[CachedEntryPoint], list[Any]]:
    """The ``crib`` group from the installed distributions' metadata (the slow, uncached way).

    Returns the cacheable tuples and, in the same order, the ``EntryPoint`` objects.
    """
    from importlib.metadata import entry_points

    found = list(entry_points(group=ENTRY_POINT_GROUP))
    cached: list[CachedEntryPoint] = []
    for ep in found:
        dist = getattr(ep, "dist", None)
        dist_path = getattr(dist, "_path", None)
        cached.append(
            (
                ep.name,
                ep.value,
                getattr(dist, "name", None) if dist is not None else None,
                os.fspath(dist_path) if dist_path is not None else None,
            )
        )
    return cached, found


def _wanted(name: str, dist_name: str | None, names: set[str] | None) -> bool:
    """Whether ``CRIB_LOAD_PLUGINS`` (``names``; None: everything) selects this entry point."""
    return names is None or name in names or (dist_name is not None and dist_name in names)


def _resolve(value: str) -> Any:
    """Import what an entry-point value names ("module" or "module:attr.sub"), as ``EntryPoint.load``."""
    spec = value.split("[", 1)[0]  # old-style "[extras]" suffix: ignored, as importlib.metadata does
    module_name, _, attrs = spec.partition(":")
    obj: Any = importlib.import_module(module_name.strip())
    for attr in attrs.strip().split("."):
        if attr:
            obj = getattr(obj, attr)
    return obj


def _register_from_cache(pm: pluggy.PluginManager, eps: list[CachedEntryPoint], names: set[str] | None) -> bool:
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


def _register_from_scan(pm: pluggy.PluginManager, found: list[Any], names: set[str] | None) -> None:
    """Register the selected ``EntryPoint`` objects of a full scan (import errors propagate)."""
    facade: Any = None
    try:
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


def _load_entrypoints(pm: pluggy.PluginManager) -> None:
    """Register the third-party plugins ``CRIB_LOAD_PLUGINS`` selects, from the cache when it is valid."""
    from .config import get_settings

    wanted = get_settings().load_plugins
    if hasattr(sys, "_called_from_test") and wanted is None:
        return
    names: set[str] | None = None
    if wanted is not None:
        names = set(wanted)
        if not names:
            return
    use_cache = _cache_enabled()
    key: dict[str, Any] | None = None
    if use_cache:
        try:
            key = _cache_key()
        except Exception:
            key = None
    if key is not None:
        cached = _cache_lookup(key)
        if cached is not None:
            if _register_from_cache(pm, cached, names):
                return
            _cache_write(key, None)  # stale: forget it, then scan once
    cached_eps, found = _scan_entry_points()
    if key is not None and not _key_is_racy(key):
        _cache_write(key, cached_eps)
    _register_from_scan(pm, found, names)


def new_plugin_manager(*, load_entrypoints: bool = True) -> pluggy.PluginManager:
    """A fresh manager with the hookspecs, built-ins and (optionally) installed plugins."""
    pm = CribPluginManager("crib")
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

        def add_type(entry_type: Any) -> None:
            from .entry_types import EntryType

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
    from . import __version__

    return str(__version__)
