"""One headless session per agent host with the real CLI — Codex CLI, Claude Code, Gemini CLI,
opencode, in that order, in one repository — each against a loopback stand-in of its model API
(tests/fake_models.py, tests/fake_anthropic.py), crib wired in with ``crib setup HOST`` in a
throwaway HOME.

Each session's scripted model stores a memory with crib's ``remember`` MCP tool, then answers with
ordinary text around an echoed memory block split across streamed chunks. From the stand-in's
request log and the CLI's output the tests check, per host: crib's block reached the model (the
standing memories and the prompt's block), crib's tools were offered, the ``remember`` call landed
in the repository's store (its audit row naming the host), and — Gemini, opencode — the memory
block is gone from what the CLI printed while ordinary text (``#include <memory>``) is untouched.
Across hosts: what Codex stored is in Claude Code's next prompt block, and what Claude Code stored
comes back in Gemini CLI's.

Each CLI skips when it is not installed (``.ci/run`` installs them from npm and sets
``CRIB_CODEX_BIN``, ``CRIB_GEMINI_BIN``, ``CRIB_OPENCODE_BIN``, ``CRIB_CLAUDE_BIN``).
"""

from __future__ import annotations

import json
import os
import re
import shutil
import subprocess
import sys
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import pytest
from claude_cli import CLAUDE
from fake_anthropic import FakeAnthropic, ToolCall, text_of, tool_results
from fake_models import FakeChat, FakeGemini, FakeResponses

pytestmark = pytest.mark.xdist_group("test_host_cli_sessions")  # one module fixture: the sessions run in order


def _bin(var: str, name: str) -> str | None:
    given = os.environ.get(var, "")
    return given if given and os.access(given, os.X_OK) else shutil.which(name)


BINS = {"codex": _bin("CRIB_CODEX_BIN", "codex"), "claude": CLAUDE, "gemini": _bin("CRIB_GEMINI_BIN", "gemini"),
        "opencode": _bin("CRIB_OPENCODE_BIN", "opencode")}

DECISION = "We chose SQLite for the invoice store because it is one file to back up"
PROMPT = "which database holds the invoices?"
LEARNED = {  # each bears on PROMPT, so the next host's prompt block carries it
    "codex": "Codex learned: the invoices database is backed up hourly to the shop-backups bucket",
    "claude": "Claude decided: the invoices database file stays at data/invoices.sqlite, since backups expect that path",
    "gemini": "Gemini learned: the invoices database is opened in WAL mode by billing/db.py",
    "opencode": "opencode learned: the invoices database stores totals in cents as integers",
}
ORDINARY = "Use `#include <memory>` and Vec<Memory> as before."
ECHO = [ORDINARY + " <memory-con", 'text context_time="2026-11-20T12:00:00Z">echoed SECRETWORD', " memory</memory-", "context> Done."]
SHOWN = ORDINARY + "  Done."


@dataclass
class Session:
    """What one host's session left: its stand-in's requests, the CLI's output."""

    requests: list[dict[str, Any]]
    stdout: str
    stderr: str
    returncode: int

    def text(self, index: int) -> str:
        return json.dumps(self.requests[index], ensure_ascii=False)


@dataclass
class World:
    home: Path
    project: Path
    env: dict[str, str]
    sessions: dict[str, Session] = field(default_factory=dict)

    def crib(self, *args: str) -> str:
        done = subprocess.run([sys.executable, "-m", "crib_plugin", *args], capture_output=True, text=True, env=self.env,
                              cwd=str(self.project), timeout=120)
        assert done.returncode == 0, done.stderr
        return done.stdout

    def run(self, host: str, argv: list[str], extra: dict[str, str]) -> subprocess.CompletedProcess[str]:
        return subprocess.run(argv, capture_output=True, text=True, env={**self.env, **extra}, cwd=str(self.project), timeout=300)


def _script(host: str, tool: str, is_main: Any = lambda body: True) -> Any:
    """The model: first main-loop call stores ``LEARNED[host]`` with ``tool``, every later one echoes."""
    calls = {"n": 0}

    def reply(body: dict[str, Any]) -> Any:
        if not is_main(body):
            return "Invoice database"  # opencode's title call
        calls["n"] += 1
        if calls["n"] == 1:
            return ToolCall(tool, {"text": LEARNED[host], "type": "note", "when": "changing how invoices work"})
        return list(ECHO)
    return reply


def _codex(world: World) -> Session:
    assert '[plugins."crib@crib"]' in (world.home / ".codex" / "config.toml").read_text()  # wired as a Codex plugin
    with FakeResponses(_script("codex", "mcp__crib__remember")) as model:
        config = world.home / ".codex" / "config.toml"
        provider = (f'model = "fake-model"\nmodel_provider = "fake"\n[model_providers.fake]\nname = "fake"\n'
                    f'base_url = "{model.url}/v1"\nenv_key = "FAKE_KEY"\nwire_api = "responses"\n\n')
        config.write_text(provider + config.read_text())
        done = world.run("codex", [BINS["codex"] or "", "exec", "--dangerously-bypass-hook-trust", "--skip-git-repo-check",
                                   "--dangerously-bypass-approvals-and-sandbox", PROMPT], {"FAKE_KEY": "x"})
    return Session(model.requests, done.stdout, done.stderr, done.returncode)


def _claude(world: World) -> Session:
    def reply(body: dict[str, Any]) -> Any:
        if not tool_results(body):
            return ToolCall("mcp__crib__remember", {"text": LEARNED["claude"], "type": "decision", "when": "working on invoices"})
        return "Stored."
    with FakeAnthropic(reply) as model:
        done = world.run("claude", [BINS["claude"] or "", "-p", PROMPT, "--allowedTools", "mcp__crib__remember"],
                         {"ANTHROPIC_BASE_URL": model.url, "ANTHROPIC_API_KEY": "sk-ant-test", "DISABLE_TELEMETRY": "1",
                          "CLAUDE_CODE_DISABLE_NONESSENTIAL_TRAFFIC": "1", "DISABLE_ERROR_REPORTING": "1", "DISABLE_AUTOUPDATER": "1"})
    return Session(model.requests, done.stdout, done.stderr, done.returncode)


def _gemini(world: World) -> Session:
    (world.home / ".gemini" / "settings.json").write_text(json.dumps({"security": {"auth": {"selectedType": "gemini-api-key"}}}))
    with FakeGemini(_script("gemini", "mcp_crib_remember")) as model:
        done = world.run("gemini", [BINS["gemini"] or "", "--skip-trust", "-m", "gemini-2.5-flash", "--approval-mode", "yolo", "-p", PROMPT],
                         {"GEMINI_API_KEY": "x", "GOOGLE_GEMINI_BASE_URL": model.url})
    return Session(model.requests, done.stdout, done.stderr, done.returncode)


def _opencode(world: World) -> Session:
    with FakeChat(_script("opencode", "crib_remember", lambda body: bool(body.get("tools")))) as model:
        path = world.home / ".config" / "opencode" / "opencode.json"
        config = json.loads(path.read_text())
        config["provider"] = {"fake": {"npm": "@ai-sdk/openai-compatible", "name": "fake",
                                       "options": {"baseURL": model.url + "/v1", "apiKey": "x"}, "models": {"m": {"name": "m"}}}}
        config["model"] = "fake/m"
        path.write_text(json.dumps(config))
        done = world.run("opencode", [BINS["opencode"] or "", "run", PROMPT],
                         {"PWD": str(world.project), "OPENCODE_DISABLE_MODELS_FETCH": "1", "OPENCODE_DISABLE_AUTOUPDATE": "1"})
    model.requests[:] = [r for r in model.requests if r.get("tools")]  # the session's own calls, not its title call
    return Session(model.requests, done.stdout, done.stderr, done.returncode)


RUN = {"codex": _codex, "claude": _claude, "gemini": _gemini, "opencode": _opencode}


@pytest.fixture(scope="module")
def world(tmp_path_factory: pytest.TempPathFactory) -> World:
    tmp = tmp_path_factory.mktemp("hosts")
    home, project = tmp / "home", tmp / "shop"
    home.mkdir()
    subprocess.run(["git", "init", "-q", str(project)], check=True)
    env = {k: v for k, v in os.environ.items()
           if not k.startswith(("CRIB_", "CLAUDE", "ANTHROPIC", "CODEX", "OPENAI", "GEMINI", "GOOGLE", "OPENCODE", "XDG_"))}
    env.update({"HOME": str(home), "PWD": str(project), "CRIB_GLOBAL_DB": str(tmp / "global.db"), "CRIB_EXTRACTOR": "rules",
                "CRIB_HOOK_TIMEOUT": "60", "CRIB_ERROR_LOG": str(tmp / "crib.log"), "OLLAMA_HOST": "http://127.0.0.1:9",
                "CRIB_CACHE_DIR": str(tmp / "cache")})
    if BINS["codex"]:
        env["CRIB_CODEX_BIN"] = BINS["codex"]  # crib setup codex installs a plugin through codex's own marketplace
    world = World(home, project, env)
    world.crib("write", "--type", "decision", DECISION)
    for host, run in RUN.items():
        if BINS[host] is None:
            continue
        world.crib("setup", host)
        world.sessions[host] = run(world)
    return world


def session(world: World, host: str) -> Session:
    if host not in world.sessions:
        pytest.skip(f"the {host} CLI is not installed (.ci/run installs it from npm)")
    done = world.sessions[host]
    assert done.returncode == 0, done.stdout[-2000:] + done.stderr[-2000:]
    return done


TOOLS = {"codex": "mcp__crib", "claude": "mcp__crib__remember", "gemini": "mcp_crib_remember", "opencode": "crib_remember"}
FILTERS = ("gemini", "opencode")
LABEL = {"codex": "codex", "claude": "claude-code", "gemini": "gemini-cli", "opencode": "opencode"}  # hosts whose output crib filters


@pytest.mark.parametrize("host", list(RUN))
def test_each_host_gets_crib_s_block_and_tools_and_stores_through_them(world: World, host: str) -> None:
    done = session(world, host)
    first = done.text(0)
    assert "crib memory is available" in first  # session start: the standing line
    assert DECISION in first and "<memory-context" in first  # the standing decision / the prompt's block
    assert re.search(r'channels=\\"[^"\\]*fts', first), "the prompt's own block (fts channel) is not in the request"
    assert f'"{TOOLS[host]}"' in first  # crib's MCP tools are offered
    assert LEARNED[host] in world.crib("search", LEARNED[host], "--limit", "3")  # the remember call landed in the store
    rows = json.loads(world.crib("log", "--json", "--limit", "200"))
    assert any(r["action"] == "write" and r["detail"].get("agent") == "mcp" and r["detail"].get("host") == LABEL[host] for r in rows)
    assert "Traceback" not in (world.home.parent / "crib.log").read_text() if (world.home.parent / "crib.log").exists() else True


@pytest.mark.parametrize("host", FILTERS)
def test_the_memory_block_is_gone_from_what_the_cli_prints_and_ordinary_text_is_kept(world: World, host: str) -> None:
    done = session(world, host)
    assert "SECRETWORD" not in done.stdout and "memory-context" not in done.stdout
    assert ORDINARY in done.stdout and "Done." in done.stdout
    assert SHOWN in done.stdout


def test_what_codex_stored_is_in_claude_codes_next_block_and_claude_codes_comes_back_in_gemini(world: World) -> None:
    session(world, "codex")
    claude_session = session(world, "claude")
    context = "\n".join(text_of(m.get("content")) for m in claude_session.requests[0]["messages"])
    assert LEARNED["codex"] in context
    gemini = session(world, "gemini")
    assert LEARNED["claude"] in gemini.text(0)

