"""The plugin — manifest, marketplace entry, the ``deep-recall`` subagent — passes Claude Code's own
``claude plugin validate --strict`` (the ``@anthropic-ai/claude-code`` npm package; ``.ci/run``
installs it when npm is there). Skipped, saying so, where the ``claude`` command is not installed.
"""

from __future__ import annotations

import os
import re
import shutil
import subprocess
from pathlib import Path

from claude_cli import MCP_PREFIX, claude, needs_claude

ROOT = Path(__file__).resolve().parent.parent


def validate(path: Path) -> subprocess.CompletedProcess[str]:
    return claude(["plugin", "validate", str(path), "--strict"], dict(os.environ), ROOT, timeout=120)


@needs_claude
def test_the_plugin_and_its_marketplace_pass_strict_validation() -> None:
    for target in (ROOT, ROOT / ".claude-plugin" / "plugin.json"):  # the directory validates the marketplace; the manifest, the agents too
        result = validate(target)
        assert result.returncode == 0, result.stdout + result.stderr


@needs_claude
def test_strict_validation_fails_on_a_broken_agent(tmp_path: Path) -> None:
    """The check above can fail: the same plugin with an agent lacking its description does not pass."""
    copy = tmp_path / "crib"
    shutil.copytree(ROOT / ".claude-plugin", copy / ".claude-plugin")
    shutil.copytree(ROOT / "agents", copy / "agents")
    (copy / "agents" / "deep-recall.md").write_text("---\nname: deep-recall\n---\nRead memories.\n", encoding="utf-8")
    assert validate(copy / ".claude-plugin" / "plugin.json").returncode == 1


def test_the_deep_recall_agent_uses_only_crib_s_read_tools_by_their_claude_code_names() -> None:
    from crib_plugin.hosts.mcp_server import TOOLS

    text = (ROOT / "agents" / "deep-recall.md").read_text(encoding="utf-8")
    front = re.match(r"^---\n(.*?)\n---\n", text, re.S)
    assert front is not None
    fields = dict(line.split(": ", 1) for line in front.group(1).splitlines())
    assert fields["name"] == "deep-recall" and fields["model"] in {"haiku", "sonnet", "opus", "inherit"}
    tools = [t.strip() for t in fields["tools"].split(",")]
    served = {fn.__name__: hints for fn, _title, hints in TOOLS}
    assert {"manifest", "grep", "show"} <= {t.removeprefix(MCP_PREFIX) for t in tools}
    for tool in tools:
        assert tool.startswith(MCP_PREFIX) and served[tool.removeprefix(MCP_PREFIX)].read_only_hint, tool
    server = (ROOT / ".mcp.json").read_text(encoding="utf-8")
    plugin = (ROOT / ".claude-plugin" / "plugin.json").read_text(encoding="utf-8")
    assert '"crib"' in server and '"name": "crib"' in plugin  # plugin "crib", server "crib": the prefix above
