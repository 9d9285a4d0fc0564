"""Unit tests of the per-session "already injected" record the Claude Code hooks keep."""

from __future__ import annotations

import json
import os
import time
from pathlib import Path

from crib_plugin.hosts.claude import SessionState, prune_sessions, sanitise_session_id, sessions_dir


def test_a_record_round_trips_and_lives_beside_the_database(tmp_path: Path) -> None:
    db = tmp_path / "crib.db"
    state = SessionState.for_session(db, "abc-123")
    assert state.path == tmp_path / "sessions" / "abc-123.json" and not state.entries
    state.entries |= {3, 1}
    state.facts.add(7)
    state.save()
    again = SessionState.for_session(db, "abc-123")
    assert (again.entries, again.facts) == ({1, 3}, {7})
    saved = json.loads(state.path.read_text(encoding="utf-8"))
    assert saved["entries"] == [1, 3] and saved["session_id"] == "abc-123"
    assert [p.name for p in state.path.parent.iterdir()] == ["abc-123.json"]  # no temporary file left


def test_reset_forgets_everything_but_the_session(tmp_path: Path) -> None:
    state = SessionState.for_session(tmp_path / "crib.db", "s")
    state.entries = {1}
    fresh = state.reset()
    assert fresh.path == state.path and fresh.session_id == "s" and not fresh.entries and not fresh.facts


def test_no_session_id_means_no_file_and_corrupt_records_start_afresh(tmp_path: Path) -> None:
    db = tmp_path / "crib.db"
    nobody = SessionState.for_session(db, "  ")
    assert nobody.path is None
    nobody.save()  # a no-op
    assert not (tmp_path / "sessions").exists()
    folder = sessions_dir(db)
    folder.mkdir()
    (folder / "s.json").write_text("{not json", encoding="utf-8")
    assert SessionState.for_session(db, "s").entries == set()
    (folder / "s.json").write_text(json.dumps({"entries": [1, "2", True, 3.5, 4]}), encoding="utf-8")
    assert SessionState.for_session(db, "s").entries == {1, 4}  # only real ints are trusted


def test_session_ids_become_safe_distinct_file_names() -> None:
    assert sanitise_session_id("0b9f3c1e-uuid") == "0b9f3c1e-uuid"
    odd = sanitise_session_id("../../etc/passwd")
    assert "/" not in odd and not odd.startswith(".")
    assert sanitise_session_id("a/b") != sanitise_session_id("a_b")


def test_prune_removes_only_old_records(tmp_path: Path) -> None:
    old, new, other = tmp_path / "old.json", tmp_path / "new.json", tmp_path / "keep.txt"
    for path in (old, new, other):
        path.write_text("{}", encoding="utf-8")
    week_ago = time.time() - 8 * 86400
    os.utime(old, (week_ago, week_ago))
    os.utime(other, (week_ago, week_ago))
    assert prune_sessions(tmp_path, 7) == 1
    assert not old.exists() and new.exists() and other.exists()
    assert prune_sessions(tmp_path / "missing", 7) == 0
