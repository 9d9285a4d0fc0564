"""``crib setup HOST`` / ``--undo`` in a throwaway HOME: each host's own files, idempotent, the
user's other settings kept, undo restoring them; ``crib doctor`` lists what is wired and works."""

from __future__ import annotations

import json
import os
import shutil
from pathlib import Path

import pytest
from click.testing import CliRunner

from crib_plugin.hosts.cli.app import cli
from crib_plugin.hosts.setup import HOSTS, setup, wired
from crib_plugin.hosts.setup.check import hosts_report

CODEX = os.environ.get("CRIB_CODEX_BIN") or shutil.which("codex")  # read at import: conftest clears CRIB_*

USER_FILES = {
    ".codex/config.toml": 'model = "o4"\n\n[features]\nweb_search = true\n',
    ".codex/hooks.json": json.dumps({"hooks": {"Stop": [{"hooks": [{"type": "command", "command": "notify-send done"}]}]}}),
    ".config/opencode/opencode.json": json.dumps({"theme": "dark", "mcp": {"other": {"type": "local", "command": ["x"]}}}),
    ".claude/settings.json": json.dumps({"model": "opus", "hooks": {"UserPromptSubmit": [{"hooks": [{"type": "command", "command": "mine"}]}]}}),
    ".claude.json": json.dumps({"numStartups": 3}),
}


@pytest.fixture
def home(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    home = tmp_path / "home"
    for rel, text in USER_FILES.items():
        (home / rel).parent.mkdir(parents=True, exist_ok=True)
        (home / rel).write_text(text)
    for name in ("CODEX_HOME", "XDG_CONFIG_HOME", "GEMINI_CLI_HOME", "CLAUDE_CONFIG_DIR"):
        monkeypatch.delenv(name, raising=False)
    monkeypatch.setenv("HOME", str(home))
    monkeypatch.setenv("PATH", "/usr/bin:/bin")  # no `codex` command: its set-up writes config files
    return home


def snapshot(home: Path) -> dict[str, str]:
    return {str(p.relative_to(home)): p.read_text() for p in sorted(home.rglob("*")) if p.is_file()}


@pytest.mark.parametrize("host", HOSTS)
def test_setup_is_idempotent_keeps_the_users_settings_and_undo_restores_them(home: Path, host: str) -> None:
    before = snapshot(home)
    assert not wired(host, home)
    assert setup(host, home).lines  # it says what it changed
    assert wired(host, home)
    once = snapshot(home)
    assert setup(host, home).lines == [] and snapshot(home) == once  # a second run changes nothing
    for rel, text in USER_FILES.items():  # every setting of the user's is still there
        if rel in once and rel.endswith(".json"):
            old, new = json.loads(text), json.loads(once[rel])
            for key, value in old.items():
                if isinstance(value, dict):
                    for inner, v in value.items():
                        assert new[key][inner] == v if not isinstance(v, list) else v[0] in new[key][inner]
                else:
                    assert new[key] == value
    assert 'model = "o4"' in once[".codex/config.toml"]
    assert setup(host, home, undo=True).lines
    after = snapshot(home)
    for rel in before:
        if rel.endswith(".json"):
            assert json.loads(after[rel]) == json.loads(before[rel]), rel
        else:
            assert after[rel] == before[rel], rel
    assert set(after) <= set(before)  # nothing crib created is left behind
    assert not wired(host, home)


def test_the_command_prints_its_changes_and_doctor_lists_the_hosts(home: Path) -> None:
    runner = CliRunner()
    done = runner.invoke(cli, ["setup", "gemini"])
    assert done.exit_code == 0 and "gemini-extension.json" in done.output and "--approval-mode yolo" in done.output
    manifest = json.loads((home / ".gemini/extensions/crib/gemini-extension.json").read_text())
    assert manifest["mcpServers"]["crib"]["args"][-1] == "mcp" and manifest["contextFileName"] == "GEMINI.md"
    hooks = json.loads((home / ".gemini/extensions/crib/hooks/hooks.json").read_text())["hooks"]
    assert set(hooks) == {"SessionStart", "BeforeAgent", "AfterModel"}
    report = hosts_report(home)
    assert report["gemini"] == {"wired": True, "works": True} and report["codex"]["wired"] is False and report["ok"]
    assert runner.invoke(cli, ["setup", "gemini"]).output.startswith("crib setup gemini: nothing to change")
    assert runner.invoke(cli, ["setup", "gemini", "--undo"]).exit_code == 0 and not wired("gemini", home)


@pytest.mark.skipif(not CODEX, reason="the Codex CLI is not installed (.ci/run installs it from npm)")
def test_codex_setup_installs_a_plugin_through_codex_s_own_marketplace(home: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("CRIB_CODEX_BIN", str(CODEX))
    before = snapshot(home)
    lines = setup("codex", home).lines
    assert any("codex plugin add crib@crib" in line for line in lines)
    config = (home / ".codex" / "config.toml").read_text()
    assert '[plugins."crib@crib"]' in config and 'model = "o4"' in config and wired("codex", home)
    plugin = home / ".codex" / "crib-marketplace" / "plugins" / "crib"
    assert json.loads((plugin / ".codex-plugin" / "plugin.json").read_text())["hooks"] == "./hooks/hooks.json"
    assert "--host codex" in (plugin / "hooks" / "hooks.json").read_text()
    assert (plugin / "skills" / "crib-memory" / "SKILL.md").read_text().startswith("---\nname: crib-memory")
    assert setup("codex", home).lines == []
    assert setup("codex", home, undo=True).lines and not wired("codex", home)
    after = snapshot(home)
    assert after[".codex/hooks.json"] == before[".codex/hooks.json"] and 'model = "o4"' in after[".codex/config.toml"]
    assert "crib" not in after[".codex/config.toml"]
