"""An upgrade of crib never silences the Claude Code hooks.

A store written by an older crib has an older schema. Read commands a person runs refuse it with
one line ("run `crib init`") and leave the file alone; the hooks have nobody to read that line, so
they used to inject nothing on every prompt until something was written. They now migrate it first.
"""

from __future__ import annotations

import json
import os
from pathlib import Path
from typing import Any

import pytest

from crib_plugin.core.errors import StoreOutdated

SLOW_OK = {"CRIB_HOOK_TIMEOUT": "60"}


def _older_store(db: Path, monkeypatch: pytest.MonkeyPatch) -> int:
    """A real store as crib wrote it before migration 4 (schema 3: no audit table, no
    ``entries.superseded_by``), holding one decision; returns 3. Built with today's crib, then
    migrations 5 (``entries.project``) and 4 are taken back out, so it stays a schema-3 store
    whatever migrations come later."""
    import apsw

    from crib_plugin import Memory

    with Memory(db) as memory:
        memory.write("type=decision Chose SQLite for storage. Zero dependencies.")
    conn = apsw.Connection(str(db))
    conn.execute(
        "DROP INDEX entries_project; ALTER TABLE entries DROP COLUMN project;"
        "DROP INDEX entries_superseded_by; DROP INDEX audit_entry; DROP TABLE audit;"
        "ALTER TABLE entries DROP COLUMN superseded_by; PRAGMA user_version = 3; PRAGMA wal_checkpoint(TRUNCATE);"
    )
    conn.close()
    return 3


def _version(db: Path) -> int:
    import apsw

    conn = apsw.Connection(str(db), flags=apsw.SQLITE_OPEN_READONLY)
    try:
        return int(next(iter(conn.execute("PRAGMA user_version")))[0])
    finally:
        conn.close()


def test_a_reader_for_the_hooks_migrates_an_older_store(db: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    from crib_plugin import Memory
    from crib_plugin.store.schema import latest_version

    previous = _older_store(db, monkeypatch)
    with Memory(db, create=False, readonly=True) as memory, pytest.raises(StoreOutdated, match="crib init"):
        memory.retrieve("what database did we choose?")
    assert _version(db) == previous  # a plain read changed nothing
    with Memory(db, create=False, readonly=True, upgrade=True) as memory:
        assert "Chose SQLite" in memory.retrieve("what database did we choose?")
    assert _version(db) == latest_version()


def test_the_prompt_hook_answers_after_an_upgrade(db: Path, monkeypatch: pytest.MonkeyPatch, crib_cold: Any) -> None:
    _older_store(db, monkeypatch)
    prompt = json.dumps({"session_id": "s1", "hook_event_name": "UserPromptSubmit", "cwd": os.getcwd(),
                         "prompt": "what database did we choose?", "permission_mode": "default"})
    result = crib_cold("hook", "user-prompt-submit", input=prompt, env=SLOW_OK)
    assert result.returncode == 0, result.stderr
    assert "Chose SQLite" in json.loads(result.stdout)["hookSpecificOutput"]["additionalContext"]
