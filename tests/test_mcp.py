"""``crib mcp`` through a real MCP client session over stdio (the SDK's ``ClientSession``).

The server runs as its own process (``python -m crib_plugin mcp``), exactly as an MCP host spawns
it; nothing here calls the tool functions directly.
"""

from __future__ import annotations

import os
import subprocess
import sys
from contextlib import asynccontextmanager
from pathlib import Path
from typing import Any, AsyncIterator

import anyio
import pytest
from mcp import ClientSession, StdioServerParameters
from mcp.client.stdio import stdio_client

ROOT = Path(__file__).resolve().parent.parent
TOOLS = {"remember", "recall", "search", "show", "manifest", "grep", "list_memories", "correct", "cue", "forget"}


def server_env(tmp_path: Path) -> dict[str, str]:
    """What the spawned server needs: crib's source, a throwaway project and global store, no Ollama."""
    keep = ("CRIB_DB", "CRIB_EXTRACTOR", "CRIB_ERROR_LOG", "CRIB_CACHE_DIR", "OLLAMA_HOST", "CRIB_MODEL_DIR", "HOME")
    env = {k: os.environ[k] for k in keep if k in os.environ}
    env["PYTHONPATH"] = os.pathsep.join(filter(None, [str(ROOT), os.environ.get("PYTHONPATH", "")]))
    env["CRIB_GLOBAL_DB"] = str(tmp_path / "global" / "crib.db")
    return env


@asynccontextmanager
async def session(params: StdioServerParameters) -> AsyncIterator[ClientSession]:
    with open(os.devnull, "w") as errlog:  # the server's stderr is not part of the protocol
        async with stdio_client(params, errlog=errlog) as (read, write):
            async with ClientSession(read, write) as client:
                await client.initialize()
                yield client


def crib_server(tmp_path: Path) -> StdioServerParameters:
    return StdioServerParameters(command=sys.executable, args=["-m", "crib_plugin", "mcp"], env=server_env(tmp_path), cwd=str(tmp_path))


async def call(client: ClientSession, tool: str, **arguments: Any) -> Any:
    """A tool's structured result; fails the test on a tool error."""
    result = await client.call_tool(tool, arguments)
    assert not result.is_error, (tool, arguments, result.content)
    if result.structured_content is not None:
        data = result.structured_content
        return data["result"] if set(data) == {"result"} else data
    return result.content[0].text


async def error_of(client: ClientSession, tool: str, **arguments: Any) -> str:
    result = await client.call_tool(tool, arguments)
    assert result.is_error, (tool, arguments, result.content)
    text = result.content[0].text
    assert "Traceback" not in text
    return text


def run(coro: Any) -> Any:
    return anyio.run(lambda: coro)


def test_tools_are_listed_with_descriptions_for_a_model_and_their_annotations(tmp_path: Path) -> None:
    async def scenario() -> dict[str, Any]:
        async with session(crib_server(tmp_path)) as client:
            return {t.name: t for t in (await client.list_tools()).tools}

    tools = run(scenario())
    assert set(tools) == TOOLS
    for name in ("recall", "search", "show", "manifest", "grep", "list_memories"):
        assert tools[name].annotations.read_only_hint is True, name
    assert tools["forget"].annotations.destructive_hint is True and tools["forget"].annotations.read_only_hint is False
    for name in ("remember", "correct"):
        assert tools[name].annotations.read_only_hint is False and tools[name].annotations.destructive_hint is False
    for tool in tools.values():
        assert len(tool.description or "") > 200, tool.name  # when to call, what to pass, what comes back
    remember = tools["remember"].description
    for word in ("decision", "error", "correction", "preference", "note", "secrets", "Returns"):
        assert word in remember
    skill = (ROOT / "skills" / "crib-memory" / "SKILL.md").read_text(encoding="utf-8")
    for name in TOOLS:
        assert f"`{name}(" in skill, f"the skill does not explain the {name} tool"
    assert set(tools["remember"].input_schema["properties"]) == {"text", "type", "scope", "when"}
    assert "situations" in remember  # the recall cue is explained to the model
    assert tools["remember"].input_schema["properties"]["scope"]["enum"] == ["project", "global"]


@pytest.mark.slow
def test_store_recall_correct_and_forget_through_the_client(tmp_path: Path) -> None:
    async def scenario() -> None:
        async with session(crib_server(tmp_path)) as client:
            stored = await call(client, "remember", text="Chose SQLite over Postgres for the cache service because it must run offline.", type="decision")
            assert stored["type"] == "decision" and stored["scope"] == "project" and stored["duplicate"] is False
            again = await call(client, "remember", text="Chose SQLite over Postgres for the cache service because it must run offline.", type="decision")
            assert again["id"] == stored["id"] and again["duplicate"] is True
            pref = await call(client, "remember", text="The user wants commit messages in the imperative mood.", type="preference", scope="global")
            assert pref["scope"] == "global"

            block = await call(client, "recall", query="which database does the cache service use?")
            assert block.startswith("<memory-context") and "Chose SQLite over Postgres" in block
            nothing = await call(client, "recall", query="zebra migration patterns in the Serengeti")
            assert "<memory-context" not in nothing

            hits = (await call(client, "search", query="cache service database"))["hits"]
            assert hits[0]["id"] == stored["id"] and hits[0]["scope"] == "project"

            fixed = await call(client, "correct", id=stored["id"], text="The cache service moved to Postgres in November: offline mode was dropped.")
            assert fixed["corrects"] == stored["id"] and fixed["id"] != stored["id"]
            listed = await call(client, "list_memories", scope="project")
            by_id = {e["id"]: e for e in listed}
            assert by_id[stored["id"]]["superseded_by"] == fixed["id"] and by_id[fixed["id"]]["type"] == "correction"
            block = await call(client, "recall", query="which database does the cache service use?")
            assert "moved to Postgres" in block
            if "Chose SQLite" in block:  # history may come along, but the corrected text comes first
                assert block.index("moved to Postgres") < block.index("Chose SQLite")
            prefs = await call(client, "list_memories", type="preference")
            assert [p["content"] for p in prefs] == ["The user wants commit messages in the imperative mood."]
            assert prefs[0]["scope"] == "global"

            gone = await call(client, "forget", ids=[fixed["id"], 999])
            assert gone == {"forgotten": [fixed["id"]], "not_found": [999]}
            preview = await call(client, "forget", query="SQLite Postgres cache service")
            assert [e["id"] for e in preview["would_forget"]] == [stored["id"]]
            assert any(e["id"] == stored["id"] for e in await call(client, "list_memories", scope="project"))  # a preview deletes nothing
            done = await call(client, "forget", query="SQLite Postgres cache service", confirm=True)
            assert done["forgotten"] == [stored["id"]]
            assert (await call(client, "search", query="cache service database", scope="project"))["hits"] == []

    run(scenario())


def test_hostile_input_gives_tool_errors_and_the_server_keeps_serving(tmp_path: Path) -> None:
    async def scenario() -> None:
        async with session(crib_server(tmp_path)) as client:
            stored = await call(client, "remember", text="The deploy script lives in ops/deploy.sh.")
            assert "limit is 8000" in await error_of(client, "remember", text="x" * 8001)
            assert "NUL" in await error_of(client, "remember", text="a\x00b")
            assert "empty" in await error_of(client, "remember", text="   ")
            assert "unknown entry type" in await error_of(client, "remember", text="fine", type="gossip")
            await error_of(client, "remember", text=5)
            await error_of(client, "remember", text=["a"], scope="everywhere")
            await error_of(client, "remember")
            await error_of(client, "recall", query="q" * 100_000)
            await error_of(client, "search", query="x", limit=10**9)
            await error_of(client, "search", query="x", limit="ten")
            await error_of(client, "forget")
            await error_of(client, "forget", ids="1")
            await error_of(client, "forget", ids=[-3])
            await error_of(client, "forget", ids=list(range(1, 500)))
            assert "positive integers" in await error_of(client, "forget", ids=[2**70])  # beyond SQLite's integers
            assert "12345" in await error_of(client, "correct", id=12345, text="no such memory")
            assert "500-character limit" in await error_of(client, "remember", text="fine", when="w" * 501)
            await error_of(client, "remember", text="fine", when=["a", "list"])
            assert "no entry with id 4242" in await error_of(client, "cue", id=4242, when="anything")
            await error_of(client, "list_memories", since="\x00")
            # the server is still serving, and nothing above wrote or removed anything
            assert [e["id"] for e in await call(client, "list_memories")] == [stored["id"]]

    run(scenario())


def test_a_memory_remembered_with_when_is_recalled_by_a_task_phrased_like_it(tmp_path: Path) -> None:
    """The agent's side of recall cues, through a real MCP client session: each task shares almost
    nothing with its memory's text and is not recalled without a cue (checked first for the second
    one, which gets its cue afterwards through the `cue` tool)."""
    destructive = "When a command is destructive (drops data, deletes resources), show it and wait for an explicit yes."
    berlin = "Time zone for anything scheduled or shown to the user is Europe/Berlin; logs stay in UTC."

    async def scenario() -> None:
        async with session(crib_server(tmp_path)) as client:
            await call(client, "remember", text="Staging nodes shut down at night to save money.", type="decision")
            await call(client, "remember", text="Invoice PDFs are rendered with WeasyPrint.", type="note")
            await call(client, "remember", text=destructive, type="preference",
                       when="dropping a table or database; deleting cloud resources; running a destructive command")
            block = await call(client, "recall", query="drop the old usage_hourly table in staging")
            assert "explicit yes" in block and "dropping a table" not in block  # found by its cue, which is never shown
            late = await call(client, "remember", text=berlin, type="preference")
            prompt = "schedule the weekly digest email for 8 in the morning"
            assert "Europe/Berlin" not in await call(client, "recall", query=prompt)
            when = "scheduling a job or reminder at a time of day; cron expressions; choosing a time zone"
            done = await call(client, "cue", id=late["id"], when=when)
            assert done == {"id": late["id"], "when": when, "embedded": True}
            assert "Europe/Berlin" in await call(client, "recall", query=prompt)

    run(scenario())


@pytest.mark.parametrize("command", [["hook", "user-prompt-submit"], ["retrieve"], ["hook", "message-display"]])
def test_the_per_prompt_commands_never_import_mcp(command: list[str], crib: Any, tmp_path: Path) -> None:
    crib("write", input="type=decision Chose SQLite for storage.")
    result = subprocess.run(
        [sys.executable, "-X", "importtime", "-m", "crib_plugin", *command],
        input='{"session_id":"s","prompt":"which database?","message_id":"m","delta":"<memory>x","final":false}',
        capture_output=True, text=True, env={**os.environ, "CRIB_HOOK_TIMEOUT": "60"}, timeout=120,
    )
    modules = [line.rsplit("|", 1)[-1].strip() for line in result.stderr.splitlines() if line.startswith("import time:")]
    assert "crib_plugin.hosts.claude" in modules or "crib_plugin.hosts.cli.hotpath" in modules
    assert not [m for m in modules if m == "mcp" or m.startswith("mcp.")]
