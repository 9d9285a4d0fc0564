"""Unit tests of ``crib doctor``'s report (in process)."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from click.testing import CliRunner

from crib_plugin import Memory
from crib_plugin.hosts.doctor import run_doctor


def test_a_missing_database_is_reported_not_created(db: Path) -> None:
    report = run_doctor()
    assert report["database"] == {"path": str(db), "exists": False, "ok": True}
    assert not db.exists()
    assert report["python"]["ok"] and report["sqlite"]["fts5"] and report["sqlite"]["ok"]
    assert report["extractor"] == {"name": "rules", "model": None, "ok": True}  # CRIB_EXTRACTOR=rules in tests
    assert report["ollama"]["reachable"] is False and report["ollama"]["required"] is False


def test_an_existing_database_is_described(db: Path, fake_embedder: type) -> None:
    with Memory(db) as memory:
        memory.write("Chose SQLite for storage.")
    report = run_doctor()
    assert report["database"]["entries"] == 1 and report["database"]["embedder"] == "fake"
    assert report["database"]["vector_spaces"] and report["database"]["pending_embeddings"] == 0
    assert report["database"]["with_cue"] == 0 and "cue_writer" not in report  # no cue model: nothing probed


def test_a_cue_model_is_reported_with_whether_ollama_serves_it(fake_ollama_env: object, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("CRIB_CUE_MODEL", "gemma3:1b")
    assert run_doctor()["cue_writer"] == {"model": "gemma3:1b", "available": True, "ok": True}
    monkeypatch.setenv("CRIB_CUE_MODEL", "no-such-model")
    report = run_doctor()
    assert report["cue_writer"]["available"] is False and report["cue_writer"]["ok"] is True  # opt-in: not a failure


def test_a_judge_model_is_reported_with_whether_ollama_serves_it(fake_ollama_env: object, monkeypatch: pytest.MonkeyPatch) -> None:
    assert "judge" not in run_doctor()  # off by default: nothing probed
    monkeypatch.setenv("CRIB_JUDGE_MODEL", "gemma3:1b")
    assert run_doctor()["judge"] == {"name": "ollama", "model": "gemma3:1b", "available": True, "ok": True}
    monkeypatch.setenv("CRIB_JUDGE_MODEL", "no-such-model")
    assert run_doctor()["judge"]["available"] is False


def test_ok_is_false_when_a_section_fails(db: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    from crib_plugin.hosts import doctor

    monkeypatch.setattr(doctor, "sqlite_capabilities", lambda: {"fts5": True, "trigram": True, "sqlite_vec": False})
    report = run_doctor()
    assert report["sqlite"]["ok"] is False and report["ok"] is False


def test_crib_doctor_prints_json_and_exits_by_ok(db: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    from crib_plugin.hosts.cli.app import cli

    monkeypatch.setattr("crib_plugin.hosts.cli.admin.run_doctor", lambda: {"ok": False, "x": {"ok": False}})
    result = CliRunner().invoke(cli, ["doctor"])
    assert result.exit_code == 1 and json.loads(result.output)["ok"] is False


@pytest.mark.parametrize("text", ["budget = [unclosed\n", 'budget = "lots"\n', "no_such_setting = 1\n"])
def test_a_broken_config_file_is_a_failed_check(db: Path, crib, text: str) -> None:
    """``crib doctor`` with a config file it cannot use prints its JSON report, ``ok`` false and
    the reason under ``config``, and exits 1 (it was a bare error line before, with no report)."""
    import os

    folder = Path(os.environ["XDG_CONFIG_HOME"]) / "crib"
    folder.mkdir(parents=True, exist_ok=True)
    (folder / "config.toml").write_text(text, encoding="utf-8")
    result = crib("doctor")
    assert result.returncode == 1
    report = json.loads(result.stdout)
    assert report["ok"] is False and report["config"]["ok"] is False
    assert "config.toml" in report["config"]["error"]


def test_a_damaged_vector_table_makes_the_doctor_not_ok(db: Path, fake_embedder: type) -> None:
    """A page in the middle of a vector table's data overwritten (a disk fault, a bad copy):
    opening the store and counting its entries never reads it, so crib doctor reads every page
    once (``PRAGMA quick_check``) and says the store is damaged."""
    with Memory(db) as memory:
        for i in range(40):
            memory.write(f"note {i}: the nightly job {i} moved to the queue")
        memory.store.execute("PRAGMA wal_checkpoint(TRUNCATE)")
        page_size = int(memory.store.execute("PRAGMA page_size")[0][0])
        pages = memory.store.execute(
            "SELECT pageno FROM dbstat WHERE name LIKE 'vec%' AND pagetype = 'overflow' ORDER BY pageno")
    assert len(pages) > 2, "a vector table whose data spans overflow pages"
    assert run_doctor()["database"]["ok"] is True
    with open(db, "r+b") as handle:
        handle.seek((int(pages[len(pages) // 2][0]) - 1) * page_size)
        handle.write(b"\xff\xff\xff\x7f")  # the overflow chain's next-page pointer, past the file's end
    report = run_doctor()
    assert report["ok"] is False and report["database"]["ok"] is False
    assert "damaged" in report["database"]["error"]
