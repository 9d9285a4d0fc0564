"""Managing what is stored: list, show, stats, forget (every channel and index), correct, audit log."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest
from click.testing import CliRunner

from crib_plugin.hosts.cli.app import cli
from crib_plugin.write import manage

SECRET_WORD = "zorblaxian"


def invoke(*args: str, input: str | None = None, code: int = 0) -> Any:
    result = CliRunner().invoke(cli, list(args), input=input, catch_exceptions=False)
    assert result.exit_code == code, result.output
    return result


def table_rows(store: Any, sql: str, args: tuple[Any, ...] = ()) -> list[tuple[Any, ...]]:
    return store.execute(sql, args)


def vocab_terms(store: Any, table: str) -> set[str]:
    store.execute(f"CREATE VIRTUAL TABLE IF NOT EXISTS temp.{table}_v USING fts5vocab(main, {table}, row)")
    return {str(r[0]) for r in store.execute(f"SELECT term FROM temp.{table}_v")}


@pytest.fixture
def stocked(memory: Any) -> dict[str, int]:
    """An entry to forget that reaches every channel and index, beside entries that must stay."""
    keep = memory.write("type=decision We use PostgreSQL for the billing database", metadata={"thread": "t1"})
    gone = memory.write(
        f"type=decision The {SECRET_WORD} service uses Redis for caching 缓存设计 because latency matters",
        metadata={"thread": "t1"},
    )
    other = memory.write("type=note The deploy script lives in ops/deploy.sh")
    store = memory.store
    # a second vector space and a queued embedding, so "every vector table" and the queue are exercised
    table = store.ensure_vector_space("fake:tiny:4", 4)
    import numpy as np

    from crib_plugin.store.base_vectors import to_blob

    for entry_id in (keep, gone, other):
        store.put_vector(table, entry_id, to_blob(np.ones(4, dtype=np.float32) / 2))
    store.queue_embedding(gone, "fake", "test")
    return {"keep": keep, "gone": gone, "other": other}


def test_forget_leaves_no_trace_of_a_recall_cue(memory: Any) -> None:
    """A cue is indexed by its words (``entries_cue``): a forget takes them out of the index's
    segments too, not only out of its matches."""
    keep = memory.write("The deploy script lives in ops/deploy.sh", metadata={"when": "deploying a service"})
    gone = memory.write("Redis caches sessions.", metadata={"when": f"touching the {SECRET_WORD} session cache"})
    store = memory.store
    assert SECRET_WORD in vocab_terms(store, "entries_cue")
    assert manage.forget(memory, [gone]) == [gone]
    assert not table_rows(store, f"SELECT rowid FROM entries_cue WHERE entries_cue MATCH '{SECRET_WORD}'")
    assert SECRET_WORD not in vocab_terms(store, "entries_cue")
    assert [int(r[0]) for r in table_rows(store, "SELECT rowid FROM entries_cue WHERE entries_cue MATCH 'deploying'")] == [keep]


def test_forget_leaves_no_trace_in_any_table_but_the_audit_log(memory: Any, stocked: dict[str, int], db: Path) -> None:
    store = memory.store
    gone = stocked["gone"]
    relations = [int(r[0]) for r in table_rows(store, "SELECT relation_id FROM relation_sources WHERE entry_id = ?", (gone,))]
    assert relations, "the entry should have stated a fact"
    sources_before = {
        relation_id: {int(r[0]) for r in table_rows(store, "SELECT entry_id FROM relation_sources WHERE relation_id = ?", (relation_id,))}
        for relation_id in relations
    }
    assert SECRET_WORD in vocab_terms(store, "entries_fts")
    assert table_rows(store, "SELECT rowid FROM entries_cjk WHERE entries_cjk MATCH '缓存'")

    assert manage.forget(memory, [gone]) == [gone]

    # entries
    assert not table_rows(store, "SELECT 1 FROM entries WHERE id = ?", (gone,))
    # full-text channel: no match and no term left in the index segments
    assert not table_rows(store, f"SELECT rowid FROM entries_fts WHERE entries_fts MATCH '{SECRET_WORD}'")
    assert SECRET_WORD not in vocab_terms(store, "entries_fts")
    # trigram index
    assert not table_rows(store, "SELECT rowid FROM entries_trigram WHERE entries_trigram MATCH 'orblaxia'")
    assert not any(SECRET_WORD[i:i + 3] in t for t in vocab_terms(store, "entries_trigram") for i in (1, 4))
    # CJK gram index
    assert not table_rows(store, "SELECT rowid FROM entries_cjk WHERE entries_cjk MATCH '缓存'")
    assert "缓存" not in vocab_terms(store, "entries_cjk")
    # every vector table
    spaces = store.vector_spaces()
    assert len(spaces) == 2
    for table, _dim in spaces.values():
        store.load_vec()
        assert not table_rows(store, f"SELECT rowid FROM {table} WHERE rowid = ?", (gone,))
        assert table_rows(store, f"SELECT rowid FROM {table} WHERE rowid = ?", (stocked["keep"],))
    # pending queue
    assert not table_rows(store, "SELECT 1 FROM pending_embeddings WHERE entry_id = ?", (gone,))
    # facts channel: sources, and the relations/entities only this entry supported
    assert not table_rows(store, "SELECT 1 FROM relation_sources WHERE entry_id = ?", (gone,))
    for relation_id in relations:
        # a relation keeps exactly its other entries' sources; one only this entry supported is gone
        left = {int(r[0]) for r in table_rows(store, "SELECT entry_id FROM relation_sources WHERE relation_id = ?", (relation_id,))}
        assert left == sources_before[relation_id] - {gone}
        if not left:
            assert not table_rows(store, "SELECT 1 FROM relations WHERE id = ?", (relation_id,))
        assert not table_rows(
            store, "SELECT 1 FROM relations r WHERE id = ? AND NOT EXISTS (SELECT 1 FROM relation_sources s WHERE s.relation_id = r.id)", (relation_id,))
    assert not table_rows(store, f"SELECT 1 FROM entities WHERE name LIKE '%{SECRET_WORD}%'")
    # every channel, through retrieval
    for channel in ("fts", "vector", "facts"):
        hits = memory.recall(f"{SECRET_WORD} Redis caching 缓存", channels=[channel]).hits
        assert gone not in [h.entry.id for h in hits], channel
    # the other entries are untouched
    assert memory.entry(stocked["keep"]) is not None and memory.entry(stocked["other"]) is not None
    # the audit row is the only trace, and it holds no text
    rows = manage.audit_log(memory, entry_id=gone)
    assert [r["action"] for r in rows] == ["forget", "write"]
    assert "Redis" not in json.dumps(rows) and SECRET_WORD not in json.dumps(rows)
    # not even in the file's free pages or the write-ahead log
    for path in (db, Path(f"{db}-wal")):
        if path.exists():
            assert SECRET_WORD.encode() not in path.read_bytes(), path


def test_forget_by_query_previews_and_asks(memory: Any, stocked: dict[str, int]) -> None:
    memory.close()
    declined = invoke("forget", "--query", f"{SECRET_WORD} Redis caching", input="n\n")
    assert f"{SECRET_WORD} service uses Redis" in declined.output and "nothing forgotten" in declined.output
    rows = json.loads(invoke("list", "--json", "--scope", "project").output)
    assert stocked["gone"] in [r["id"] for r in rows]
    accepted = invoke("forget", "--query", f"{SECRET_WORD} Redis caching", input="y\n")
    assert f"forgot entry {stocked['gone']}" in accepted.output
    rows = json.loads(invoke("list", "--json").output)
    assert stocked["gone"] not in [r["id"] for r in rows]
    assert stocked["keep"] in [r["id"] for r in rows]


def test_forget_yes_for_scripts_and_by_id(memory: Any, stocked: dict[str, int]) -> None:
    memory.close()
    out = invoke("forget", "--query", "deploy script ops", "--yes").output
    assert f"forgot entry {stocked['other']}" in out
    assert "forgot entry" in invoke("forget", str(stocked["keep"])).output
    assert "no entry with id 999" in invoke("forget", "999", code=1).output
    log = json.loads(invoke("log", "--json").output)
    assert [r["action"] for r in log[:2]] == ["forget", "forget"]
    assert {r["detail"]["reason"] for r in log[:2]} == {"query", "id"}


def test_correct_keeps_history_and_shows_the_corrected_text_first(memory: Any) -> None:
    old = memory.write("type=decision The API gateway timeout is 30 seconds for uploads")
    memory.write("type=note Uploads are stored in the media bucket")
    memory.close()
    out = invoke("correct", str(old), "The API gateway timeout is 120 seconds for uploads since the CDN change").output
    new = int(out.split()[-1])
    data = json.loads(invoke("show", str(old), "--json").output)
    assert data["entry"]["content"] == "The API gateway timeout is 30 seconds for uploads"  # kept
    assert data["entry"]["superseded_by"] == new and data["current"] == new
    assert [h["id"] for h in data["history"]] == [old, new]
    assert [a["action"] for a in data["audit"]] == ["correct", "write"]
    text = invoke("show", str(old)).output
    assert text.index("120 seconds") < text.index("30 seconds")
    shown_new = json.loads(invoke("show", str(new), "--json").output)
    assert shown_new["entry"]["type"] == "correction" and shown_new["entry"]["metadata"]["corrects"] == old
    # retrieval: the corrected text comes first, even for a prompt worded like the old entry
    block = invoke("retrieve", "What is the API gateway timeout for uploads, 30 seconds?").output
    assert "120 seconds" in block and block.index("120 seconds") < block.index("30 seconds")
    # a second correction corrects the newest version: the chain stays a line
    out = invoke("correct", str(old), "The API gateway timeout is 90 seconds").output
    third = int(out.split()[-1])
    chain = json.loads(invoke("show", str(old), "--json").output)["history"]
    assert [h["id"] for h in chain] == [old, new, third]
    assert "no entry with id 999" in invoke("correct", "999", "x", code=1).output


def test_list_filters_and_json(memory: Any) -> None:
    memory.write("type=decision Old decision about logging", created_at="2024-01-10T10:00:00Z")
    memory.write("type=error Timeout in the worker fixed by raising the pool size", created_at="2024-03-05T10:00:00Z")
    memory.write("type=note A note from May", created_at="2024-05-01T10:00:00Z")
    memory.close()
    rows = json.loads(invoke("list", "--json").output)
    assert [r["created_at"][:10] for r in rows] == ["2024-05-01", "2024-03-05", "2024-01-10"]
    assert all(r["scope"] == "project" for r in rows)
    assert [r["type"] for r in json.loads(invoke("list", "--json", "--type", "error").output)] == ["error"]
    between = json.loads(invoke("list", "--json", "--since", "2024-02-01", "--until", "2024-03-05").output)
    assert [r["type"] for r in between] == ["error"]  # a bare --until date covers the whole day
    assert len(json.loads(invoke("list", "--json", "--limit", "1").output)) == 1
    assert "Timeout in the worker" in invoke("list").output
    assert "not an ISO 8601 date" in invoke("list", "--since", "yesterday-ish", code=1).output


def test_list_all_scopes(memory: Any) -> None:
    memory.write("a project note about the linter")
    memory.close()
    invoke("write", "--global", "I like short commit messages")
    rows = json.loads(invoke("list", "--json").output)
    assert sorted(r["scope"] for r in rows) == ["global", "project"]
    assert [r["scope"] for r in json.loads(invoke("list", "--json", "--scope", "global").output)] == ["global"]


def test_stats(memory: Any) -> None:
    memory.write("type=decision We use PostgreSQL for the billing database")
    memory.write("type=note The deploy script lives in ops/deploy.sh")
    memory.close()
    data = json.loads(invoke("stats", "--json").output)
    project = data["project"]
    assert project["entries"] == 2 and project["by_type"] == {"decision": 1, "note": 1}
    assert project["facts"] >= 1 and project["pending_vectors"] == 0 and data["global"] is None
    assert project["audit_rows"] == 2
    assert "entries 2" in invoke("stats").output


def test_every_change_is_audited(memory: Any, tmp_path: Path) -> None:
    first = memory.write("type=note first")
    memory.close()
    records = tmp_path / "in.jsonl"
    records.write_text("\n".join(json.dumps({"content": f"imported {i}"}) for i in range(3)) + "\n")
    invoke("import", str(records))
    invoke("correct", str(first), "first, corrected")
    invoke("forget", str(first))
    invoke("reindex")
    actions = [r["action"] for r in json.loads(invoke("log", "--json").output)]
    assert actions[:4] == ["reindex", "forget", "correct", "write"]
    assert "import" in actions
    detail = next(r for r in json.loads(invoke("log", "--json").output) if r["action"] == "import")["detail"]
    assert detail["entries"] == 3
    assert "import" in invoke("log").output


def test_a_superseded_memory_is_never_shown_without_its_correction(memory: Any) -> None:
    old = memory.write("type=decision Nightly backups of the warehouse run at 02:00 UTC on the replica")
    memory.close()
    invoke("correct", str(old), "Moved to 04:30 after the ETL window grew")  # shares no word with the prompt
    block = invoke("retrieve", "When do the nightly warehouse backups run on the replica?").output
    assert "04:30" in block and block.index("04:30") < block.index("02:00")


def test_forget_rejects_ids_that_cannot_exist(memory: Any) -> None:
    memory.write("a note that stays")
    assert manage.forget(memory, [0, -1, 2**70]) == []
    memory.close()
    assert "no entry with id" in invoke("forget", "99999999999999999999999", code=1).output
    assert "not an entry id" in invoke("forget", "abc", code=1).output
    assert len(json.loads(invoke("list", "--json").output)) == 1
