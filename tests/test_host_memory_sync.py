"""``crib sync``: the hosts' own memory files (Claude Code's MEMORY.md, AGENTS.md, GEMINI.md,
CLAUDE.md) brought into crib and kept in step: a changed line updates its memory, a removed line's
memory goes, a memory the user forgot in crib is not brought back, the host's file is never touched."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest
from click.testing import CliRunner

from crib_plugin.hosts.cli.app import cli
from crib_plugin.hosts.host_memory import claude_project_slug, host_memory_files


def run(*args: str) -> str:
    done = CliRunner().invoke(cli, list(args))
    assert done.exit_code == 0, done.output
    return done.output


def current(tmp_path: Path) -> dict[str, Any]:
    """Content → entry of every current (not superseded) memory."""
    rows = [json.loads(line) for line in run("export").splitlines() if line.strip()]
    return {r["content"]: r for r in rows}


@pytest.fixture
def repo(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    (tmp_path / ".git").mkdir()
    monkeypatch.setenv("HOME", str(tmp_path / "home"))
    monkeypatch.delenv("CLAUDE_CONFIG_DIR", raising=False)
    return tmp_path


def test_sync_follows_the_file_and_never_brings_back_what_was_forgotten(repo: Path) -> None:
    agents = repo / "AGENTS.md"
    agents.write_text("# Conventions\n\n- Run tests with `make test`.\n- The API listens on port 8080.\n- Commit messages are imperative.\n")
    before = agents.read_text()
    assert "3 added" in run("sync")
    assert agents.read_text() == before  # the host's own memory is never changed
    texts = " ".join(current(repo))
    assert "port 8080" in texts and "make test" in texts
    assert "0 added, 0 updated, 0 removed" in run("sync")  # in step: nothing to do

    agents.write_text("# Conventions\n\n- Run tests with `make test`.\n- The API listens on port 9090.\n")
    out = run("sync")
    assert "0 added, 1 updated, 1 removed" in out, out
    rows = current(repo)
    assert any("port 9090" in c for c in rows) and not any("imperative" in c for c in rows)
    old = next(r for c, r in rows.items() if "port 8080" in c)  # the old version is kept as history
    port = next(r for c, r in rows.items() if "port 9090" in c)
    assert port["metadata"]["corrects"] == old["id"]  # the new version supersedes it

    forgotten = next(r for c, r in rows.items() if "make test" in c)["id"]
    run("forget", str(forgotten), "--yes")
    assert "1 forgotten in crib, not brought back" in run("sync")
    assert not any("make test" in c for c in current(repo))


def test_claude_codes_auto_memory_is_found_for_this_repository(repo: Path) -> None:
    memory = repo / "home" / ".claude" / "projects" / claude_project_slug(repo) / "memory" / "MEMORY.md"
    memory.parent.mkdir(parents=True)
    memory.write_text("- The user prefers uv over pip.\n")
    (repo / "GEMINI.md").write_text("- Gemini: the staging host is staging.example.internal.\n")
    assert set(host_memory_files(repo, repo / "home")) == {memory, repo / "GEMINI.md"}
    out = run("sync")
    assert "MEMORY.md: 1 added" in out and "GEMINI.md: 1 added" in out
    assert {"uv over pip", "staging.example.internal"} <= {w for c in current(repo) for w in ("uv over pip", "staging.example.internal") if w in c}
