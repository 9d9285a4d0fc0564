"""The plugin as Claude Code itself sees it: the real CLI (npm ``@anthropic-ai/claude-code``) validates
the manifests strictly, installs the plugin from this repository as a marketplace in a throwaway
HOME, and the installed launcher, run as the Bash tool runs it (no ``CLAUDE_PLUGIN_*`` variables),
lands on the data folder Claude Code gives the plugin.

The CLI comes from ``CRIB_CLAUDE_BIN`` (``.ci/run`` installs it from npm and sets it) or PATH;
without it (npm unreachable) these tests skip, saying so.
"""

from __future__ import annotations

import json
import os
import shutil
import subprocess
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parent.parent


CLAUDE_BIN = os.environ.get("CRIB_CLAUDE_BIN", "")
"""Read when the module is imported: the autouse ``clean_env`` fixture (conftest.py) removes every
``CRIB_*`` variable before a test runs, so read inside a test it was always empty and these tests
skipped in CI although ``.ci/run`` had installed the CLI."""


def claude_cli() -> str:
    candidate = CLAUDE_BIN
    if candidate and os.access(candidate, os.X_OK):
        return candidate
    found = shutil.which("claude")
    if found is None:
        pytest.skip("the Claude Code CLI is not installed (npm unreachable?): .ci/run installs it with "
                    "`npm install @anthropic-ai/claude-code` and sets CRIB_CLAUDE_BIN")
    return found


def claude(*args: str, home: Path) -> subprocess.CompletedProcess[str]:
    env = {k: v for k, v in os.environ.items() if not k.startswith(("CLAUDE", "CRIB_"))}
    env.update({"HOME": str(home), "XDG_DATA_HOME": str(home / ".local" / "share"), "DISABLE_AUTOUPDATER": "1"})
    return subprocess.run([claude_cli(), *args], capture_output=True, text=True, env=env, cwd=str(home), timeout=180)


def test_claude_plugin_validate_strict(tmp_path: Path) -> None:
    result = claude("plugin", "validate", str(ROOT), "--strict", home=tmp_path)
    assert result.returncode == 0, result.stdout + result.stderr
    assert "passed" in (result.stdout + result.stderr).lower()


def test_installed_plugin_launcher_finds_claude_codes_data_folder(tmp_path: Path) -> None:
    home = tmp_path / "home"
    home.mkdir()
    for args in (("plugin", "marketplace", "add", str(ROOT)), ("plugin", "install", "crib@crib")):
        result = claude(*args, home=home)
        assert result.returncode == 0, result.stdout + result.stderr
    installed = json.loads((home / ".claude" / "plugins" / "installed_plugins.json").read_text())
    (record,) = installed["plugins"]["crib@crib"]
    root = Path(record["installPath"])
    assert (root / "bin" / "crib").exists() and (root / "launcher" / "mcp_stub.py").exists()
    data = home / ".claude" / "plugins" / "data" / "crib-crib"  # where Claude Code 2.1 puts CLAUDE_PLUGIN_DATA
    env = {k: v for k, v in os.environ.items() if not k.startswith(("CLAUDE", "CRIB_"))}
    env.update({"HOME": str(home), "XDG_DATA_HOME": str(home / ".local" / "share")})
    doctor = subprocess.run(["bash", str(root / "bin" / "crib"), "doctor"], capture_output=True, text=True, env=env, timeout=120)
    assert f"plugin data:  {data} (the installed plugin's data folder)" in doctor.stdout, doctor.stdout
