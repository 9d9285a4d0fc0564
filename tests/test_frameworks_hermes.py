"""crib as Hermes agent's memory provider (crib_plugin/hosts/frameworks/hermes*.py), loaded by
Hermes' own plugin loaders and run for whole turns by Hermes' AIAgent against a loopback
OpenAI-compatible stand-in (tests/fake_openai.py).

hermes-agent cannot share an environment with the OpenAI Agents SDK (it pins openai==2.24.0), so it
is not in the test extra: .ci/run runs this module in a venv of its own (`pip install -e '.[hermes]'`);
elsewhere it skips.
"""

from __future__ import annotations

import json
import re
from pathlib import Path
from typing import Any

import pytest

pytest.importorskip("run_agent")  # hermes-agent's top-level modules

from agent.memory_provider import MemoryProvider  # noqa: E402
from fake_openai import FakeOpenAI  # noqa: E402

from crib_plugin import Memory  # noqa: E402
from crib_plugin.hosts.frameworks import hermes_setup  # noqa: E402

FACT = "Chose SQLite for storage: zero dependencies, one file."
BLOCK = re.compile(r"<memory-context>.*?</memory-context>", re.S)


@pytest.fixture
def hermes_home(clean_env: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    home = tmp_path / "hermes"
    (home / "memories").mkdir(parents=True)
    (home / "config.yaml").write_text("memory:\n  provider: crib\nplugins:\n  enabled: [crib-scrub]\n")
    monkeypatch.setenv("HERMES_HOME", str(home))
    assert hermes_setup.main(["--hermes-home", str(home)]) == 0
    return home


def _messages_text(body: dict[str, Any]) -> str:
    return json.dumps(body.get("messages", []), ensure_ascii=False)


def _last_user(body: dict[str, Any]) -> str:
    return str([m for m in body["messages"] if m.get("role") == "user"][-1].get("content"))


def _chats(api: FakeOpenAI) -> list[dict[str, Any]]:
    return [body for body in api.requests if "messages" in body]


def test_hermes_loads_crib_and_a_turn_gets_the_block_stores_and_scrubs(hermes_home: Path, fake_embedder: Any) -> None:
    from hermes_cli.plugins import discover_plugins, get_plugin_manager
    from plugins.memory import load_memory_provider
    from run_agent import AIAgent

    provider = load_memory_provider("crib")  # Hermes' own loader, from $HERMES_HOME/plugins/crib
    assert isinstance(provider, MemoryProvider) and provider.name == "crib"
    assert {t["name"] for t in provider.get_tool_schemas()} == {"remember", "recall", "show", "correct", "forget"}
    discover_plugins(force=True)
    assert "transform_llm_output" in get_plugin_manager()._hooks  # crib-scrub, from the entry point

    def reply(body: dict[str, Any]) -> str | dict[str, Any]:
        text = _messages_text(body)
        if "remember this" in text and '"role": "tool"' not in text:
            return {"tool_calls": [{"name": "remember", "arguments": {"text": FACT, "type": "decision"}}]}
        found = BLOCK.search(_last_user(body))
        return f"From memory:\n{found.group(0)}\nWe chose SQLite." if found else "stored"

    with FakeOpenAI(reply) as api:
        agent = AIAgent(base_url=api.base_url, api_key="test", model="stand-in", quiet_mode=True,
                        skip_context_files=True, max_iterations=4, tool_delay=0, enabled_toolsets=["memory"])
        assert agent.chat("remember this: we chose SQLite") == "stored"
        with Memory(hermes_home.parent / "crib.db", create=False) as memory:  # the scripted tool call stored it
            assert [e["content"] for e in memory.export()] == [FACT]
        assert "crib memory" in _messages_text(_chats(api)[0])  # system_prompt_block

        api.requests.clear()
        answer = agent.chat("Which storage did we choose: SQLite?")
        block = BLOCK.search(_last_user(_chats(api)[0]))
        assert block and "Note from crib" in block.group(0) and FACT in block.group(0)  # the block reached the request
        assert answer.strip().endswith("We chose SQLite.")
        assert "memory-context" not in answer and "zero dependencies, one file" not in answer  # echoed block scrubbed


def test_hermes_memory_files_are_imported_on_request_and_never_written(hermes_home: Path, fake_embedder: Any) -> None:
    memory_md = hermes_home / "memories" / "MEMORY.md"
    user_md = hermes_home / "memories" / "USER.md"
    memory_md.write_text("The build runs with make ci.\n§\nStaging lives on host stage-2.")
    user_md.write_text("The user prefers short answers.")
    before = (memory_md.read_bytes(), user_md.read_bytes())
    assert hermes_setup.main(["--hermes-home", str(hermes_home), "--import-memories"]) == 0
    assert hermes_setup.main(["--hermes-home", str(hermes_home), "--import-memories"]) == 0  # twice: nothing twice
    with Memory(hermes_setup.open_scope("global").path, create=False) as memory:
        stored = sorted((e["type"], e["content"]) for e in memory.export())
    assert stored == [("note", "Staging lives on host stage-2."), ("note", "The build runs with make ci."),
                      ("preference", "The user prefers short answers.")]
    assert (memory_md.read_bytes(), user_md.read_bytes()) == before
