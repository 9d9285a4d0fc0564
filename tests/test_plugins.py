"""Plugins: a real third-party package found through the ``crib`` entry point, and hook semantics.

The package test installs ``tests/plugins/crib_example_plugin`` with pip into a private target
directory (``pip install --target``) and puts that directory on ``PYTHONPATH`` of fresh ``crib``
processes. That is a real install — a built wheel, a ``.dist-info`` with ``entry_points.txt`` found
by ``importlib.metadata`` — without touching the interpreter's site-packages, which other test runs
on the same machine share (an installed plugin that replaces ``minilm`` would break them).

The in-process tests use a fresh ``new_plugin_manager(load_entrypoints=False)`` and plugin objects.
"""

from __future__ import annotations

import json
import shutil
import subprocess
import sys
from pathlib import Path
from typing import Any

import apsw
import pytest
from fake_embedder import FakeEmbedder

from crib_plugin import Memory, ResponseStream, Session, hookimpl
from crib_plugin.plugins.manager import Registry, new_plugin_manager

# one worker runs the whole module under -n (pyproject: --dist loadgroup): its module fixture pip-installs the example plugin (~9 s)
pytestmark = pytest.mark.xdist_group("test_plugins")

PLUGIN_SRC = Path(__file__).resolve().parent / "plugins" / "crib_example_plugin"


# -- a real package, installed with pip ----------------------------------------------------------


def _pip(*args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-m", "pip", "--disable-pip-version-check", *args],
        capture_output=True,
        text=True,
        timeout=600,
    )


@pytest.fixture
def crib(crib_cold: Any) -> Any:
    """Installed plugins are found through entry points on a fresh interpreter's sys.path: cold."""
    return crib_cold


@pytest.fixture(scope="module")
def plugin_site(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """A directory holding the installed example plugin (wheel built by pip, entry points and all).

    Offline first (``--no-build-isolation`` uses the build backend already installed); when that
    backend is missing or too old to build wheels, pip builds in an isolated environment with
    setuptools from the package index.
    """
    if _pip("--version").returncode != 0:
        pytest.skip("pip is not available in this interpreter, so no package can be installed")
    work = tmp_path_factory.mktemp("example-plugin")
    source = work / "src"
    shutil.copytree(PLUGIN_SRC, source)  # builds write into the source tree; keep the repo clean
    target = work / "site"
    base = ["install", "--no-deps", "--no-compile", "--target", str(target), str(source)]
    attempts = [_pip(*base[:1], "--no-build-isolation", "--no-index", *base[1:]), None]
    if attempts[0].returncode != 0:
        shutil.rmtree(target, ignore_errors=True)
        attempts[1] = _pip(*base)
    last = attempts[1] or attempts[0]
    assert last.returncode == 0, "pip could not install the example plugin:\n" + "\n".join(
        (a.stdout + a.stderr)[-2000:] for a in attempts if a is not None
    )
    assert list(target.glob("crib_example_plugin-*.dist-info/entry_points.txt")), "no entry points installed"
    return target


def _env(site: Path, **extra: str) -> dict[str, str]:
    import os

    path = os.pathsep.join(p for p in (str(site), os.environ.get("PYTHONPATH", "")) if p)
    return {"PYTHONPATH": path, **extra}


def _vector_keys(db: Path) -> set[str]:
    conn = apsw.Connection(str(db))
    try:
        return {row[0] for row in conn.execute("SELECT key FROM vector_spaces")}
    finally:
        conn.close()


def _search(crib: Any, query: str, env: dict[str, str]) -> list[dict[str, Any]]:
    result = crib("search", query, "--json", env=env)
    assert result.returncode == 0, result.stderr
    return [json.loads(line) for line in result.stdout.splitlines()]


def test_installed_plugin_adds_a_channel(crib: Any, plugin_site: Path) -> None:
    env = _env(plugin_site)  # CRIB_LOAD_PLUGINS is unset (clean_env): entry points load
    for text in (
        "Invoices are generated nightly by the #billing job.",
        "The #frontend uses React with Vite.",
        "Refunds go through the payments team.",
    ):
        assert crib("write", input=text, env=env).returncode == 0
    hits = _search(crib, "what runs under #billing?", {**env, "CRIB_CHANNEL": "keyword-tag"})
    assert [h["content"] for h in hits] == ["Invoices are generated nightly by the #billing job."]
    assert hits[0]["channels"] == ["keyword-tag"]
    # and the fused default retrieval includes the plugin's channel alongside the built-ins
    out = crib("retrieve", input="notes tagged #frontend", env=env).stdout
    assert "The #frontend uses React with Vite." in out and "keyword-tag" in out


def test_installed_plugin_replaces_the_embedder(crib: Any, plugin_site: Path, db: Path) -> None:
    env = _env(plugin_site)
    assert crib("write", input="type=decision Chose SQLite for storage.", env=env).returncode == 0
    assert _vector_keys(db) == {"minilm:toy-hash:64"}, "the plugin's embedder did not make the vectors"
    hits = _search(crib, "SQLite storage", {**env, "CRIB_CHANNEL": "vector"})
    assert hits and hits[0]["content"] == "Chose SQLite for storage." and hits[0]["channels"] == ["vector"]


def test_crib_load_plugins_empty_disables_the_installed_plugin(crib: Any, plugin_site: Path, db: Path) -> None:
    env = _env(plugin_site, CRIB_LOAD_PLUGINS="")
    assert crib("write", input="Chose SQLite for storage.", env=env).returncode == 0
    assert _vector_keys(db) == {"minilm:all-MiniLM-L6-v2:384"}
    result = crib("search", "#billing", "--json", env={**env, "CRIB_CHANNEL": "keyword-tag"})
    assert result.returncode != 0 and "unknown channel keyword-tag" in result.stderr


def test_crib_load_plugins_names_the_distribution(crib: Any, plugin_site: Path, db: Path) -> None:
    env = _env(plugin_site, CRIB_LOAD_PLUGINS="crib-example-plugin")
    assert crib("write", input="Chose SQLite for storage.", env=env).returncode == 0
    assert _vector_keys(db) == {"minilm:toy-hash:64"}


# -- hook semantics, in process ------------------------------------------------------------------


class UserPlugin:
    """A plugin object overriding a built-in channel and embedder, and implementing the three hooks."""

    def __init__(self) -> None:
        self.stored: list[str] = []

    @hookimpl
    def register_embedders(self, register: Any) -> None:
        register("minilm", FakeEmbedder)

    @hookimpl
    def register_channels(self, register: Any) -> None:
        class Fts:
            name = "fts"

        register(Fts())

    @hookimpl
    def on_prompt(self, prompt: str, session: Session) -> str | None:
        return f"user plugin saw: {prompt}"

    @hookimpl
    def on_store(self, text: str, type: str, metadata: dict[str, Any], memory: Memory) -> int | None:
        if metadata.get("route") == "plugin":
            self.stored.append(text)
            return -1
        return None  # not mine: let the next implementation (crib's) store it

    @hookimpl
    def on_response(self, chunk: str, stream: ResponseStream) -> str | None:
        # A careless plugin that leaks a memory block into what it returns, split across chunks.
        return {"a": "Hello <memory-con", "b": "text context_time=\"t\">secret</memory-context> world"}.get(chunk)


@pytest.fixture
def pm() -> Any:
    manager = new_plugin_manager(load_entrypoints=False)
    manager.register(UserPlugin(), name="user-plugin")
    return manager


def test_user_plugin_overrides_trylast_builtins(pm: Any) -> None:
    reg = Registry.collect(pm)
    assert isinstance(reg.make("embedders", "minilm"), FakeEmbedder)
    assert type(reg.channels["fts"]).__name__ == "Fts"
    assert {"vector", "facts"} <= set(reg.channels)  # the other built-ins are still there
    # Without the user plugin the built-ins serve those names.
    plain = Registry.collect(new_plugin_manager(load_entrypoints=False))
    assert type(plain.channels["fts"]).__name__ == "FullTextChannel"


def test_on_prompt_collects_every_implementation(db: Path) -> None:
    manager = new_plugin_manager(load_entrypoints=False)
    manager.register(_Echo(), name="echo")
    with Memory(db, pm=manager) as memory:
        memory.write("type=decision Chose SQLite for storage.")
        session = Session(memory, id="s1")
        results = manager.hook.on_prompt(prompt="which storage did we choose?", session=session)
    assert results[0] == "echo: which storage did we choose?"  # user plugins first, built-in last
    assert len(results) == 2 and "<memory-context" in results[1] and "Chose SQLite" in results[1]
    assert session.injected, "the built-in records what it injected"


class _Echo:
    @hookimpl
    def on_prompt(self, prompt: str, session: Session) -> str:
        return f"echo: {prompt}"


def test_on_store_is_firstresult(pm: Any, db: Path) -> None:
    plugin = pm.get_plugin("user-plugin")
    with Memory(db, pm=pm) as memory:
        taken = pm.hook.on_store(text="routed elsewhere", type="note", metadata={"route": "plugin"}, memory=memory, created_at=None)
        assert taken == -1 and plugin.stored == ["routed elsewhere"]
        assert list(memory.export()) == []  # crib's implementation never ran
        entry_id = pm.hook.on_store(
            text='Kept <memory-context context_time="t">recalled</memory-context> in crib.', type="note", metadata={}, memory=memory,
            created_at="2026-01-02T03:04:05Z",
        )
        assert isinstance(entry_id, int) and entry_id > 0
        assert memory.entry(entry_id).content == "Kept in crib."  # injected blocks stripped first
        assert memory.entry(entry_id).created_at == "2026-01-02T03:04:05Z"


def test_on_response_wrapper_scrubs_what_another_impl_returned(pm: Any) -> None:
    stream = ResponseStream(id="r1")
    seen = [pm.hook.on_response(chunk="a", stream=stream)]
    seen.append(pm.hook.on_response(chunk="b", stream=stream))
    stream.final = True
    seen.append(pm.hook.on_response(chunk="!", stream=stream))
    text = "".join(seen)
    assert "secret" not in text and "memory" not in text
    assert text.replace("  ", " ") == "Hello world!"


def test_on_response_passes_plain_chunks_through_the_scrubber() -> None:
    manager = new_plugin_manager(load_entrypoints=False)
    stream = ResponseStream()
    chunks = ["plain <memory", '-context context_time="t">x</memory-context', "> text"]
    out = [manager.hook.on_response(chunk=c, stream=stream) for c in chunks]
    stream.final = True
    out.append(manager.hook.on_response(chunk="", stream=stream))
    assert "".join(out) == "plain  text"


class BrokenChannel:
    """A plugin channel whose search always raises."""

    name = "broken"

    def search(self, memory: Any, query: Any, limit: int) -> Any:
        raise RuntimeError("plugin bug")


class BrokenPlugin:
    """Registers :class:`BrokenChannel`."""

    @hookimpl
    def register_channels(self, register: Any) -> None:
        register(BrokenChannel())


def test_a_broken_plugin_channel_does_not_break_retrieval(db: Path) -> None:
    manager = new_plugin_manager(load_entrypoints=False)
    manager.register(BrokenPlugin(), name="broken")
    with Memory(db, pm=manager) as memory:
        memory.write("type=decision Chose SQLite for storage.")
        retrieval = memory.recall("SQLite storage")
        assert retrieval.hits and retrieval.hits[0].entry.content == "Chose SQLite for storage."
        broken = [c for c in retrieval.channels if c.channel == "broken"]
        assert broken and broken[0].ran is False and "plugin bug" in broken[0].note


def test_crib_trace_plugins_shows_hook_calls_and_the_errors_crib_swallows(db: Path, monkeypatch: pytest.MonkeyPatch,
                                                                          capfd: pytest.CaptureFixture[str]) -> None:
    """``CRIB_TRACE_PLUGINS=1``: each hook call and the plugins it runs go to stderr, and so does
    the error of a broken plugin channel that retrieval swallows (it still answers); without the
    switch, stderr stays empty."""

    def run() -> str:
        manager = new_plugin_manager(load_entrypoints=False)
        manager.register(BrokenPlugin(), name="broken-plugin")
        with Memory(db, pm=manager) as memory:
            memory.write("type=decision Chose SQLite for storage.")
            assert memory.recall("SQLite storage").hits  # fail open: the other channels answer
            Session(memory).memory.pm.hook.on_prompt(prompt="SQLite storage", session=Session(memory))
        out, err = capfd.readouterr()
        assert out == ""  # never stdout: a hook's stdout is the agent's context
        return err

    assert run() == ""
    monkeypatch.setenv("CRIB_TRACE_PLUGINS", "1")
    err = run()
    assert "crib trace: register_channels(register) → broken-plugin, crib_plugin." in err
    assert "crib trace: on_prompt(prompt, session) → " in err
    assert "crib trace: channel 'broken' failed (crib went on without it): RuntimeError: plugin bug" in err
