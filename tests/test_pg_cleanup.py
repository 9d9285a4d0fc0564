"""A test run leaves no PostgreSQL server behind: the session's server (tests/pg.py) is stopped by
its fixture, not left to ``atexit``, which a pytest-xdist worker may never run (a full ``-n auto``
run left up to 13 servers)."""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
import tempfile
from pathlib import Path

import pytest

TESTS = Path(__file__).resolve().parent

#: Two modules that each import the session fixture, as the suite's did: each got a server of its own.
INNER = '''
from pg import pg_server, pg_url  # noqa: F401

def test_a(pg_url):
    assert pg_url.startswith("postgresql")

def test_b(pg_url):
    assert pg_url.startswith("postgresql")
'''


def _postmasters(under: Path) -> set[int]:
    """PIDs of running PostgreSQL processes whose data folder is below ``under``."""
    found = set()
    for proc in Path("/proc").iterdir():
        if proc.name.isdigit():
            try:
                cmd = (proc / "cmdline").read_bytes().split(b"\0")
            except OSError:
                continue
            if cmd and cmd[0].endswith(b"postgres") and any(str(under).encode() in part for part in cmd):
                found.add(int(proc.name))
    return found


@pytest.mark.slow
def test_a_run_under_xdist_stops_its_servers(tmp_path: Path) -> None:
    pytest.importorskip("pgserver")
    pytest.importorskip("xdist")
    if os.environ.get("CRIB_TEST_PG_URL"):
        pytest.skip("the tests use a server of the user's own (CRIB_TEST_PG_URL)")
    for name in ("test_inner_a.py", "test_inner_b.py"):
        (tmp_path / name).write_text(INNER, encoding="utf-8")
    # the inner run's servers live below it (tests/pg.py: tempfile.mkdtemp); a short path, as a
    # server's socket path must fit in 107 bytes
    scratch = Path(tempfile.mkdtemp(prefix="crib-pgc-"))
    env = {**os.environ, "TMPDIR": str(scratch),
           "PYTHONPATH": os.pathsep.join([str(TESTS), str(TESTS.parent), os.environ.get("PYTHONPATH", "")])}
    done = subprocess.run([sys.executable, "-m", "pytest", "-q", "-n", "2", "-p", "no:cacheprovider", "-p", "no:randomly", "-rs",
                           "--rootdir", str(tmp_path), "-c", os.devnull, str(tmp_path)],
                          capture_output=True, text=True, env=env, cwd=tmp_path, timeout=300)
    left = _postmasters(scratch)
    shutil.rmtree(scratch, ignore_errors=True)
    assert "4 passed" in done.stdout, done.stdout + done.stderr
    assert not left, f"PostgreSQL servers left running: {sorted(left)}"


def test_the_server_fixtures_are_defined_once() -> None:
    """A test module that imports ``pg_server`` defines a session fixture of its own, with its own
    server: they are imported by conftest.py alone."""
    offenders = [p.name for p in TESTS.glob("test_*.py") if p.name != Path(__file__).name
                 and any(line.startswith("from pg import") and ("pg_server" in line or "pg_url" in line)
                         for line in p.read_text(encoding="utf-8").splitlines())]
    assert not offenders
