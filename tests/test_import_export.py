"""JSONL import/export round-trips, and a bad line writes nothing."""

from __future__ import annotations

import json
from pathlib import Path

RECORDS = [
    {"content": "Chose SQLite for storage.", "type": "decision", "created_at": "2026-02-09T10:00:00Z", "metadata": {"source": "adr-1"}},
    {"content": "The build broke on ARM: missing wheel.", "type": "error", "created_at": "2026-02-10T08:30:00Z", "metadata": {}},
    {"content": "The user prefers tabs.", "created_at": "2026-02-11T09:00:00+02:00"},
    {"content": "用户喜欢简洁的回答。", "type": "note", "metadata": {"lang": "zh"}},
]


def test_import_then_export_round_trips(crib, tmp_path: Path) -> None:
    source = tmp_path / "in.jsonl"
    source.write_text("\n".join(json.dumps(r, ensure_ascii=False) for r in RECORDS) + "\n", encoding="utf-8")
    result = crib("import", str(source))
    assert result.returncode == 0, result.stderr
    assert "imported 4 entries" in result.stdout
    exported = [json.loads(line) for line in crib("export").stdout.splitlines()]
    assert [e["content"] for e in exported] == [r["content"] for r in RECORDS]
    assert exported[0]["type"] == "decision" and exported[2]["type"] == "note"
    assert exported[0]["metadata"] == {"source": "adr-1"}
    assert exported[2]["created_at"] == "2026-02-11T07:00:00Z"  # normalised to UTC
    assert all("id" in e for e in exported)

    # export → import into a fresh store → export gives the same records (ids included).
    dump = tmp_path / "dump.jsonl"
    dump.write_text(crib("export").stdout, encoding="utf-8")
    other = tmp_path / "other.db"
    assert crib("import", str(dump), env={"CRIB_DB": str(other)}).returncode == 0
    again = [json.loads(line) for line in crib("export", env={"CRIB_DB": str(other)}).stdout.splitlines()]
    assert again == exported

    # Importing the same file twice adds nothing.
    assert "imported 0 entries (4 already present)" in crib("import", str(source)).stdout


def test_bad_line_writes_nothing(crib, tmp_path: Path, db: Path) -> None:
    source = tmp_path / "bad.jsonl"
    source.write_text(json.dumps(RECORDS[0]) + "\n{not json\n", encoding="utf-8")
    result = crib("import", str(source))
    assert result.returncode == 1
    assert "line 2: not valid JSON" in result.stderr and "Traceback" not in result.stderr
    source.write_text(json.dumps(RECORDS[0]) + "\n" + json.dumps({"type": "note"}) + "\n", encoding="utf-8")
    result = crib("import", str(source))
    assert result.returncode == 1 and "record 2: 'content'" in result.stderr
    assert crib("export").stdout == "" if db.exists() else True
