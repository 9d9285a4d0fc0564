"""The plugin as Claude Code itself sees it: the real CLI (npm ``@anthropic-ai/claude-code``) validates
the manifests strictly, installs the plugin from this repository as a marketplace in a throwaway
HOME, and the installed launcher, run as the Bash tool runs it (no ``CLAUDE_PLUGIN_*`` variables),
lands on the data folder Claude Code gives the plugin.

The CLI comes from ``CRIB_CLAUDE_BIN`` (``.ci/run`` installs it from npm and sets it) or PATH
(``tests/claude_cli.py``); without it (npm unreachable) these tests skip, saying so.
"""

from __future__ import annotations

import json
import subprocess
from pathlib import Path

from claude_cli import ROOT, claude, home_env, install_plugin, needs_claude

pytestmark = needs_claude


def test_claude_plugin_validate_strict(tmp_path: Path) -> None:
    result = claude(["plugin", "validate", str(ROOT), "--strict"], home_env(tmp_path), tmp_path)
    assert result.returncode == 0, result.stdout + result.stderr
    assert "passed" in (result.stdout + result.stderr).lower()


def test_installed_plugin_launcher_finds_claude_codes_data_folder(tmp_path: Path) -> None:
    home = tmp_path / "home"
    home.mkdir()
    install_plugin(home_env(home), home)
    installed = json.loads((home / ".claude" / "plugins" / "installed_plugins.json").read_text())
    (record,) = installed["plugins"]["crib@crib"]
    root = Path(record["installPath"])
    assert (root / "bin" / "crib").exists() and (root / "launcher" / "mcp_stub.py").exists()
    data = home / ".claude" / "plugins" / "data" / "crib-crib"  # where Claude Code 2.1 puts CLAUDE_PLUGIN_DATA
    doctor = subprocess.run(["bash", str(root / "bin" / "crib"), "doctor"], capture_output=True, text=True, env=home_env(home), timeout=120)
    assert f"plugin data:  {data} (the installed plugin's data folder)" in doctor.stdout, doctor.stdout
