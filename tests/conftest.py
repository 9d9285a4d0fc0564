"""Shared fixtures: every test gets its own database in ``tmp_path`` and a clean environment.

Third-party plugins installed on the machine are never loaded in tests (``sys._called_from_test``,
the switch simonw/llm uses). Real SQLite, real sqlite-vec and the real offline MiniLM weights are
used throughout; Ollama is the loopback fake from ``fake_ollama.py``.
"""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
from pathlib import Path
from typing import Any, Iterator

import pytest
from pg import pg_server, pg_url  # noqa: F401  (fixtures, defined here once: a module importing them got a server of its own)

from fake_ollama import fake_ollama, fake_ollama_env  # noqa: F401  (fixtures)

ROOT = Path(__file__).resolve().parent.parent

# pytest caches the assertion-rewritten test modules in tests/__pycache__ only when bytecode may be
# written; under PYTHONDONTWRITEBYTECODE (set in this project's sandbox, as in many CI images) every
# run, and every -n worker, rewrote all of them again: ~6 s of CPU per process before the first
# test (collection 9.0 -> 3.0 s with the cache). Test modules only: crib's own bytecode is
# `crib init`'s (crib_plugin/hosts/bytecode.py), and subprocesses keep the environment's setting.
sys.dont_write_bytecode = False


def pytest_configure(config: Any) -> None:
    sys._called_from_test = True  # type: ignore[attr-defined]


def pytest_collection_modifyitems(items: list[Any]) -> None:
    """Tests marked ``slow`` first, otherwise in collection order (a stable sort).

    Under ``-n`` (``--dist loadgroup``, pyproject.toml: each test, or each ``xdist_group``, goes to
    the next free worker in this order) the long tests start early and the run ends on short ones,
    instead of one worker finishing a 30 s test alone while the other has nothing left to run."""
    items.sort(key=lambda item: item.get_closest_marker("slow") is None)


def pytest_report_header(config: Any) -> list[str]:
    """The versions results depend on: SQLite (as apsw links it), apsw and sqlite-vec."""
    from importlib.metadata import PackageNotFoundError, version

    import apsw

    def dist(name: str) -> str:
        try:
            return version(name)
        except PackageNotFoundError:
            return "not installed"

    from fake_ollama import LIVE_HOST, NO_LIVE

    live = f"ollama_live tests: against {LIVE_HOST}" if LIVE_HOST else f"ollama_live tests: SKIPPED ({NO_LIVE})"
    return [f"crib: SQLite {apsw.sqlite_lib_version()}, apsw {apsw.apsw_version()}, sqlite-vec {dist('sqlite-vec')}", live]


@pytest.fixture(autouse=True)
def clean_env(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Iterator[Path]:
    """No CRIB_* / OLLAMA_* leaks between tests; the database lives in tmp_path; Ollama unreachable."""
    for name in list(os.environ):
        if name.startswith("CRIB_") or name == "OLLAMA_HOST":
            monkeypatch.delenv(name, raising=False)
    db = tmp_path / "crib.db"
    monkeypatch.setenv("CRIB_DB", str(db))
    monkeypatch.setenv("CRIB_GLOBAL_DB", str(tmp_path / "global" / "crib.db"))  # never the user's global store
    monkeypatch.setenv("CRIB_EXTRACTOR", "rules")
    # A loaded test machine must not push a write past its model budgets (tests of the budgets set them).
    monkeypatch.setenv("CRIB_EMBED_BUDGET", "300")
    monkeypatch.setenv("CRIB_EXTRACT_BUDGET", "300")
    monkeypatch.setenv("CRIB_ERROR_LOG", str(tmp_path / "crib.log"))
    monkeypatch.setenv("CRIB_CACHE_DIR", str(tmp_path.parent / f"{tmp_path.name}-cache"))  # not the user's, not the cwd
    monkeypatch.setenv("XDG_CONFIG_HOME", str(tmp_path.parent / f"{tmp_path.name}-config"))  # no user config.toml
    # A closed port: nothing answers, so "auto" choices and probes see no Ollama.
    monkeypatch.setenv("OLLAMA_HOST", "http://127.0.0.1:9")
    from crib_plugin.models import ollama_probe

    ollama_probe.list_models.cache_clear()
    monkeypatch.chdir(tmp_path)
    yield db
    ollama_probe.list_models.cache_clear()


def copy_store(src: Path, dst: Path) -> None:
    """Copy the SQLite store ``src`` and every file or folder beside it that bears its name
    (``-wal``, ``-shm``, the vector side index) to ``dst``, as the same names under ``dst``'s."""
    for path in src.parent.iterdir():
        if path.name.startswith(src.name):
            target = dst.parent / (dst.name + path.name[len(src.name):])
            if path.is_dir():
                shutil.copytree(path, target)
            else:
                shutil.copy2(path, target)


def assert_fts_ran(memory: Any, text: str) -> None:
    """Recall ``text`` with the full-text channel only and fail unless that channel really ran.

    ``memory.search`` cannot fail on an FTS5 error: ``recall.run_channel`` turns every exception
    into ``ran=False``. This asks the channel's own report instead.
    """
    retrieval = memory.recall(text, channels=["fts"])
    if not retrieval.query.text:
        return  # nothing to search for: no channel runs, which is not an error
    report = {c.channel: c for c in retrieval.channels}
    assert "fts" in report, f"the fts channel did not run for {text!r}"
    assert report["fts"].ran, f"the fts channel failed for {text!r}: {report['fts'].note}"


@pytest.fixture
def fake_embedder(monkeypatch: pytest.MonkeyPatch) -> Iterator[type]:
    """The shared fake embedder (``tests/fake_embedder.py``), registered as a plugin named ``fake``
    on the process-wide plugin manager and selected with ``CRIB_EMBEDDER=fake``; removed afterwards."""
    from fake_embedder import FakeEmbedder, FakeEmbedderPlugin

    from crib_plugin.plugins.manager import get_plugin_manager

    pm = get_plugin_manager()
    plugin = FakeEmbedderPlugin()
    pm.register(plugin, name="fake-embedder")
    monkeypatch.setenv("CRIB_EMBEDDER", "fake")
    yield FakeEmbedder
    pm.unregister(plugin)


@pytest.fixture
def db(clean_env: Path) -> Path:
    return clean_env


@pytest.fixture
def memory(db: Path) -> Iterator[Any]:
    from crib_plugin import Memory

    with Memory(db) as mem:
        yield mem


def run_crib(*args: str, input: str | None = None, env: dict[str, str] | None = None, timeout: float = 60) -> subprocess.CompletedProcess[str]:
    """Run the real ``crib`` console script in a fresh process (what hosts do)."""
    full_env = dict(os.environ)
    full_env.update(env or {})
    return subprocess.run(
        [sys.executable, "-m", "crib_plugin", *args],
        input=input,
        capture_output=True,
        text=True,
        env=full_env,
        timeout=timeout,
    )


def run_crib_in_process(*args: str, input: str | None = None, env: dict[str, str] | None = None,
                        timeout: float = 60) -> subprocess.CompletedProcess[str]:
    """The same command line through the same entry point (:func:`crib_plugin.cli.hotpath.main`), in
    this process with click's test isolation (stdin, stdout, stderr and ``env`` swapped in):
    tens of milliseconds instead of a fresh interpreter. ``timeout`` is accepted for the same
    signature. The Claude Code hooks may leave with ``os._exit`` on a timeout, so they always run
    in a fresh process (:func:`run_crib`)."""
    if args[:1] == ("hook",):
        return run_crib(*args, input=input, env=env, timeout=timeout)
    from click.testing import CliRunner

    from crib_plugin.hosts.cli.hotpath import main

    code = 0
    saved = dict(os.environ)  # a command may set variables for its own process (--now sets CRIB_NOW)
    try:
        with CliRunner().isolation(input=input, env=env) as streams:
            try:
                main(list(args))
            except SystemExit as exc:
                code = exc.code if isinstance(exc.code, int) else (0 if exc.code is None else 1)
            sys.stdout.flush()  # the isolation's text wrappers buffer
            sys.stderr.flush()
            out, err = streams[0].getvalue(), streams[1].getvalue()
    finally:
        os.environ.clear()
        os.environ.update(saved)
    return subprocess.CompletedProcess(list(args), code, out.decode("utf-8", "replace"), err.decode("utf-8", "replace"))


@pytest.fixture
def crib() -> Any:
    """Run a ``crib`` command line in process (see :func:`run_crib_in_process`)."""
    return run_crib_in_process


@pytest.fixture
def crib_cold() -> Any:
    """Run ``crib`` in a fresh interpreter: for what only a cold process shows (start-up imports,
    installed plugins' entry points, the launcher, ``os._exit``)."""
    return run_crib
