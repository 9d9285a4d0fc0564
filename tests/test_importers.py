"""Importing Claude Code memory files and folders of markdown notes (and JSONL, as before)."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest
from click.testing import CliRunner

from crib_plugin.core.errors import InputError
from crib_plugin.hosts.cli.app import cli
from crib_plugin.write.importers import detect_format, markdown_records, read_records, split_markdown

DATA = Path(__file__).resolve().parent / "data"


def invoke(*args: str, input: str | None = None, code: int = 0) -> Any:
    result = CliRunner().invoke(cli, list(args), input=input, catch_exceptions=False)
    assert result.exit_code == code, result.output
    return result


def contents(records: list[dict[str, Any]]) -> list[str]:
    return [r["content"] for r in records]


def test_detect_format() -> None:
    assert detect_format(DATA / "CLAUDE.md") == "claude"
    assert detect_format(Path("proj/CLAUDE.local.md")) == "claude"
    assert detect_format(Path("/home/u/.claude/CLAUDE.md")) == "claude"
    assert detect_format(DATA / "notes") == "markdown"
    assert detect_format(Path("x/notes.md")) == "markdown"
    assert detect_format(Path("export.jsonl")) == "jsonl"
    assert detect_format(Path("-")) == "jsonl"
    assert detect_format(Path("export.txt"), "markdown") == "markdown"
    with pytest.raises(InputError):
        detect_format(Path("x"), "yaml")


def test_claude_md_is_split_into_self_contained_memories() -> None:
    kind, records = read_records(DATA / "CLAUDE.md")
    assert kind == "claude"
    texts = contents(records)
    # the intro paragraph, under the title; the @import line is not a memory
    assert texts[0] == "Acme billing service: This repository holds the billing API (FastAPI) and its nightly reconciliation job."
    assert not any("@docs/architecture.md" in t for t in texts)
    # one bullet = one memory, prefixed with its heading path
    assert "Acme billing service > Commands: Lint with `ruff check .` before every commit." in texts
    # a code block stays whole, with the bullet that introduces it
    rebuild = next(t for t in texts if "rebuild the local database" in t)
    assert "docker compose down -v" in rebuild and "alembic upgrade head" in rebuild and rebuild.count("```") == 2
    # continuation lines and sub-bullets stay with their bullet
    money = next(t for t in texts if "Money is always" in t)
    assert "billing/money.py" in money and "ROUND_HALF_EVEN" in money
    # HTML comments are not memories
    assert not any("Celery" in t for t in texts)
    # a paragraph is one memory
    assert "Acme billing service > Gotchas: The reconciliation job must run after 02:00 UTC, when the bank statement arrives." in texts
    assert len(texts) == 10
    by_text = {r["content"]: r for r in records}
    assert by_text["Acme billing service > Decisions: We chose PostgreSQL over MySQL because we need transactional DDL for migrations."]["type"] == "decision"
    error = next(r for r in records if "SSL SYSCALL" in r["content"])
    assert error["type"] == "error"  # an obvious "Error:" prefix
    assert next(r for r in records if "mypy" in r["content"])["type"] == "note"  # nothing obvious: note
    meta = records[1]["metadata"]
    assert meta["source"] == "claude" and meta["source_path"].endswith("CLAUDE.md") and meta["heading"] == "Acme billing service > Commands"
    assert all("created_at" not in r for r in records)  # no front matter: stored at import time


def test_notes_folder_with_front_matter() -> None:
    kind, records = read_records(DATA / "notes")
    assert kind == "markdown"
    paths = {Path(r["metadata"]["source_path"]).name for r in records}
    assert paths == {"0007-queue.md", "standup.md"}  # .obsidian/ and non-markdown files skipped
    adr = [r for r in records if r["metadata"]["source_path"].endswith("0007-queue.md")]
    assert all(r["created_at"] == "2024-03-18" for r in adr)  # front matter date honoured
    assert all(r["type"] == "decision" for r in adr)  # front matter type
    assert all(r["metadata"]["tags"] == ["infra", "queue"] for r in adr)
    assert not any("title:" in r["content"] for r in adr)  # front matter is not a memory
    run = next(r["content"] for r in adr if "Run the worker" in r["content"])
    assert run.startswith("ADR 7: job queue > Decision: Run the worker locally with:")
    assert 'main(queue="local")' in run and "from worker import main" in run
    standup = {r["content"]: r["type"] for r in records if r["metadata"]["source_path"].endswith("standup.md")}
    assert standup["Standup notes > Corrections: Correction: the staging URL is staging.acme.dev, not stage.acme.dev."] == "correction"
    from crib_plugin.core.records import ENTRY_TYPES

    expected = "preference" if "preference" in ENTRY_TYPES else "note"
    assert standup["Standup notes > Preferences: I prefer short pull requests, under 400 changed lines."] == expected


def test_code_block_alone_and_unclosed_fence() -> None:
    units = split_markdown("# T\n\nSome text.\n\n```sh\nmake all\n```\n\n- item\n```\nunclosed\n")
    texts = [u.text() for u in units]
    assert texts[0] == "Some text."
    assert texts[1] == "```sh\nmake all\n```"  # a paragraph not ending in ':' does not absorb it
    assert texts[2] == "item"
    assert texts[3] == "```\nunclosed"


def test_markdown_records_without_headings() -> None:
    records = markdown_records("First paragraph.\n\nSecond\nparagraph.\n", source="markdown", source_path="x.md")
    assert contents(records) == ["First paragraph.", "Second paragraph."]
    assert "heading" not in records[0]["metadata"]


def test_crib_import_claude_md_and_folder(db: Path) -> None:
    out = invoke("import", str(DATA / "CLAUDE.md")).output
    assert "imported 10 entries (0 already present) from claude" in out
    again = invoke("import", str(DATA / "CLAUDE.md")).output
    assert "imported 0 entries (10 already present)" in again  # idempotent
    out = invoke("import", str(DATA / "notes")).output
    assert "from markdown" in out
    rows = json.loads(invoke("list", "--json", "--limit", "0").output)
    assert len(rows) == 10 + len(read_records(DATA / "notes")[1])
    adr = [r for r in rows if "SQS" in r["content"]]
    assert adr and adr[0]["created_at"] == "2024-03-18T00:00:00Z" and adr[0]["type"] == "decision"
    shown = json.loads(invoke("show", str(adr[0]["id"]), "--json").output)
    assert shown["sources"]["source"] == "markdown" and shown["sources"]["heading"] == "ADR 7: job queue > Decision"
    block = invoke("retrieve", "which database do we use and why, PostgreSQL or MySQL?").output
    assert "transactional DDL" in block
    log = json.loads(invoke("log", "--json").output)
    assert log[0]["action"] == "import"


def test_crib_import_format_flag_and_stdin(db: Path) -> None:
    text = "## Deploy\n\n- Deploys go out on Tuesdays only.\n"
    out = invoke("import", "-", "--format", "markdown", input=text).output
    assert "imported 1 entries" in out
    rows = json.loads(invoke("list", "--json").output)
    assert rows[0]["content"] == "Deploy: Deploys go out on Tuesdays only."
    line = json.dumps({"content": "a jsonl memory", "type": "note"})
    assert "imported 1 entries" in invoke("import", "-", input=line + "\n").output
    assert "line 1: not valid JSON" in invoke("import", "-", input="{bad\n", code=1).output
    assert "no such file" in invoke("import", "missing.md", code=1).output


def test_reimporting_claude_md_does_not_bring_back_what_the_user_forgot(db: Path) -> None:
    invoke("import", str(DATA / "CLAUDE.md"))
    rows = json.loads(invoke("list", "--json", "--limit", "0").output)
    gone = rows[:2]
    invoke("forget", *(str(r["id"]) for r in gone), "--yes")
    again = invoke("import", str(DATA / "CLAUDE.md")).output
    assert "imported 0 entries (8 already present, 2 forgotten before: not brought back" in again
    texts = {r["content"] for r in json.loads(invoke("list", "--json", "--limit", "0").output)}
    assert not {r["content"] for r in gone} & texts
    back = invoke("import", str(DATA / "CLAUDE.md"), "--include-forgotten").output
    assert "imported 2 entries (8 already present)" in back
    texts = {r["content"] for r in json.loads(invoke("list", "--json", "--limit", "0").output)}
    assert {r["content"] for r in gone} <= texts
