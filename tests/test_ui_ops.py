"""The management operations ``crib ui`` uses (``read/ops.py``) on both backends, and the session
journal it reads (``output/session_journal.py``): bounded, local, and marking the pointers an
agent opened between one prompt and the next."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from crib_plugin.hosts.claude.state import MAX_PROMPTS, SessionState
from crib_plugin.output import session_journal as journal
from crib_plugin.read.ops import ListFilter

pytest.importorskip("starlette")
from crib_plugin.hosts.ui.stores import ManagedMemory  # noqa: E402


def _exercise(location: Any) -> None:
    with ManagedMemory(location) as memory:
        first = memory.write("We chose SQLite for the local store", type="decision")
        other = memory.write("The staging cluster is rebuilt every Friday night.")
        assert [r["id"] for r in memory.list_memories(ListFilter(text="staging"))] == [other]
        assert memory.search_memories("SQLite local store")[0]["channels"]
        newer = memory.correct_memory(first, "We chose PostgreSQL for the local store")
        shown = memory.show_memory(first)
        assert [row["id"] for row in shown["history"]] == [first, newer]
        assert any(f["valid_until"] for f in shown["facts"])  # the SQLite fact ended when PostgreSQL's began
        retyped = memory.change_type(other, "error")
        assert memory.store.get_entry(retyped).type == "error"
        assert {r["action"] for r in memory.audit(entry_id=other)} >= {"write", "correct", "retype"}
        memory.set_memory_cue(newer, "when choosing a database")
        assert memory.show_memory(newer)["cue"] == "when choosing a database"
        assert {r["id"] for r in memory.preview_forget("staging cluster")} == {other, retyped}  # both versions hold the words
        assert memory.forget_memories([retyped]) == [retyped]
        assert memory.store_stats()["entries"] == 3


def test_ops_on_sqlite(db: Path) -> None:
    _exercise(db)


@pytest.mark.slow
def test_ops_on_postgresql(clean_env: Path, pg_url: str, monkeypatch: pytest.MonkeyPatch) -> None:  # noqa: F811
    monkeypatch.setenv("CRIB_DB", pg_url)
    _exercise(pg_url)


def test_the_journal_keeps_the_last_prompts_and_survives_a_reset(tmp_path: Path) -> None:
    state = SessionState.for_session(tmp_path / "crib.db", "s1")
    for i in range(MAX_PROMPTS + 5):
        state.add_prompt({"at": f"2026-01-01T00:00:{i:02d}Z", "entries": [], "pointers": []})
    assert len(state.prompts) == MAX_PROMPTS
    state.save()
    assert len(json.loads(state.path.read_text())["prompts"]) == MAX_PROMPTS  # type: ignore[union-attr]
    again = SessionState.for_session(tmp_path / "crib.db", "s1")
    assert len(again.prompts) == MAX_PROMPTS and again.prompts[-1]["at"].endswith(f"{MAX_PROMPTS + 4:02d}Z")
    assert again.reset().prompts == again.prompts and not again.reset().entries


def test_a_pointer_counts_as_opened_only_between_its_prompt_and_the_next(tmp_path: Path) -> None:
    prompts = [{"at": "2026-01-01T00:00:00Z", "pointers": [{"id": 5, "scope": ""}, {"id": 6, "scope": ""}]},
               {"at": "2026-01-01T00:05:00Z", "pointers": [{"id": 7, "scope": ""}]}]
    opened = [{"at": "2026-01-01T00:01:00Z", "id": 5, "scope": "project"}, {"at": "2026-01-01T00:06:00Z", "id": 6, "scope": "project"},
              {"at": "2026-01-01T00:07:00Z", "id": 7, "scope": "global"}]
    marked = journal.mark_opened(prompts, opened)
    assert [p["opened"] for p in marked[0]["pointers"]] == [True, False]  # 6 was opened only after the next prompt
    assert marked[1]["pointers"][0]["opened"] is False  # another store's entry 7


def test_opened_ids_stay_bounded(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    for i in range(journal.MAX_OPENED * 2):
        journal.record_opened(tmp_path, i + 1, "project")
    rows = journal.read_opened(tmp_path)
    assert len(rows) <= journal.MAX_OPENED and rows[-1]["id"] == journal.MAX_OPENED * 2


def test_the_mcp_show_tool_records_what_the_agent_opened(memory: Any, db: Path) -> None:
    pytest.importorskip("mcp")
    from crib_plugin.hosts import mcp_server

    entry_id = memory.write("Billing runs on the first day of each month.")
    memory.close()
    assert "Billing runs" in mcp_server.show(entry_id)
    assert [(r["id"], r["scope"]) for r in journal.read_opened(db.parent / "sessions")] == [(entry_id, "project")]


def test_a_prompt_record_holds_ids_and_reasons_not_memory_text(memory: Any) -> None:
    memory.write("Invoices are rendered as PDF with WeasyPrint.")
    block = memory.retrieve("how are invoices rendered as PDF?")
    record = journal.prompt_record("how are invoices rendered as PDF? token ghp_" + "A1b2C3d4E5f6G7h8I9j0K1l2M3n4O5p6Q7r8",
                                   memory.last_retrieval, block)
    text = json.dumps(record)
    assert record["entries"] and record["entries"][0]["why"][0].startswith("found by")
    assert "WeasyPrint" not in text and "ghp_A1b2" not in text and record["tokens"] == -(-len(block) // 4)
    assert "prompt" not in journal.prompt_record("secret prompt", memory.last_retrieval, block, log_prompts="hash")
