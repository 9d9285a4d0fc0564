"""Entry-point cache. Finding entry points means importing ``importlib.metadata`` (~25 ms: email,
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

import json
import os
import sys
import time
from typing import Any

from .. import __version__
from ..core.config import cache_dir, get_settings

ENTRY_POINT_GROUP = "crib"
CACHE_FILE = "entry-points.json"
#: Bumped whenever the layout of the cache file changes; other formats are treated as a miss.
_CACHE_FORMAT = 2
#: Cache entries kept per file: one per distinct key (two virtualenvs, or ``python -m crib_plugin``
#: from several folders, would otherwise keep evicting each other).
_MAX_CACHE_ENTRIES = 8
#: A key whose newest mtime is this close to "now" is not stored: on file systems with coarse
#: timestamps a second install in the same tick would leave the mtime unchanged (git's "racily
#: clean" problem). The next process, a moment later, stores it.
_RACY_WINDOW_NS = 2_000_000_000

#: One cached entry point: (entry-point name, "module:attr" or "module", distribution name, its
#: version). The last two may be None.
CachedEntryPoint = tuple[str, str, str | None, str | None]


def plugin_cache_dir() -> str:
    """Where the entry-point cache lives: :func:`crib_plugin.core.config.cache_dir`."""
    return str(cache_dir())


def cache_enabled() -> bool:
    """False when ``CRIB_PLUGIN_CACHE`` is ``0`` (or ``false``/``no``/``off``)."""
    return get_settings().plugin_cache


def _cache_path() -> str:
    return os.path.join(plugin_cache_dir(), CACHE_FILE)


def cache_key() -> dict[str, Any]:
    """What the cached entry points depend on: interpreter, crib version, ``sys.path`` and mtimes.

    A missing entry, or a folder without distribution metadata, is kept with a null mtime (see
    :func:`_metadata_mtime`), so adding a distribution there later changes the key too. Relative
    entries ("" is the current folder) are made absolute, so the same command run from two folders
    gets two keys.
    """
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


def cache_lookup(key: dict[str, Any]) -> list[CachedEntryPoint] | None:
    """The cached entry points for ``key``, or None on a miss (or any trouble reading)."""
    try:
        for entry in _read_entries(_cache_path()):
            if entry.get("key") == key:
                return _parse_cached(entry.get("entry_points"))
    except Exception:
        pass
    return None


def cache_write(key: dict[str, Any], eps: list[CachedEntryPoint] | None) -> None:
    """Store ``eps`` under ``key`` (None: drop ``key``), atomically; errors are ignored.

    The newest entry goes first and at most ``_MAX_CACHE_ENTRIES`` are kept. Two processes writing
    at once each replace the whole file, so one entry may be lost: the next run just scans again.
    """
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


def key_is_racy(key: dict[str, Any]) -> bool:
    """True if some ``sys.path`` mtime is too recent to trust (see ``_RACY_WINDOW_NS``)."""
    newest = max((m for _, m in key["path"] if m is not None), default=0)
    return time.time_ns() - newest < _RACY_WINDOW_NS


# -- loading ------------------------------------------------------------------------------------


def scan_entry_points() -> list[CachedEntryPoint]:
    """The ``crib`` group from the installed distributions' metadata (the slow, uncached way)."""
    # deferred: the SessionStart hook would import importlib.metadata up front (90 ms)
    from importlib.metadata import entry_points as installed

    found: list[CachedEntryPoint] = []
    for ep in installed(group=ENTRY_POINT_GROUP):
        dist = ep.dist
        found.append((ep.name, ep.value, dist.name if dist else None, dist.version if dist else None))
    return found


def entry_points(*, rescan: bool = False) -> list[CachedEntryPoint]:
    """The ``crib`` group: from the cache when its key matches (and not ``rescan``), else scanned
    and cached (unless the key is racy, or ``CRIB_PLUGIN_CACHE=0``)."""
    key: dict[str, Any] | None = None
    if cache_enabled():
        try:
            key = cache_key()
        except Exception:  # an odd sys.path entry: scan, as without a cache
            key = None
    if key is not None and not rescan:
        cached = cache_lookup(key)
        if cached is not None:
            return cached
    found = scan_entry_points()
    if key is not None and not key_is_racy(key):
        cache_write(key, found)
    return found
