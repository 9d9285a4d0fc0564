"""The original crib smoke test, check for check, against the real command in fresh processes."""

from __future__ import annotations

import json
import re
import shutil
import subprocess
import sysconfig
from pathlib import Path

import apsw


def test_console_script_installed() -> None:
    """The install put a ``crib`` script where this environment keeps its scripts (a venv's bin: on PATH
    once the venv is activated, and used by path when the tests run as ``venv/bin/python -m pytest``)."""
    scripts = Path(sysconfig.get_path("scripts"))
    found = shutil.which("crib", path=str(scripts))
    assert found, f"no `crib` console script in {scripts}"
    done = subprocess.run([found, "--version"], capture_output=True, text=True, timeout=60)
    assert done.returncode == 0 and done.stdout.startswith("crib, version"), done.stdout + done.stderr


# -- doctor ------------------------------------------------------------------------------------

def test_doctor_reports_ok_as_json(crib) -> None:
    result = crib("doctor")
    report = json.loads(result.stdout)
    assert result.returncode == 0, result.stdout + result.stderr
    assert report["ok"] is True
    assert report["sqlite"]["sqlite_vec"].startswith("v")
    assert report["sqlite"]["fts5"] and report["sqlite"]["trigram"]
    assert report["embedder"]["name"] == "minilm" and report["embedder"]["present"]
    assert report["ollama"]["reachable"] is False  # OLLAMA_HOST points at a closed port


def test_doctor_not_ok_when_required_embedder_missing(crib) -> None:
    result = crib("doctor", env={"CRIB_EMBEDDER": "ollama"})
    report = json.loads(result.stdout)
    assert result.returncode == 1
    assert report["ok"] is False and report["embedder"]["ok"] is False


# -- init ----------------------------------------------------------------------------------------

def test_init_creates_database_with_tables(crib, db: Path) -> None:
    result = crib("init")
    assert result.returncode == 0, result.stderr
    assert db.exists()
    conn = apsw.Connection(str(db))
    names = {r[0] for r in conn.execute("SELECT name FROM sqlite_master")}
    for table in ("entries", "entries_fts", "entries_trigram", "settings", "vector_spaces", "pending_embeddings"):
        assert table in names
    assert list(conn.execute("PRAGMA journal_mode"))[0][0] == "wal"


def test_vec0_table_exists_after_first_write(crib, db: Path) -> None:
    assert crib("write", input="Chose SQLite for storage.").returncode == 0
    conn = apsw.Connection(str(db))
    sql = [r[0] for r in conn.execute("SELECT sql FROM sqlite_master WHERE name LIKE 'vec_%' AND type='table'")]
    assert any("vec0" in s and "cosine" in s for s in sql)


# -- write ---------------------------------------------------------------------------------------

def test_write_stores_and_respects_type_prefix(crib) -> None:
    result = crib("write", input="type=decision Chose SQLite for storage. Zero dependencies.")
    assert result.returncode == 0, result.stderr
    assert result.stdout.startswith("stored entry 1")
    exported = [json.loads(line) for line in crib("export").stdout.splitlines()]
    assert exported[0]["type"] == "decision"
    assert exported[0]["content"] == "Chose SQLite for storage. Zero dependencies."


def test_write_rejects_empty_input(crib) -> None:
    for text in ("", "   \n", "type=note   "):
        result = crib("write", input=text)
        assert result.returncode == 1
        assert "nothing to write" in result.stderr
        assert "Traceback" not in result.stderr


def test_write_rejects_unknown_type(crib) -> None:
    result = crib("write", input="type=banana something")
    assert result.returncode == 1 and "unknown entry type" in result.stderr


# -- retrieve ------------------------------------------------------------------------------------

def _seed(crib) -> None:
    assert crib("write", input="type=decision Chose SQLite for storage. Zero dependencies.").returncode == 0


def test_retrieve_via_fts_with_tags_time_and_dates(crib) -> None:
    _seed(crib)
    out = crib("retrieve", input="what storage did we choose?", env={"CRIB_CHANNEL": "fts"}).stdout
    assert re.match(r'<memory context_time="\d{4}-\d\d-\d\dT\d\d:\d\d:\d\dZ" channels="fts">\n', out)
    assert out.rstrip().endswith("</memory>")
    assert re.search(r"^- \[\d{4}-\d\d-\d\d decision\] Chose SQLite for storage\. Zero dependencies\.$", out, re.M)


def test_retrieve_via_vectors_without_shared_words(crib) -> None:
    _seed(crib)
    out = crib("retrieve", input="which storage engine did we pick?", env={"CRIB_CHANNEL": "vector"}).stdout
    assert "Chose SQLite for storage" in out
    assert 'channels="vector"' in out


def test_retrieve_prints_nothing_when_nothing_is_relevant(crib) -> None:
    _seed(crib)
    result = crib("retrieve", input="how long should sourdough proof?")
    assert result.returncode == 0
    assert result.stdout == ""


def test_retrieve_orders_entries_newest_first(crib) -> None:
    crib("write", "--created-at", "2026-01-05T10:00:00Z", input="The cache layer uses Redis for sessions.")
    crib("write", "--created-at", "2026-03-01T10:00:00Z", input="The cache layer moved to memcached for sessions.")
    crib("write", "--created-at", "2026-02-01T10:00:00Z", input="Cache layer sessions expire after an hour.")
    out = crib("retrieve", input="cache layer sessions").stdout
    dates = re.findall(r"^- \[(\d{4}-\d\d-\d\d) ", out, re.M)
    assert dates == sorted(dates, reverse=True) and len(dates) == 3


def test_retrieve_empty_input_exits_cleanly(crib) -> None:
    _seed(crib)
    result = crib("retrieve", input="")
    assert result.returncode == 0 and result.stdout == ""


def test_retrieve_missing_database_exits_cleanly(crib, db: Path) -> None:
    result = crib("retrieve", input="anything at all")
    assert result.returncode == 0 and result.stdout == ""
    assert not db.exists(), "retrieve must not create a database"


def test_retrieve_accepts_claude_hook_json(crib) -> None:
    _seed(crib)
    payload = json.dumps({"session_id": "s1", "hook_event_name": "UserPromptSubmit", "prompt": "what database did we choose?"})
    assert "Chose SQLite" in crib("retrieve", input=payload).stdout


def test_retrieve_fails_open_on_corrupt_database(crib, db: Path) -> None:
    db.write_bytes(b"this is not a database" * 100)
    result = crib("retrieve", input="what database did we choose?")
    assert result.returncode == 0
    assert result.stdout == ""
    assert "Traceback" not in result.stdout + result.stderr


def test_retrieve_says_when_a_channel_did_not_run(crib) -> None:
    _seed(crib)
    # The store's vectors are MiniLM's; asking for Ollama (unreachable) must not silently mix or hide it.
    result = crib("retrieve", input="what database did we choose?", env={"CRIB_EMBEDDER": "ollama"})
    assert "Chose SQLite" in result.stdout
    assert "CRIB_EMBEDDER=ollama ignored" in result.stderr


def test_per_prompt_commands_skip_the_cli_framework(crib_cold) -> None:
    """`crib retrieve` and the prompt hook run once per prompt: they must not pay for importing click."""
    crib = crib_cold  # what a fresh process imports is the point
    _seed(crib)
    for args, payload in ((("retrieve",), "what storage did we choose?"), (("hook", "user-prompt-submit"), '{"session_id": "s", "prompt": "storage"}')):
        result = crib(*args, input=payload, env={"PYTHONPROFILEIMPORTTIME": "1", "CRIB_HOOK_TIMEOUT": "60"})
        imported = {line.rsplit("|", 1)[-1].strip() for line in result.stderr.splitlines() if line.startswith("import time:")}
        assert "crib_plugin.memory" in imported or "crib_plugin.hosts.claude" in imported
        assert "click" not in imported, args


def test_the_readme_session_verbatim(crib) -> None:
    assert crib("write", input="type=decision Chose SQLite for storage. Zero dependencies.\n").returncode == 0
    out = crib("retrieve", input="what database did we choose?\n").stdout
    assert re.match(r'<memory context_time="[^"]+" channels="[a-z,]+">\n', out)
    assert "- [" in out and "decision] Chose SQLite for storage. Zero dependencies." in out
    vec = crib("retrieve", input="which storage engine did we pick?\n", env={"CRIB_CHANNEL": "vector"}).stdout
    assert "Chose SQLite for storage" in vec
    assert crib("retrieve", input="how long should sourdough proof?\n").stdout == ""
    assert json.loads(crib("doctor").stdout)["ok"] is True
