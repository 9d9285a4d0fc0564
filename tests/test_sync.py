"""``crib sync``: the hosts' own memory files (CLAUDE.md, AGENTS.md, GEMINI.md, Claude Code's auto
memory) brought into crib and kept in step — a changed line corrects its memory, a removed line is
superseded, a memory the user forgot in crib is not brought back — and never written to."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest
from click.testing import CliRunner

from crib_plugin.hosts.cli.app import cli
from crib_plugin.hosts.host_memories import claude_project_folder, project_memories

FIRST = "# Testing\n\n- Use pytest with -n auto.\n- The DB tests need PostgreSQL 16.\n\n# Style\n\n- Prefer dataclasses over dicts.\n"
SECOND = "# Testing\n\n- Use pytest with -n 2.\n- The DB tests need PostgreSQL 16.\n\n# Deploy\n\n- Deploy with make ship.\n"


def invoke(*args: str) -> Any:
    result = CliRunner().invoke(cli, list(args), catch_exceptions=False)
    assert result.exit_code == 0, result.output
    return result


def sync(path: Path) -> dict[str, Any]:
    return json.loads(invoke("sync", str(path), "--json").output)


def current(db: Path) -> dict[str, int]:
    rows = json.loads(invoke("list", "--json", "--limit", "0").output)
    return {r["content"]: r["id"] for r in rows if not r.get("superseded_by")}


def test_a_changed_line_corrects_a_removed_one_is_superseded_and_a_rerun_changes_nothing(db: Path, tmp_path: Path) -> None:
    memo = tmp_path / "CLAUDE.md"
    memo.write_text(FIRST, encoding="utf-8")
    assert sync(memo)["added"] == 3
    old = current(db)
    memo.write_text(SECOND, encoding="utf-8")
    report = sync(memo)
    assert (report["added"], report["updated"], report["removed"], report["unchanged"]) == (1, 1, 1, 1)
    now = current(db)
    assert "Testing: Use pytest with -n 2." in now and "Testing: Use pytest with -n auto." not in now
    assert "Style: Prefer dataclasses over dicts." not in now
    assert any(text.startswith("No longer in CLAUDE.md") and "dataclasses" in text for text in now)
    shown = json.loads(invoke("show", str(old["Testing: Use pytest with -n auto."]), "--json").output)
    assert "-n 2" in json.dumps(shown)  # the history keeps both: the old text is corrected, not lost
    block = invoke("retrieve", "how do I run pytest, -n auto or -n 2?").output
    entries = [line for line in block.splitlines() if line.startswith("- [")]
    assert any("Use pytest with -n 2." in line and "superseded" not in line for line in entries), block
    assert all("superseded" in line for line in entries if "-n auto" in line), block  # shown, if at all, as history
    again = sync(memo)
    assert (again["added"], again["updated"], again["removed"], again["unchanged"]) == (0, 0, 0, 3)
    assert memo.read_text(encoding="utf-8") == SECOND  # the host's file is only read


def test_a_memory_forgotten_in_crib_is_not_brought_back(db: Path, tmp_path: Path) -> None:
    memo = tmp_path / "AGENTS.md"
    memo.write_text(FIRST, encoding="utf-8")
    sync(memo)
    gone = current(db)["Style: Prefer dataclasses over dicts."]
    invoke("forget", str(gone), "--yes")
    report = sync(memo)
    assert report["forgotten"] == 1 and report["added"] == 0
    assert "Style: Prefer dataclasses over dicts." not in current(db)


def test_a_file_that_disappeared_is_skipped_not_emptied(db: Path, tmp_path: Path) -> None:
    memo = tmp_path / "GEMINI.md"
    memo.write_text(FIRST, encoding="utf-8")
    sync(memo)
    memo.unlink()
    assert sync(memo)["missing"] is True
    assert len(current(db)) == 3


def test_without_paths_it_finds_the_repository_files_and_claude_code_auto_memory(db: Path, tmp_path: Path,
                                                                                  monkeypatch: pytest.MonkeyPatch) -> None:
    repo = tmp_path / "repo"
    (repo / ".git").mkdir(parents=True)
    (repo / "AGENTS.md").write_text("- Run make lint before pushing.\n", encoding="utf-8")
    home = tmp_path / "home"
    auto = claude_project_folder(repo, home) / "memory"
    auto.mkdir(parents=True)
    (auto / "MEMORY.md").write_text("- The user prefers short answers.\n", encoding="utf-8")
    monkeypatch.setenv("HOME", str(home))
    monkeypatch.chdir(repo)
    assert [(m.path.name, m.host) for m in project_memories()] == [("AGENTS.md", "agents"), ("MEMORY.md", "claude")]
    out = invoke("sync").output
    assert "AGENTS.md: 1 added" in out and "MEMORY.md: 1 added" in out
    assert {"Run make lint before pushing.", "The user prefers short answers."} <= set(current(db))
