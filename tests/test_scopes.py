"""Scopes: the project store at the repository root, the global store, and reads across both.

Real ``git init`` repositories in tmp_path; the CLI runs in process (click's CliRunner).
"""

from __future__ import annotations

import json
import os
import subprocess
from pathlib import Path
from typing import Any

import pytest
from click.testing import CliRunner

from crib_plugin.hosts.cli.app import cli
from crib_plugin.scopes import global_db, project_db, repo_root, stores_in_use, user_data_dir

GIT_ENV = {"GIT_AUTHOR_NAME": "t", "GIT_AUTHOR_EMAIL": "t@example.com", "GIT_COMMITTER_NAME": "t", "GIT_COMMITTER_EMAIL": "t@example.com"}


def git(cwd: Path, *args: str) -> str:
    env = {**os.environ, **GIT_ENV}
    return subprocess.run(["git", *args], cwd=cwd, env=env, check=True, capture_output=True, text=True).stdout


def make_repo(path: Path) -> Path:
    path.mkdir(parents=True)
    git(path, "init", "-q")
    (path / "README.md").write_text("hello\n")
    git(path, "add", "README.md")
    git(path, "commit", "-q", "-m", "init")
    return path


@pytest.fixture
def repos(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> tuple[Path, Path]:
    monkeypatch.delenv("CRIB_DB", raising=False)  # the default rule, not the test fixture's file
    return make_repo(tmp_path / "repo-a"), make_repo(tmp_path / "repo-b")


def run(monkeypatch: pytest.MonkeyPatch, cwd: Path, *args: str, input: str | None = None) -> Any:
    monkeypatch.chdir(cwd)
    result = CliRunner().invoke(cli, list(args), input=input, catch_exceptions=False)
    assert result.exit_code == 0, result.output
    return result


def test_repo_a_memory_never_appears_in_repo_b(repos: tuple[Path, Path], monkeypatch: pytest.MonkeyPatch) -> None:
    a, b = repos
    run(monkeypatch, a, "write", "type=decision We chose Kafka for the order event bus because of replay")
    assert (a / ".state" / "crib" / "crib.db").exists()
    found_in_a = run(monkeypatch, a, "search", "Kafka event bus", "--json").output
    assert "Kafka" in found_in_a
    assert run(monkeypatch, b, "retrieve", "which event bus did we choose, Kafka?").output == ""
    assert json.loads(run(monkeypatch, b, "list", "--json").output) == []
    assert not (b / ".state").exists()  # reading never creates a store
    run(monkeypatch, b, "write", "type=decision We chose RabbitMQ for the order event bus")
    hits = [json.loads(line) for line in run(monkeypatch, b, "search", "Kafka RabbitMQ event bus", "--json").output.splitlines()]
    assert hits and all("Kafka" not in h["content"] for h in hits)
    assert "Kafka" not in run(monkeypatch, b, "retrieve", "which event bus did we choose, Kafka?").output
    assert [r["content"] for r in json.loads(run(monkeypatch, b, "list", "--json").output)] == ["We chose RabbitMQ for the order event bus"]


def test_global_preference_appears_in_both_repositories(repos: tuple[Path, Path], monkeypatch: pytest.MonkeyPatch) -> None:
    a, b = repos
    out = run(monkeypatch, a, "write", "--global", "I prefer tabs over spaces for indentation in Python files").output
    assert "(global)" in out
    run(monkeypatch, a, "write", "type=decision The billing service retries Stripe webhooks three times")
    for repo in (a, b):
        block = run(monkeypatch, repo, "retrieve", "tabs or spaces for indentation in Python files?").output
        assert "I prefer tabs over spaces" in block, repo
        hits = [json.loads(line) for line in run(monkeypatch, repo, "search", "tabs spaces indentation", "--json").output.splitlines()]
        assert hits and hits[0]["scope"] == "global"
    # in A both stores answer: each memory is marked with its scope
    block = run(monkeypatch, a, "retrieve", "Stripe webhooks retries and tabs or spaces indentation").output
    assert " global]" in block and " project]" in block
    assert not (b / ".state").exists()  # B read the global store only


def test_project_only_block_is_unchanged(repos: tuple[Path, Path], monkeypatch: pytest.MonkeyPatch) -> None:
    a, _ = repos
    run(monkeypatch, a, "write", "type=decision The billing service retries Stripe webhooks three times")
    block = run(monkeypatch, a, "retrieve", "How often are Stripe webhooks retried?").output
    assert "[" in block and "decision]" in block and "project]" not in block


def test_subdirectory_uses_the_repository_store(repos: tuple[Path, Path], monkeypatch: pytest.MonkeyPatch) -> None:
    a, _ = repos
    deep = a / "src" / "pkg" / "deep"
    deep.mkdir(parents=True)
    run(monkeypatch, deep, "write", "type=error ImportError in pkg.deep fixed by adding __init__.py")
    assert not (deep / ".state").exists()
    assert (a / ".state" / "crib" / "crib.db").exists()
    rows = json.loads(run(monkeypatch, a, "list", "--json").output)
    assert [r["content"] for r in rows] == ["ImportError in pkg.deep fixed by adding __init__.py"]
    assert project_db(deep) == a / ".state" / "crib" / "crib.db"


def test_worktree_shares_the_main_repository_store(repos: tuple[Path, Path], tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    a, _ = repos
    tree = tmp_path / "a-feature"
    git(a, "worktree", "add", "-q", "-b", "feature", str(tree))
    assert repo_root(tree / "") == a
    sub = tree / "lib"
    sub.mkdir()
    run(monkeypatch, sub, "write", "type=decision Feature branch uses the new retry policy")
    assert not (tree / ".state").exists()
    rows = json.loads(run(monkeypatch, a, "list", "--json").output)
    assert rows and rows[0]["content"] == "Feature branch uses the new retry policy"
    assert git(tree, "status", "--porcelain") == ""


def test_git_status_shows_nothing_new_after_a_write(repos: tuple[Path, Path], monkeypatch: pytest.MonkeyPatch) -> None:
    a, _ = repos
    run(monkeypatch, a, "write", "type=note The staging database is reset every Monday")
    assert (a / ".state" / "crib" / ".gitignore").read_text().strip().endswith("*")
    assert git(a, "status", "--porcelain", "--untracked-files=all") == ""


def test_session_state_folder_is_ignored_too(repos: tuple[Path, Path]) -> None:
    from crib_plugin.hosts.claude import SessionState

    a, _ = repos
    state = SessionState.for_session(project_db(a), "session-1")
    state.entries = {1}
    state.save()
    assert state.path is not None and state.path.exists()
    assert git(a, "status", "--porcelain", "--untracked-files=all") == ""


def test_crib_db_still_names_the_project_store(repos: tuple[Path, Path], tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    a, _ = repos
    explicit = tmp_path / "elsewhere" / "mine.db"
    monkeypatch.setenv("CRIB_DB", str(explicit))
    run(monkeypatch, a, "write", "a note kept where CRIB_DB says")
    assert explicit.exists() and not (a / ".state").exists()
    assert not (explicit.parent / ".gitignore").exists()  # a user's folder is left alone


def test_outside_git_the_store_is_under_the_current_directory(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delenv("CRIB_DB", raising=False)
    plain = tmp_path / "plain"
    plain.mkdir()
    if repo_root(plain) is not None:
        pytest.skip("tmp_path is inside a git repository")
    assert project_db(plain) == plain / ".state" / "crib" / "crib.db"


def test_global_store_location(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
    import platformdirs

    monkeypatch.delenv("CRIB_GLOBAL_DB", raising=False)
    assert user_data_dir() == Path(platformdirs.user_data_dir("crib", appauthor=False))
    assert global_db() == user_data_dir() / "crib.db"
    monkeypatch.setenv("XDG_DATA_HOME", str(tmp_path / "xdg"))
    assert user_data_dir() == Path(platformdirs.user_data_dir("crib", appauthor=False))
    monkeypatch.setenv("CRIB_GLOBAL_DB", str(tmp_path / "g.db"))
    assert global_db() == tmp_path / "g.db"


def test_where_lists_both_stores(repos: tuple[Path, Path], monkeypatch: pytest.MonkeyPatch) -> None:
    a, _ = repos
    run(monkeypatch, a, "write", "a project note about the deploy script")
    rows = json.loads(run(monkeypatch, a / "", "where", "--json").output)
    assert [r["scope"] for r in rows] == ["project", "global"]
    assert rows[0]["path"] == str(a / ".state" / "crib" / "crib.db") and rows[0]["entries"] == 1
    assert rows[1]["exists"] is False and rows[1]["entries"] is None
    assert [s.name for s in stores_in_use(a)] == ["project", "global"]
    text = run(monkeypatch, a, "where").output
    assert "not created yet" in text and "1 entries" in text


def hook_context(repo: Path, prompt: str, session: str) -> str:
    import io

    from crib_plugin.hosts import claude

    payload = json.dumps({"session_id": session, "hook_event_name": "UserPromptSubmit", "prompt": prompt, "cwd": str(repo)})
    out = io.StringIO()
    assert claude.run_hook("user-prompt-submit", stdin=io.StringIO(payload), stdout=out, own_process=False) == 0
    return json.loads(out.getvalue())["hookSpecificOutput"]["additionalContext"] if out.getvalue() else ""


def test_prompt_hook_reads_both_stores_and_never_repeats(repos: tuple[Path, Path], monkeypatch: pytest.MonkeyPatch) -> None:
    a, b = repos
    monkeypatch.setenv("CRIB_HOOK_TIMEOUT", "60")
    run(monkeypatch, a, "write", "--global", "I prefer tabs over spaces for indentation in Python files")
    run(monkeypatch, a, "write", "type=decision Python files in this repository are formatted with black")
    prompt = "how should Python files be formatted, tabs or spaces for indentation?"
    monkeypatch.chdir(b)
    in_b = hook_context(b, prompt, "s-b")  # B has no store of its own: the global one alone
    assert "I prefer tabs over spaces" in in_b and not (b / ".state" / "crib" / "crib.db").exists()
    first = hook_context(a, prompt, "s-a")
    assert "I prefer tabs over spaces" in first and "formatted with black" in first
    assert " global]" in first and " project]" in first
    assert hook_context(a, prompt, "s-a") == ""  # both already injected in this session: nothing again
    assert git(a, "status", "--porcelain", "--untracked-files=all") == ""
    assert git(b, "status", "--porcelain", "--untracked-files=all") == ""


def test_python_api_for_hosts(repos: tuple[Path, Path], monkeypatch: pytest.MonkeyPatch) -> None:
    from crib_plugin.hosts import scoped
    from crib_plugin.scopes import list_scoped, open_scope

    a, _ = repos
    with open_scope("global") as memory:
        memory.write("I prefer squash merges for feature branches")
    with open_scope("project", cwd=a / "") as memory:
        memory.write("type=decision Feature branches are merged after two approvals")
    hits = scoped.search("feature branches merged", cwd=a)
    assert {h["scope"] for h in hits} == {"project", "global"}
    block = scoped.retrieve("how are feature branches merged?", cwd=a)
    assert "squash merges" in block and "two approvals" in block
    monkeypatch.chdir(a)
    rows = list_scoped("all")
    assert sorted(r["scope"] for r in rows) == ["global", "project"]
