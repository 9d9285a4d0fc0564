"""What the framework adapters share (crib_plugin/hosts/frameworks/): the bridge's tools and
fail-open block, `crib plugins` listing the adapters, and no framework loaded by `import crib_plugin`,
the prompt hook or `crib plugins`."""

from __future__ import annotations

import json
import subprocess
import sys
from importlib import metadata
from pathlib import Path
from typing import Any

import pytest
from click.testing import CliRunner

from crib_plugin.hosts.cli.app import cli, load_plugin_commands
from crib_plugin.hosts.frameworks import ADAPTERS
from crib_plugin.hosts.frameworks.bridge import Crib, call_tool, tool_specs

FRAMEWORKS = ("agents", "langgraph", "langchain", "langchain_core", "pydantic_ai", "run_agent", "hermes_cli", "openai")


def test_import_and_the_prompt_hook_load_no_framework(clean_env: Path) -> None:
    script = (
        "import sys, json\n"
        "import crib_plugin\n"
        "from crib_plugin import Memory\n"
        "from crib_plugin.hosts.cli.retrieve import run_retrieve\n"
        "from crib_plugin.hosts.frameworks import adapter_report\n"
        f"Memory({str(clean_env)!r}).write('Chose SQLite for storage.', type='decision')\n"
        "run_retrieve('which storage did we choose?')\n"
        "adapter_report()\n"
        f"print(json.dumps(sorted(m for m in sys.modules if m.split('.')[0] in {FRAMEWORKS!r})))\n"
    )
    out = subprocess.run([sys.executable, "-c", script], capture_output=True, text=True, timeout=120, check=True)
    assert json.loads(out.stdout.strip().splitlines()[-1]) == []


def test_crib_plugins_lists_the_adapters_and_whether_each_is_installed() -> None:
    load_plugin_commands()  # `crib plugins` is added by crib's own commands plugin
    result = CliRunner().invoke(cli, ["plugins", "--json"])
    assert result.exit_code == 0, result.output
    rows = {r["name"]: r for r in json.loads(result.output) if r["name"].startswith("adapter:")}
    assert set(rows) == {f"adapter:{name}" for name in ADAPTERS}
    for name, (distributions, extra) in ADAPTERS.items():
        installed = True
        for distribution in distributions:
            try:
                metadata.version(distribution)
            except metadata.PackageNotFoundError:
                installed = False
        assert rows[f"adapter:{name}"]["installed"] is installed and rows[f"adapter:{name}"]["extra"] == extra
    text = CliRunner().invoke(cli, ["plugins"]).output
    assert "crib_plugin.hosts.frameworks.hermes: " in text and "crib_plugin.hosts.frameworks.pydantic_ai: " in text


def test_the_tools_are_the_mcp_servers_with_errors_as_answers(clean_env: Path) -> None:
    specs = {s.name: s for s in tool_specs()}
    assert list(specs) == ["remember", "recall", "show", "correct", "forget"]
    assert specs["remember"].parameters["required"] == ["text"] and "decision" in specs["remember"].description
    assert json.loads(call_tool("remember", {"text": "  "}))["error"] == "text is empty"
    assert "bad arguments" in json.loads(call_tool("remember", {"txt": "x"}))["error"]
    assert "no tool" in json.loads(call_tool("nope", {}))["error"]
    assert "not offered" in json.loads(Crib(tools=("recall",)).call_tool("remember", {"text": "x"}))["error"]
    stored = json.loads(call_tool("remember", {"text": "The CI runs on two cores.", "type": "note"}))
    assert stored["id"] == 1 and "two cores" in call_tool("show", {"id": 1})


def test_the_block_fails_open(clean_env: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    crib = Crib()
    assert crib.block("anything at all?") == ""  # no store: nothing, and nothing created
    assert not clean_env.exists()
    crib.store("Chose SQLite for storage.", type="decision")

    def broken(*args: Any, **kwargs: Any) -> Any:
        raise RuntimeError("store exploded")

    monkeypatch.setattr("crib_plugin.hosts.frameworks.bridge.open_reading", broken)
    assert crib.block("which storage did we choose?") == ""
    assert "store exploded" in (clean_env.parent / "crib.log").read_text()


def test_a_turns_block_is_reused_until_a_tool_writes(clean_env: Path, fake_embedder: Any,
                                                      monkeypatch: pytest.MonkeyPatch) -> None:
    crib = Crib()
    crib.store("Chose SQLite for storage: zero dependencies.", type="decision")
    calls: list[str] = []
    retrieve = crib._retrieve
    monkeypatch.setattr(crib, "_retrieve", lambda text: calls.append(text) or retrieve(text))
    first = crib.block("Which storage did we choose: SQLite?")
    assert "zero dependencies" in first
    assert crib.block("Which storage did we choose: SQLite?") == first and len(calls) == 1  # one turn, one retrieval
    crib.call_tool("remember", {"text": "Chose WAL mode for SQLite storage.", "type": "decision"})
    assert "WAL mode" in crib.block("Which storage did we choose: SQLite?") and len(calls) == 2
    monkeypatch.setattr("crib_plugin.hosts.frameworks.bridge.REUSE_SECONDS", 0.0)
    crib.block("Which storage did we choose: SQLite?")
    assert len(calls) == 3  # later: retrieved again (another process may have written)
