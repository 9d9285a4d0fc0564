"""The opt-in JSONL retrieval log (CRIB_LOG): one valid JSON line per retrieval, never a failure."""

from __future__ import annotations

import hashlib
import json
from pathlib import Path

import pytest

from crib_plugin import Memory
from crib_plugin.core.records import Query, Retrieval
from crib_plugin.output.retrieval_log import log_retrieval

PROMPT = "which database did we choose for storage?"


def _lines(path: Path) -> list[dict]:
    return [json.loads(line) for line in path.read_text(encoding="utf-8").splitlines()]


def test_each_retrieve_appends_one_json_line(db: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    log = tmp_path / "logs" / "retrievals.jsonl"
    monkeypatch.setenv("CRIB_LOG", str(log))
    with Memory(db) as memory:
        entry_id = memory.write("type=decision Chose SQLite for storage: zero dependencies.")
        block = memory.retrieve(PROMPT)
        assert block
        memory.retrieve("how do I bake sourdough bread at home")
    first, second = _lines(log)
    assert first["prompt"] == PROMPT
    assert set(first) >= {
        "time", "prompt", "keywords", "time_range", "search_type", "channels", "kept", "facts", "dropped",
        "notes", "timings_ms", "bytes",
    }
    assert first["kept"][0]["id"] == entry_id and first["bytes"] == len(block.encode("utf-8"))
    channels = {c["name"]: c for c in first["channels"]}
    assert "fts" in channels and channels["fts"]["ran"]
    assert channels["fts"]["top"][0] == {"id": entry_id, "rank": 1, "score": channels["fts"]["top"][0]["score"], "floor": True}
    assert "fuse" in first["timings_ms"]
    assert second["prompt"].startswith("how do I bake")
    assert isinstance(second["bytes"], int)


def test_prompt_can_be_hashed(db: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    log = tmp_path / "r.jsonl"
    monkeypatch.setenv("CRIB_LOG", str(log))
    monkeypatch.setenv("CRIB_LOG_PROMPTS", "hash")
    with Memory(db) as memory:
        memory.write("Chose SQLite for storage.")
        memory.retrieve(PROMPT)
    (line,) = _lines(log)
    assert "prompt" not in line
    assert line["prompt_sha256"] == hashlib.sha256(PROMPT.encode()).hexdigest()


def test_no_log_without_crib_log(memory: Memory, tmp_path: Path) -> None:
    memory.write("Chose SQLite for storage.")
    assert memory.retrieve(PROMPT)
    assert memory.settings.log_path is None
    assert not list(tmp_path.rglob("*.jsonl"))


def test_unwritable_log_never_fails_the_retrieval(db: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    blocker = tmp_path / "a-file"
    blocker.write_text("not a directory")
    monkeypatch.setenv("CRIB_LOG", str(blocker / "retrievals.jsonl"))
    with Memory(db) as memory:
        memory.write("Chose SQLite for storage.")
        assert memory.retrieve(PROMPT)
    assert log_retrieval(blocker / "x.jsonl", Retrieval(query=Query(text="q")), "") is False


def test_cli_retrieve_writes_the_log(crib, tmp_path: Path) -> None:
    log = tmp_path / "cli.jsonl"
    crib("write", input="type=decision Chose SQLite for storage.")
    result = crib("retrieve", input=PROMPT, env={"CRIB_LOG": str(log)})
    assert result.returncode == 0 and result.stdout
    (line,) = _lines(log)
    assert line["prompt"] == PROMPT and line["bytes"] == len(result.stdout.encode("utf-8"))
