"""The entry-point cache of ``crib_plugin.plugins``: hits skip ``importlib.metadata``, and it stays correct.

Instead of pip-installing a package (``test_plugins.py`` does that once, slowly), each test builds
fake distributions on the fly: a folder with ``<name>-0.1.dist-info/METADATA`` and
``entry_points.txt`` (group ``[crib]``) next to the plugin module, put first on ``sys.path``.
``importlib.metadata`` finds those exactly as it finds installed ones.

``sys.path`` is cut down to that folder plus the interpreter's own folders (stdlib, site-packages):
the repository and ``tests/`` stay importable through modules already loaded, and their mtimes,
which other work in the checkout changes at any moment, stay out of the cache key. The cache lives
in ``tmp_path`` (``CRIB_CACHE_DIR``), and the "racily clean" window is off unless a test turns it on.
"""

from __future__ import annotations

import importlib
import importlib.metadata
import json
import os
import subprocess
import sys
import time
from pathlib import Path
from typing import Any, Callable, Iterator

import pluggy
import pytest

from crib_plugin.plugins import cache as plugins_cache
from crib_plugin.plugins import manager as plugins
from crib_plugin.plugins.manager import Registry, new_plugin_manager, plugin_report

MODULES = ("crib_fakeplug", "crib_otherplug", "crib_brokenplug")

PLUGIN_SOURCE = '''\
from crib_plugin import hookimpl


class _Embedder:
    name = "{name}"


@hookimpl
def register_embedders(register):
    register("{name}-embedder", _Embedder)


class container:  # entry points may name an attribute chain: "module:container.plugin"
    plugin = __import__("sys").modules[__name__]
'''


class Site:
    """A folder on ``sys.path`` holding fake distributions, and the cache file crib uses."""

    def __init__(self, root: Path, cache_dir: Path) -> None:
        self.root = root
        self.cache_file = cache_dir / plugins.CACHE_FILE
        self._ticks = 0

    def add(self, dist: str, module: str, eps: dict[str, str], source: str | None = None) -> Path:
        """Install ``dist`` (one module, the given ``crib`` entry points; ``source``, else a working
        plugin); return its dist-info folder."""
        info = self.root / f"{dist.replace('-', '_')}-0.1.dist-info"
        info.mkdir()
        (info / "METADATA").write_text(f"Metadata-Version: 2.1\nName: {dist}\nVersion: 0.1\n", encoding="utf-8")
        lines = "".join(f"{name} = {value}\n" for name, value in eps.items())
        (info / "entry_points.txt").write_text(f"[crib]\n{lines}", encoding="utf-8")
        (self.root / f"{module}.py").write_text(source if source is not None else PLUGIN_SOURCE.format(name=module), encoding="utf-8")
        self.touch()
        return info

    def touch(self, mtime_ns: int | None = None) -> None:
        """Give the folder a new mtime (or ``mtime_ns``), whatever the file system's granularity.

        Each new mtime is a whole second after the last one, and all of them lie a day in the past:
        a key with a future or just-now mtime is never stored (see ``key_is_racy``).
        """
        self._ticks += 1
        new = mtime_ns if mtime_ns is not None else time.time_ns() - 86_400 * 10**9 + self._ticks * 10**9
        os.utime(self.root, ns=(new, new))
        importlib.invalidate_caches()

    def cached(self) -> list[list[Any]]:
        """The entry points stored for the current key (fails if there is none)."""
        data = json.loads(self.cache_file.read_text(encoding="utf-8"))
        key = plugins.cache_key()
        matches = [e["entry_points"] for e in data["entries"] if e["key"] == key]
        assert matches, "no cache entry for the current key"
        return matches[0]


def _forget_modules() -> None:
    for name in MODULES:
        sys.modules.pop(name, None)


@pytest.fixture
def site(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Iterator[Site]:
    cache_dir = tmp_path / "cache"
    monkeypatch.setenv("CRIB_CACHE_DIR", str(cache_dir))
    root = tmp_path / "site"
    root.mkdir()
    prefixes = tuple({sys.prefix, sys.base_prefix, sys.exec_prefix})
    interpreter = [p for p in sys.path if p and os.path.abspath(p).startswith(prefixes)]
    monkeypatch.setattr(sys, "path", [str(root), *interpreter])
    monkeypatch.setattr(plugins_cache, "_RACY_WINDOW_NS", 0)
    # Importing the fake plugins must not write ``site/__pycache__``: that would change the folder's
    # mtime — the cache key — behind the test's back (it did in CI, where bytecode is written).
    monkeypatch.setattr(sys, "dont_write_bytecode", True)
    _forget_modules()
    importlib.invalidate_caches()
    yield Site(root, cache_dir)
    _forget_modules()
    importlib.invalidate_caches()


@pytest.fixture
def fakeplug(site: Site, monkeypatch: pytest.MonkeyPatch) -> Site:
    """``fakeplug`` installed and selected with ``CRIB_LOAD_PLUGINS`` (tests skip unselected plugins)."""
    site.add("fakeplug", "crib_fakeplug", {"fakeplug": "crib_fakeplug"})
    monkeypatch.setenv("CRIB_LOAD_PLUGINS", "fakeplug")
    return site


def _no_scan(monkeypatch: pytest.MonkeyPatch) -> None:
    """Make any metadata scan fail loudly: only a cache hit can load plugins now."""

    def boom(*args: Any, **kwargs: Any) -> Any:
        raise AssertionError("importlib.metadata was scanned on what should be a cache hit")

    monkeypatch.setattr(importlib.metadata, "entry_points", boom)
    monkeypatch.setattr(importlib.metadata, "distributions", boom)


def _count_scans(monkeypatch: pytest.MonkeyPatch) -> list[int]:
    """Count calls to ``importlib.metadata.entry_points`` (still returning the real answer)."""
    calls: list[int] = []
    real: Callable[..., Any] = importlib.metadata.entry_points

    def counting(*args: Any, **kwargs: Any) -> Any:
        calls.append(1)
        return real(*args, **kwargs)

    monkeypatch.setattr(importlib.metadata, "entry_points", counting)
    return calls


def _version(pm: Any, name: str) -> str | None:
    """The version ``crib plugins`` shows for plugin ``name``."""
    return next(row["version"] for row in plugin_report(pm) if row["name"] == name)


def _embedders(pm: Any) -> set[str]:
    return set(Registry.collect(pm).embedders)


# -- miss, then hit ------------------------------------------------------------------------------


def test_a_miss_scans_registers_and_writes_the_cache(fakeplug: Site, monkeypatch: pytest.MonkeyPatch) -> None:
    scans = _count_scans(monkeypatch)
    assert not fakeplug.cache_file.exists()
    pm = new_plugin_manager()
    assert scans == [1]
    assert pm.get_plugin("fakeplug") is sys.modules["crib_fakeplug"]
    assert "crib_fakeplug-embedder" in _embedders(pm)
    assert fakeplug.cached() == [["fakeplug", "crib_fakeplug", "fakeplug", "0.1"]]  # name, value, distribution, version
    assert _version(pm, "fakeplug") == "0.1"


def test_a_hit_registers_the_same_plugin_without_scanning(fakeplug: Site, monkeypatch: pytest.MonkeyPatch) -> None:
    new_plugin_manager()  # miss: fills the cache
    _forget_modules()  # the hit must import the module itself
    _no_scan(monkeypatch)
    pm = new_plugin_manager()
    assert pm.get_plugin("fakeplug") is sys.modules["crib_fakeplug"]
    assert "crib_fakeplug-embedder" in _embedders(pm)
    assert _version(pm, "fakeplug") == "0.1"  # `crib plugins` still knows the version, from the cache


def test_a_hit_in_a_fresh_process_never_imports_importlib_metadata(fakeplug: Site, tmp_path: Path) -> None:
    script = f"""
import json, os, sys
import crib_plugin.plugins.manager as p
import crib_plugin.plugins.cache as pc
sys.dont_write_bytecode = True
sys.path[:] = {[str(p) for p in sys.path]!r}
pc._RACY_WINDOW_NS = 0
before = "importlib.metadata" in sys.modules
import pluggy
pm = pluggy.PluginManager("crib")
p._load_entrypoints(pm)
print(json.dumps({{"before": before, "loaded": pm.get_plugin("fakeplug") is not None,
                  "metadata": "importlib.metadata" in sys.modules}}))
"""
    (tmp_path / "cache").mkdir()  # so the first run does not change tmp_path's mtime
    env = {k: v for k, v in os.environ.items() if k not in ("PYTHONPATH",)}

    def run() -> dict[str, bool]:
        done = subprocess.run([sys.executable, "-c", script], capture_output=True, text=True, env=env, timeout=60)
        assert done.returncode == 0, done.stderr
        return json.loads(done.stdout)

    first, second = run(), run()
    assert first == {"before": False, "loaded": True, "metadata": True}  # the miss scanned
    assert second == {"before": False, "loaded": True, "metadata": False}  # the hit did not


# -- invalidation --------------------------------------------------------------------------------


def test_installing_a_distribution_invalidates(fakeplug: Site, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("CRIB_LOAD_PLUGINS", "fakeplug,other-dist")
    scans = _count_scans(monkeypatch)
    assert new_plugin_manager().get_plugin("otherplug") is None
    assert new_plugin_manager().get_plugin("fakeplug") is not None
    assert scans == [1], "the second manager should have come from the cache"
    fakeplug.add("other-dist", "crib_otherplug", {"otherplug": "crib_otherplug:container.plugin"})
    pm = new_plugin_manager()
    assert scans == [1, 1], "a new dist-info folder must change the key"
    assert pm.get_plugin("otherplug") is sys.modules["crib_otherplug"]
    assert pm.get_plugin("fakeplug") is sys.modules["crib_fakeplug"]
    assert {ep[0] for ep in fakeplug.cached()} == {"fakeplug", "otherplug"}


def test_a_folder_without_distributions_does_not_key_by_its_mtime(
    fakeplug: Site, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The current folder on ``sys.path`` (``python -m crib_plugin`` in a project) changes all the
    time; only a distribution appearing in it may cost a rescan."""
    project = tmp_path / "project"
    project.mkdir()
    monkeypatch.setattr(sys, "path", [str(project), *sys.path])
    scans = _count_scans(monkeypatch)
    new_plugin_manager()
    (project / "notes.txt").write_text("edited")
    later = time.time_ns() - 3_600 * 10**9
    os.utime(project, ns=(later, later))
    assert new_plugin_manager().get_plugin("fakeplug") is not None
    assert scans == [1], "an edit in a folder without distributions must not force a rescan"
    (project / "late_dist-0.1.dist-info").mkdir()
    os.utime(project, ns=(later + 10**9, later + 10**9))
    new_plugin_manager()
    assert scans == [1, 1], "a distribution appearing there must change the key"


def test_a_stale_entry_whose_module_is_gone_rescans_once(fakeplug: Site, monkeypatch: pytest.MonkeyPatch) -> None:
    info = fakeplug.add("other-dist", "crib_otherplug", {"otherplug": "crib_otherplug"})
    monkeypatch.setenv("CRIB_LOAD_PLUGINS", "fakeplug,otherplug")
    new_plugin_manager()
    mtime = fakeplug.root.stat().st_mtime_ns
    # Removed behind the cache's back: the folder keeps its mtime, so the key still matches.
    (fakeplug.root / "crib_otherplug.py").unlink()
    for f in info.iterdir():
        f.unlink()
    info.rmdir()
    fakeplug.touch(mtime)
    _forget_modules()
    scans = _count_scans(monkeypatch)
    pm = new_plugin_manager()
    assert scans == [1]
    assert pm.get_plugin("otherplug") is None and "crib_otherplug" not in sys.modules
    assert pm.get_plugin("fakeplug") is sys.modules["crib_fakeplug"]
    assert [ep[0] for ep in fakeplug.cached()] == ["fakeplug"]
    # and the rewritten entry is a plain hit again
    _no_scan(monkeypatch)
    assert new_plugin_manager().get_plugin("fakeplug") is not None


def test_a_stale_attribute_rescans_too(fakeplug: Site, monkeypatch: pytest.MonkeyPatch) -> None:
    new_plugin_manager()
    entries = json.loads(fakeplug.cache_file.read_text(encoding="utf-8"))
    entries["entries"][0]["entry_points"][0][1] = "crib_fakeplug:gone"
    fakeplug.cache_file.write_text(json.dumps(entries), encoding="utf-8")
    scans = _count_scans(monkeypatch)
    assert new_plugin_manager().get_plugin("fakeplug") is sys.modules["crib_fakeplug"]
    assert scans == [1]
    assert fakeplug.cached()[0][1] == "crib_fakeplug"


# -- a cache that cannot be used -----------------------------------------------------------------


@pytest.mark.parametrize(
    "content",
    [b"{not json", b"\xff\xfe\x00", b"[]", b'{"format": 999, "entries": []}', b'{"format": 2, "entries": 7}', b""],
    ids=["garbage", "binary", "list", "other-format", "bad-entries", "empty"],
)
def test_a_corrupt_cache_file_falls_back_and_is_rewritten(
    fakeplug: Site, content: bytes, capfd: pytest.CaptureFixture[str]
) -> None:
    fakeplug.cache_file.parent.mkdir(parents=True)
    fakeplug.cache_file.write_bytes(content)
    assert new_plugin_manager().get_plugin("fakeplug") is sys.modules["crib_fakeplug"]
    assert fakeplug.cached()[0][0] == "fakeplug"
    assert capfd.readouterr() == ("", "")


def test_a_malformed_entry_for_this_key_is_a_miss(fakeplug: Site, monkeypatch: pytest.MonkeyPatch) -> None:
    fakeplug.cache_file.parent.mkdir(parents=True)
    bad = {"format": 2, "entries": [{"key": plugins.cache_key(), "entry_points": [["fakeplug"]]}]}
    fakeplug.cache_file.write_text(json.dumps(bad), encoding="utf-8")
    scans = _count_scans(monkeypatch)
    assert new_plugin_manager().get_plugin("fakeplug") is not None
    assert scans == [1]
    assert len(fakeplug.cached()[0]) == 4


@pytest.mark.parametrize("blocker", ["parent-is-a-file", "cache-file-is-a-folder"])
def test_an_unusable_cache_location_is_silently_ignored(
    fakeplug: Site, tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capfd: pytest.CaptureFixture[str], blocker: str
) -> None:
    if blocker == "parent-is-a-file":
        (tmp_path / "a-file").write_text("x")
        monkeypatch.setenv("CRIB_CACHE_DIR", str(tmp_path / "a-file" / "cache"))
    else:
        (tmp_path / "cache" / plugins.CACHE_FILE).mkdir(parents=True)
    scans = _count_scans(monkeypatch)
    for _ in range(2):
        assert new_plugin_manager().get_plugin("fakeplug") is sys.modules["crib_fakeplug"]
    assert scans == [1, 1]  # nothing could be cached, so both scanned
    assert capfd.readouterr() == ("", "")
    assert not list(tmp_path.rglob("*.tmp")), "a failed write left its temporary file behind"


def test_crib_plugin_cache_0_bypasses_the_cache(fakeplug: Site, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("CRIB_PLUGIN_CACHE", "0")
    scans = _count_scans(monkeypatch)
    assert new_plugin_manager().get_plugin("fakeplug") is not None
    assert not fakeplug.cache_file.exists(), "nothing is written with the cache off"
    monkeypatch.delenv("CRIB_PLUGIN_CACHE")
    new_plugin_manager()  # fills the cache
    monkeypatch.setenv("CRIB_PLUGIN_CACHE", "0")
    assert new_plugin_manager().get_plugin("fakeplug") is not None
    assert scans == [1, 1, 1], "a valid cache must not be read with the cache off"


def test_a_recent_mtime_is_not_cached(fakeplug: Site, monkeypatch: pytest.MonkeyPatch) -> None:
    """Racily clean: a second install within the file system's timestamp tick would go unseen."""
    monkeypatch.setattr(plugins_cache, "_RACY_WINDOW_NS", 10**18)
    assert new_plugin_manager().get_plugin("fakeplug") is not None
    assert not fakeplug.cache_file.exists()


# -- the selection rules hold on a hit -----------------------------------------------------------


def test_a_hit_honours_crib_load_plugins(site: Site, monkeypatch: pytest.MonkeyPatch) -> None:
    site.add("fakeplug", "crib_fakeplug", {"fakeplug": "crib_fakeplug"})
    site.add("other-dist", "crib_otherplug", {"otherplug": "crib_otherplug:container.plugin"})
    monkeypatch.setenv("CRIB_LOAD_PLUGINS", "fakeplug,otherplug")
    new_plugin_manager()  # miss: the cache holds the whole group whatever the selection
    _forget_modules()
    _no_scan(monkeypatch)
    monkeypatch.setenv("CRIB_LOAD_PLUGINS", "other-dist")  # by distribution name
    pm = new_plugin_manager()
    assert pm.get_plugin("fakeplug") is None and "crib_fakeplug" not in sys.modules
    assert pm.get_plugin("otherplug") is sys.modules["crib_otherplug"]  # "module:attr.chain" resolved
    monkeypatch.setenv("CRIB_LOAD_PLUGINS", " fakeplug , ")  # by entry-point name
    pm = new_plugin_manager()
    assert pm.get_plugin("fakeplug") is not None and pm.get_plugin("otherplug") is None
    monkeypatch.setenv("CRIB_LOAD_PLUGINS", "")
    pm = new_plugin_manager()
    assert pm.get_plugin("fakeplug") is None and pm.get_plugin("otherplug") is None


def test_tests_skip_plugins_unless_selected_and_load_all_otherwise(
    fakeplug: Site, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.delenv("CRIB_LOAD_PLUGINS")
    assert new_plugin_manager().get_plugin("fakeplug") is None  # sys._called_from_test
    assert not fakeplug.cache_file.exists(), "no plugins wanted: neither scan nor cache"
    monkeypatch.delattr(sys, "_called_from_test")  # what a real `crib` process sees
    assert new_plugin_manager().get_plugin("fakeplug") is not None
    _no_scan(monkeypatch)
    assert new_plugin_manager().get_plugin("fakeplug") is not None


def test_a_hit_skips_names_already_registered_or_blocked(fakeplug: Site, monkeypatch: pytest.MonkeyPatch) -> None:
    new_plugin_manager()
    _forget_modules()
    _no_scan(monkeypatch)
    blocked = pluggy.PluginManager("crib")
    blocked.set_blocked("fakeplug")
    plugins._load_entrypoints(blocked)
    assert blocked.get_plugin("fakeplug") is None and "crib_fakeplug" not in sys.modules
    taken = pluggy.PluginManager("crib")
    mine = object()
    taken.register(mine, name="fakeplug")
    plugins._load_entrypoints(taken)
    assert taken.get_plugin("fakeplug") is mine


def test_the_cache_keeps_one_entry_per_key(fakeplug: Site, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """Two setups (say two virtualenvs) sharing the cache folder do not evict each other."""
    other = tmp_path / "elsewhere"
    other.mkdir()
    new_plugin_manager()
    monkeypatch.setattr(sys, "path", [*sys.path, str(other)])
    new_plugin_manager()
    monkeypatch.setattr(sys, "path", sys.path[:-1])
    _no_scan(monkeypatch)
    assert new_plugin_manager().get_plugin("fakeplug") is not None
    data = json.loads(fakeplug.cache_file.read_text(encoding="utf-8"))
    assert len(data["entries"]) == 2


def test_cache_dir_from_environment(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
    monkeypatch.setenv("CRIB_CACHE_DIR", str(tmp_path / "c"))
    assert plugins.plugin_cache_dir() == str(tmp_path / "c")
    monkeypatch.delenv("CRIB_CACHE_DIR")
    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path / "xdg"))
    assert plugins.plugin_cache_dir() == str(tmp_path / "xdg" / "crib")
    monkeypatch.delenv("XDG_CACHE_HOME")
    monkeypatch.setenv("HOME", str(tmp_path / "home"))
    assert plugins.plugin_cache_dir() == str(tmp_path / "home" / ".cache" / "crib")


# -- a plugin that fails to import ---------------------------------------------------------------

BROKEN = "import crib_no_such_dependency  # the plugin's own missing dependency\n"


def _broken(site: Site, monkeypatch: pytest.MonkeyPatch) -> None:
    site.add("fakeplug", "crib_fakeplug", {"fakeplug": "crib_fakeplug"})
    site.add("brokenplug", "crib_brokenplug", {"brokenplug": "crib_brokenplug"}, source=BROKEN)
    monkeypatch.setenv("CRIB_LOAD_PLUGINS", "fakeplug,brokenplug")


ONE_LINE = "crib: plugin 'brokenplug' failed to load: ModuleNotFoundError: No module named 'crib_no_such_dependency'\n"


def test_a_plugin_that_fails_to_import_is_one_line_and_the_others_load(
    site: Site, monkeypatch: pytest.MonkeyPatch, capfd: pytest.CaptureFixture[str]
) -> None:
    _broken(site, monkeypatch)
    pm = new_plugin_manager()  # miss: the full scan
    assert pm.get_plugin("fakeplug") is sys.modules["crib_fakeplug"] and pm.get_plugin("brokenplug") is None
    assert capfd.readouterr().err == ONE_LINE
    # a hit: the broken plugin is still skipped with its line, and is no reason to scan again
    _forget_modules()
    _no_scan(monkeypatch)
    pm = new_plugin_manager()
    assert pm.get_plugin("fakeplug") is sys.modules["crib_fakeplug"] and pm.get_plugin("brokenplug") is None
    assert capfd.readouterr().err == ONE_LINE


def test_a_plugin_raising_on_import_leaves_every_crib_command_working(site: Site, monkeypatch: pytest.MonkeyPatch) -> None:
    """The reported defect, end to end: a fresh ``crib`` with a broken plugin installed."""
    site.add("brokenplug", "crib_brokenplug", {"brokenplug": "crib_brokenplug"}, source="raise RuntimeError('boom\\nsecond line')\n")
    env = {k: v for k, v in os.environ.items() if k != "PYTHONPATH"}
    env.update({"PYTHONPATH": str(site.root), "CRIB_LOAD_PLUGINS": "brokenplug"})
    for args in (["write", "Chose SQLite for storage."], ["list"]):
        done = subprocess.run([sys.executable, "-m", "crib_plugin", *args], capture_output=True, text=True, env=env, timeout=120)
        assert done.returncode == 0, done.stderr
        assert done.stderr == "crib: plugin 'brokenplug' failed to load: RuntimeError: boom\n", done.stderr
    assert "Chose SQLite for storage." in done.stdout
