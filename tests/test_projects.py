"""One store shared by several projects (a team's server) answers for one project or for all.

Each entry records the repository it was written from (``entries.project``; the folder's name
outside a repository); ``CRIB_PROJECTS`` = ``this`` / a name / ``all`` restricts ``retrieve``,
``search``, ``list`` and ``log``. Runs on SQLite here and on PostgreSQL in
``tests/test_postgres_behaviour.py``; the store-level part is in the contract suite.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest


def _write_from(folder: Path, text: str, crib: Any, monkeypatch: pytest.MonkeyPatch) -> None:
    folder.mkdir(exist_ok=True)
    monkeypatch.chdir(folder)
    result = crib("write", text)
    assert result.returncode == 0, result.stderr


def test_a_shared_store_answers_for_one_project_or_all(db: Any, tmp_path: Path, crib: Any, monkeypatch: pytest.MonkeyPatch) -> None:
    _write_from(tmp_path / "alpha", "type=decision Alpha deploys with Helm charts.", crib, monkeypatch)
    _write_from(tmp_path / "beta", "type=decision Beta deploys with Terraform modules.", crib, monkeypatch)

    def contents(*args: str, projects: str | None = None, prompt: str | None = None) -> str:
        env = {"CRIB_PROJECTS": projects} if projects else {}
        result = crib(*args, input=prompt, env=env)
        assert result.returncode == 0, result.stderr
        return result.stdout

    everything = contents("search", "deploys")
    assert "Helm" in everything and "Terraform" in everything  # the default: every project's
    for projects in ("this", "beta"):  # from beta's folder
        assert "Helm" not in contents("search", "deploys", projects=projects)
        assert "Terraform" in contents("search", "deploys", projects=projects)
        block = contents("retrieve", projects=projects, prompt="how do we deploy?")
        assert "Terraform" in block and "Helm" not in block
        listed = contents("list", projects=projects)
        assert "Terraform" in listed and "Helm" not in listed
        rows = json.loads(contents("log", "--json", projects=projects))
        assert {row["detail"].get("project") for row in rows if row["action"] == "write"} == {"beta"}
    alpha = contents("search", "deploys", projects="alpha")
    assert "Helm" in alpha and "Terraform" not in alpha


def test_a_time_window_prompt_answers_for_one_project(db: Any, tmp_path: Path, crib: Any, monkeypatch: pytest.MonkeyPatch) -> None:
    """Entries a prompt's time window adds below the vector floor ("what did we decide today?")
    obey ``CRIB_PROJECTS`` as the fused hits do."""
    _write_from(tmp_path / "alpha", "type=decision Alpha pins its Postgres minor version.", crib, monkeypatch)
    _write_from(tmp_path / "beta", "type=decision Beta rotates its API keys monthly.", crib, monkeypatch)
    everything = crib("retrieve", input="what did we decide today?")
    assert "Postgres" in everything.stdout and "rotates" in everything.stdout  # the window opened for both
    block = crib("retrieve", input="what did we decide today?", env={"CRIB_PROJECTS": "this"})
    assert block.returncode == 0, block.stderr
    assert "rotates" in block.stdout and "Postgres" not in block.stdout


def test_another_project_s_correction_is_not_injected_with_this_project_s_memory(
    db: Any, tmp_path: Path, crib: Any, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A successor obeys ``CRIB_PROJECTS`` as the hits do: beta's correction of alpha's memory is
    beta's business — under ``this`` alpha's block neither shows it nor marks its own memory
    superseded; under ``all`` the correction comes with it."""
    _write_from(tmp_path / "alpha", "type=decision The deploy timeout for the gateway is 30 seconds.", crib, monkeypatch)
    _write_from(tmp_path / "beta", "Beta builds with Bazel.", crib, monkeypatch)  # from beta's folder:
    fixed = crib("correct", "1", "The deploy timeout for the gateway is 90 seconds, raised for the slow canary.")
    assert fixed.returncode == 0, fixed.stderr
    monkeypatch.chdir(tmp_path / "alpha")
    prompt = "what is the deploy timeout for the gateway?"
    mine = crib("retrieve", input=prompt, env={"CRIB_PROJECTS": "this"})
    assert mine.returncode == 0, mine.stderr
    assert "30 seconds" in mine.stdout and "90 seconds" not in mine.stdout and "canary" not in mine.stdout
    assert "superseded" not in mine.stdout.lower()
    everyone = crib("retrieve", input=prompt)
    assert "90 seconds" in everyone.stdout  # every project's: the correction is shown with it
