"""An upgrade of crib: one rule for every reader of a store an older crib wrote.

Every command and hook that opens it upgrades it, after keeping a copy the older crib can still
read (``crib.db.schema3.bak``), and a command says so once on stderr. Before, ``retrieve`` printed
nothing, ``search``/``export``/``doctor`` refused and ``list``/``show``/the hook migrated silently.
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
    migrations 7 (the cue index), 6 (``entries.project``) and 4 are taken back out, so it stays a schema-3 store
    whatever migrations come later."""
    import apsw

    from crib_plugin import Memory

    with Memory(db) as memory:
        memory.write("type=decision Chose SQLite for storage. Zero dependencies.")
    conn = apsw.Connection(str(db))
    conn.execute(
        "DROP TRIGGER entries_cue_ai; DROP TRIGGER entries_cue_ad; DROP TRIGGER entries_cue_au; DROP TABLE entries_cue;"
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


def test_a_reader_upgrades_an_older_store_and_keeps_a_copy(db: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    from crib_plugin import Memory
    from crib_plugin.core.notices import drain
    from crib_plugin.store.schema import latest_version

    previous = _older_store(db, monkeypatch)
    drain()
    with Memory(db, create=False, readonly=True) as memory:
        assert "Chose SQLite" in memory.retrieve("what database did we choose?")
    assert _version(db) == latest_version()
    backup = db.with_name(f"{db.name}.schema{previous}.bak")
    assert _version(backup) == previous  # the older crib can still read (and export) the copy
    (line,) = drain()
    assert f"from schema {previous} to {latest_version()}" in line and str(backup) in line


def test_an_upgrade_indexes_the_recall_cues_already_stored(db: Path) -> None:
    """Migration 7 builds the cue index from the cues a schema-6 store holds: full text alone then
    finds a memory by its cue's words, which its content does not hold."""
    import apsw

    from crib_plugin import Memory

    with Memory(db) as memory:
        cued = memory.write("The user's package manager is uv.", metadata={"when": "installing a Python dependency"})
        memory.write("Deploys go out on Tuesdays.")
    conn = apsw.Connection(str(db))
    conn.execute("DROP TRIGGER entries_cue_ai; DROP TRIGGER entries_cue_ad; DROP TRIGGER entries_cue_au; DROP TABLE entries_cue;"
                 "PRAGMA user_version = 6; PRAGMA wal_checkpoint(TRUNCATE);")
    conn.close()
    with Memory(db, create=False) as memory:
        assert [h.entry.id for h in memory.search("installing a dependency", channels=["fts"])] == [cued]
    from crib_plugin.store.schema import latest_version

    assert _version(db) == latest_version() >= 7


def test_a_store_that_cannot_be_upgraded_is_refused_with_one_line(db: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """A read-only folder: no copy can be made, so nothing is changed and the reader says why."""
    from crib_plugin import Memory

    previous = _older_store(db, monkeypatch)
    db.parent.chmod(0o555)
    try:
        if os.access(db.parent, os.W_OK):
            pytest.skip("running as a user who can write a read-only folder (root)")
        with Memory(db, create=False, readonly=True) as memory, pytest.raises(StoreOutdated, match="crib init"):
            memory.retrieve("what database did we choose?")
    finally:
        db.parent.chmod(0o755)
    assert _version(db) == previous


@pytest.mark.parametrize("command", [("retrieve",), ("search", "database"), ("export",), ("list",), ("show", "1"),
                                     ("stats",), ("doctor",), ("log",)])
def test_every_read_command_reads_an_older_store_the_same_way(db: Path, monkeypatch: pytest.MonkeyPatch, crib: Any,
                                                              command: tuple[str, ...]) -> None:
    previous = _older_store(db, monkeypatch)
    result = crib(*command, input="what database did we choose?", env=SLOW_OK)
    assert result.returncode == 0, result.stdout + result.stderr
    assert "Traceback" not in result.stderr
    if command[0] not in ("stats", "doctor", "log"):
        assert "Chose SQLite" in result.stdout, result.stdout
    assert f"upgraded {db} from schema {previous}" in result.stderr, result.stderr
    assert db.with_name(f"{db.name}.schema{previous}.bak").exists()


def test_the_prompt_hook_answers_after_an_upgrade(db: Path, monkeypatch: pytest.MonkeyPatch, crib_cold: Any) -> None:
    _older_store(db, monkeypatch)
    prompt = json.dumps({"session_id": "s1", "hook_event_name": "UserPromptSubmit", "cwd": os.getcwd(),
                         "prompt": "what database did we choose?", "permission_mode": "default"})
    result = crib_cold("hook", "user-prompt-submit", input=prompt, env=SLOW_OK)
    assert result.returncode == 0, result.stderr
    assert "Chose SQLite" in json.loads(result.stdout)["hookSpecificOutput"]["additionalContext"]
