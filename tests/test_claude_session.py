"""A scripted Claude Code session, driven as Claude Code drives a plugin.

1. ``/plugin marketplace add <this repo>``: read ``.claude-plugin/marketplace.json``, find the
   ``crib`` entry and resolve its ``source`` against the marketplace root.
2. ``/plugin install crib@<marketplace>``: copy the plugin into a plugin cache folder (its
   ``${CLAUDE_PLUGIN_ROOT}``), read its ``plugin.json``, find its skill (parse the frontmatter),
   its hooks (``hooks/hooks.json``) and its MCP server (``.mcp.json``).
3. Start the MCP server command with an MCP client, as Claude Code does, in a fresh git repository
   (the project); store a decision in the project and a preference in the global store.
4. Send ``UserPromptSubmit`` hook JSON for the next prompt, then ``SessionStart`` with source
   ``compact``: both memories come back each time.

The launcher is told which interpreter to use (``CRIB_PYTHON``) instead of installing crib into
``${CLAUDE_PLUGIN_DATA}``; everything else is the plugin as shipped.
"""

from __future__ import annotations

import json
import os
import re
import shutil
import subprocess
import sys
from pathlib import Path
from typing import Any

import anyio
import pytest
from mcp import ClientSession, StdioServerParameters
from mcp.client.stdio import stdio_client

ROOT = Path(__file__).resolve().parent.parent
DECISION = "Chose PostgreSQL for the orders service because refunds need transactional updates across three tables."
PREFERENCE = "The user wants every new orders service endpoint covered by a pytest integration test before review."
PROMPT = "Add a refund endpoint to the orders service; which database does it use and how should I test it?"


def expand(value: str, plugin_root: Path) -> str:
    return value.replace("${CLAUDE_PLUGIN_ROOT}", str(plugin_root))


def frontmatter(path: Path) -> dict[str, str]:
    """The YAML frontmatter of a SKILL.md (flat ``key: value`` lines, as the skill uses)."""
    text = path.read_text(encoding="utf-8")
    match = re.match(r"^---\n(.*?)\n---\n", text, re.S)
    assert match, f"{path} has no frontmatter"
    fields = {}
    for line in match.group(1).splitlines():
        key, _, value = line.partition(":")
        fields[key.strip()] = value.strip()
    return fields


def install_from_marketplace(cache: Path) -> Path:
    """What `/plugin marketplace add` + `/plugin install crib@…` do with this repository."""
    marketplace = json.loads((ROOT / ".claude-plugin" / "marketplace.json").read_text())
    assert marketplace["name"] and marketplace["owner"]["name"]
    (entry,) = [p for p in marketplace["plugins"] if p["name"] == "crib"]
    assert entry["source"].startswith("./") and ".." not in entry["source"]
    source = (ROOT / entry["source"]).resolve()  # relative to the marketplace root, not .claude-plugin/
    plugin_root = cache / marketplace["name"] / entry["name"]
    shutil.copytree(source, plugin_root, ignore=shutil.ignore_patterns(".git", ".state", "__pycache__", "tests", "bench", ".pytest_cache"))
    manifest = json.loads((plugin_root / ".claude-plugin" / "plugin.json").read_text())
    assert manifest["name"] == entry["name"]
    return plugin_root


def git_repo(path: Path) -> Path:
    path.mkdir(parents=True)
    subprocess.run(["git", "init", "-q", str(path)], check=True)
    (path / "src").mkdir()
    return path


def hook_command(plugin_root: Path, event: str, source: str = "") -> str:
    config = json.loads((plugin_root / "hooks" / "hooks.json").read_text())
    for group in config["hooks"][event]:
        if not source or re.fullmatch(group.get("matcher", ".*"), source):
            (hook,) = group["hooks"]
            return expand(hook["command"], plugin_root)
    raise AssertionError(f"no {event} hook matches {source!r}")


def run_hook(command: str, payload: dict[str, Any], env: dict[str, str], cwd: Path) -> str:
    """Run a command hook as Claude Code does (a shell command, JSON on stdin); its additionalContext."""
    result = subprocess.run(["bash", "-c", command], input=json.dumps(payload), capture_output=True, text=True,
                            env=env, cwd=cwd, timeout=120)
    assert result.returncode == 0, result.stderr
    out = json.loads(result.stdout)["hookSpecificOutput"]
    assert out["hookEventName"] == payload["hook_event_name"]
    return out["additionalContext"]


async def store_through_mcp(plugin_root: Path, env: dict[str, str], project: Path) -> None:
    servers = json.loads((plugin_root / ".mcp.json").read_text())
    servers = servers.get("mcpServers", servers)
    spec = servers["crib"]
    params = StdioServerParameters(command=expand(spec["command"], plugin_root),
                                   args=[expand(a, plugin_root) for a in spec.get("args", [])],
                                   env={**env, **spec.get("env", {})}, cwd=str(project))
    with open(os.devnull, "w") as errlog:
        async with stdio_client(params, errlog=errlog) as (read, write):
            async with ClientSession(read, write) as client:
                await client.initialize()
                assert {t.name for t in (await client.list_tools()).tools} >= {"remember", "recall"}
                for text, kind, scope in ((DECISION, "decision", "project"), (PREFERENCE, "preference", "global")):
                    result = await client.call_tool("remember", {"text": text, "type": kind, "scope": scope})
                    assert not result.is_error, result.content


@pytest.mark.slow
def test_a_scripted_claude_code_session(tmp_path: Path) -> None:
    plugin_root = install_from_marketplace(tmp_path / "plugins" / "cache")

    skills = sorted((plugin_root / "skills").glob("*/SKILL.md"))
    assert [s.parent.name for s in skills] == ["crib-memory"]
    skill = frontmatter(skills[0])
    assert skill["name"] == "crib-memory" and re.fullmatch(r"[a-z0-9-]{1,64}", skill["name"])
    assert 0 < len(skill["description"]) <= 1024  # the Agent Skills limit on a description
    for word in ("decision", "error", "preference", "recall", "correct"):
        assert word in skill["description"]

    project = git_repo(tmp_path / "shop")
    env = {k: v for k, v in os.environ.items() if not k.startswith("CRIB_") and k != "CLAUDE_PROJECT_DIR"}
    env.update({
        "CLAUDE_PLUGIN_ROOT": str(plugin_root),
        "CLAUDE_PLUGIN_DATA": str(tmp_path / "plugin-data"),
        "CRIB_PYTHON": sys.executable,
        "PYTHONPATH": str(ROOT),
        "CRIB_GLOBAL_DB": str(tmp_path / "user-data" / "crib.db"),
        "CRIB_EXTRACTOR": "rules",
        "CRIB_CACHE_DIR": str(tmp_path / "cache"),
        "CRIB_ERROR_LOG": str(tmp_path / "crib.log"),
        "CRIB_HOOK_TIMEOUT": "60",
        "OLLAMA_HOST": os.environ.get("OLLAMA_HOST", "http://127.0.0.1:9"),
    })
    anyio.run(store_through_mcp, plugin_root, env, project / "src")  # Claude started in a subdirectory

    assert (project / ".state" / "crib" / "crib.db").exists()  # the project store is at the repository root
    status = subprocess.run(["git", "status", "--porcelain"], cwd=project, capture_output=True, text=True, check=True)
    assert status.stdout == ""  # the store never shows up as something to commit

    hook_env = {**env, "CLAUDE_PROJECT_DIR": str(project)}
    base = {"session_id": "9f1c2d3e-0000-4000-8000-000000000001", "transcript_path": str(tmp_path / "t.jsonl"),
            "cwd": str(project / "src"), "permission_mode": "default"}
    prompt = {**base, "hook_event_name": "UserPromptSubmit", "prompt_id": "p1", "prompt": PROMPT}
    context = run_hook(hook_command(plugin_root, "UserPromptSubmit"), prompt, hook_env, project / "src")
    assert "Chose PostgreSQL for the orders service" in context
    assert "pytest integration test" in context

    start = {**base, "hook_event_name": "SessionStart", "source": "compact"}
    context = run_hook(hook_command(plugin_root, "SessionStart", "compact"), start, hook_env, project / "src")
    first_line = context.splitlines()[0]
    assert "remember" in first_line and "crib" in first_line  # memory is there, and how to write it
    assert "Chose PostgreSQL for the orders service" in context
    assert "pytest integration test" in context
