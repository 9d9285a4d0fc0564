"""The real Claude Code CLI for the tests that drive it: where it is, a throwaway HOME to run it in,
and the plugin installed there from this repository as a marketplace.

``CLAUDE`` is read when this module is imported: the autouse ``clean_env`` fixture (conftest.py)
removes every ``CRIB_*`` variable before a test runs, so ``CRIB_CLAUDE_BIN`` (``.ci/run`` installs
the CLI from npm and sets it) read inside a test was always empty, and the tests skipped in CI.
"""

from __future__ import annotations

import os
import shutil
import subprocess
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parent.parent
_given = os.environ.get("CRIB_CLAUDE_BIN", "")
CLAUDE = _given if _given and os.access(_given, os.X_OK) else shutil.which("claude")
needs_claude = pytest.mark.skipif(CLAUDE is None, reason="the Claude Code CLI is not installed (npm unreachable?): "
                                  ".ci/run installs it with `npm install @anthropic-ai/claude-code` and sets CRIB_CLAUDE_BIN")
MCP_PREFIX = "mcp__plugin_crib_crib__"  # Claude Code names a plugin's MCP tools mcp__plugin_<plugin>_<server>__<tool>


def home_env(home: Path) -> dict[str, str]:
    """This environment with ``home`` as HOME, and none of Claude Code's, crib's or the API's variables."""
    env = {k: v for k, v in os.environ.items() if not k.startswith(("CLAUDE", "CRIB_", "ANTHROPIC"))}
    env.update({"HOME": str(home), "XDG_DATA_HOME": str(home / ".local" / "share"), "DISABLE_AUTOUPDATER": "1"})
    return env


def claude(args: list[str], env: dict[str, str], cwd: Path, timeout: int = 300) -> subprocess.CompletedProcess[str]:
    """``claude ARGS``, output captured."""
    assert CLAUDE is not None
    return subprocess.run([CLAUDE, *args], capture_output=True, text=True, env=env, cwd=str(cwd), timeout=timeout)


def clean_copy(target: Path) -> Path:
    """What the documented ``git clone --depth 1`` of this checkout holds: the files git tracks (as they
    are in the working tree, so uncommitted edits are tested too) — none of its ``.state/`` store,
    caches or virtualenvs, which Claude Code would copy from a local marketplace folder."""
    tracked = subprocess.run(["git", "ls-files", "-z"], cwd=ROOT, capture_output=True, check=True).stdout.decode().split("\0")
    for name in filter(None, tracked):
        source = ROOT / name
        if source.is_file():
            (target / name).parent.mkdir(parents=True, exist_ok=True)
            shutil.copy2(source, target / name)
    return target


def install_plugin(env: dict[str, str], home: Path) -> None:
    """``/plugin marketplace add`` a clean clone and ``/plugin install crib@crib``, as docs/install.md says;
    the plugin Claude Code installed holds nothing of a working clone's own state."""
    source = clean_copy(home / ".local" / "share" / "crib-plugin-src")
    for args in (["plugin", "marketplace", "add", str(source)], ["plugin", "install", "crib@crib"]):
        done = claude(args, env, home)
        assert done.returncode == 0, done.stdout + done.stderr
    installed = list((home / ".claude" / "plugins" / "cache").glob("crib/crib/*"))
    assert installed, "Claude Code installed no copy of the plugin"
    for copy in installed:
        stray = [p.name for p in copy.iterdir() if p.name in (".state", ".pytest_cache", ".venv", ".mypy_cache", ".ruff_cache")]
        assert not stray, f"the installed plugin carries a working clone's {stray}"
