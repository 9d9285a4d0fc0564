"""Recall cues (``when``): the writer's line saying in which situations a memory should come back.

Real MiniLM throughout: "install a new Python library" is far from "the user's package manager is
uv" (cosine ≈ 0.41) and close to its cue "installing or adding a Python package or library to a
project" (≈ 0.81). Each test below fails when the part it names is taken out (no cue space
searched, no cue written, no discount, no reindex of cues, cue words not in the evidence).
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from crib_plugin.core.cues import CUE_DISCOUNT, MAX_CUE_CHARS, cue_space_key, evidence_text
from crib_plugin.core.errors import InputError
from crib_plugin.write.clean import clean_cue, with_clean_cue

UV = "The user's package manager for Python tools is uv: `uv add` for dependencies, `uvx ruff` for tools."
UV_WHEN = "installing or adding a Python package or library to a project"
OTHERS = [
    ("decision", "Staging cluster nodes shut down at night to save money; a CronJob scales deployments to zero."),
    ("error", "Notarisation failed on the macOS runner because the keychain was locked; unlock it before codesign."),
    ("note", "Invoice PDFs are rendered with WeasyPrint and stored in the billing-pdfs bucket."),
]
PROMPT = "install a new Python library"


def _store(memory: Any, *, cue: str | None) -> int:
    for kind, text in OTHERS:
        memory.write(text, type=kind)
    return int(memory.write(UV, type="preference", metadata={"when": cue} if cue else {}))


def _vector_hits(memory: Any, text: str) -> list[Any]:
    retrieval = memory.recall(text, channels=["vector"])
    return next(c for c in retrieval.channels if c.channel == "vector").hits


def _cue_table(memory: Any) -> str | None:
    space = memory.store.vector_space(cue_space_key(memory.embedder_key()))
    return space[0] if space else None


def test_a_cue_is_cleaned_redacted_bounded_and_an_empty_one_dropped() -> None:
    assert clean_cue("  adding a   dependency;\n running tools ") == "adding a dependency; running tools"
    assert "sk-" not in (clean_cue("calling OpenAI with key sk-proj-abcdefghijklmnopqrstuvwxyz0123456789ABCDEF") or "")
    with pytest.raises(InputError, match="500-character limit"):
        clean_cue("x" * (MAX_CUE_CHARS + 1))
    with pytest.raises(InputError, match="must be text"):
        clean_cue(["a", "list"])
    assert with_clean_cue({"when": "   ", "project": "billing"}) == {"project": "billing"}
    original = {"when": " a  b "}
    assert with_clean_cue(original) == {"when": "a b"} and original == {"when": " a  b "}  # the caller's dict is untouched


def test_a_cue_is_stored_in_its_own_vector_space_and_no_space_without_cues(memory: Any) -> None:
    memory.write(OTHERS[0][1], type="decision")
    assert _cue_table(memory) is None  # nothing written with a cue: no cue space, nothing extra searched
    entry_id = _store(memory, cue=UV_WHEN)
    assert memory.entry(entry_id).metadata["when"] == UV_WHEN
    table = _cue_table(memory)
    assert table is not None and memory.store.stored_vectors(table, [entry_id])
    assert len(memory.store.stored_vectors(table, [1, 2, 3, 4])) == 1  # only the entry with a cue


def test_a_task_phrased_like_the_cue_finds_the_memory(memory: Any) -> None:
    entry_id = _store(memory, cue=UV_WHEN)
    hits = _vector_hits(memory, PROMPT)
    top = hits[0]
    assert top.entry_id == entry_id and top.via == "cue"
    query = memory.embedder().embed_query(PROMPT)
    cue_cosine = float(query @ memory.embedder().embed_documents([UV_WHEN])[0])
    assert top.score == pytest.approx(cue_cosine - CUE_DISCOUNT, abs=1e-4) and top.score < cue_cosine - 0.05  # the discount applies
    block = memory.retrieve(PROMPT)
    assert "uv add" in block and UV_WHEN not in block  # the memory is injected; its cue never is


@pytest.mark.parametrize("with_cue", [False, True])
def test_the_block_holds_the_memory_only_with_its_cue(memory: Any, with_cue: bool) -> None:
    """At the block: a task that shares nothing with the memory does not get it in full without the
    cue (it may still be one of the block's one-line pointers, crib_plugin.read.pointers)."""
    destructive = "When a command is destructive (drops data, deletes resources), show it and wait for an explicit yes."
    for kind, text in OTHERS:
        memory.write(text, type=kind)
    cue = "dropping a table or database; deleting cloud resources; running a destructive command"
    memory.write(destructive, type="preference", metadata={"when": cue} if with_cue else {})
    memory.retrieve("drop the old usage_hourly table in staging")
    assert any("explicit yes" in h.entry.content for h in memory.last_retrieval.hits) is with_cue


def test_a_prompt_like_the_content_still_scores_by_the_content(memory: Any) -> None:
    entry_id = _store(memory, cue=UV_WHEN)
    top = _vector_hits(memory, "which package manager does the user use for Python tools? uv")[0]
    assert top.entry_id == entry_id and top.via == ""


def test_reindex_makes_no_cue_space_for_a_store_without_cues(memory: Any) -> None:
    from crib_plugin.write.manage import stats

    memory.write(OTHERS[0][1], type="decision")
    memory.reindex()
    assert _cue_table(memory) is None and stats(memory)["with_cue"] == 0


def test_reindex_embeds_cues_that_lack_a_vector(memory: Any) -> None:
    entry_id = _store(memory, cue=UV_WHEN)
    table = _cue_table(memory)
    assert table is not None
    with memory.store.transaction():
        memory.store.execute(f"DELETE FROM {table} WHERE rowid = ?", (entry_id,))
    assert not memory.store.stored_vectors(table, [entry_id])
    memory.reindex()
    assert memory.store.stored_vectors(table, [entry_id])
    assert _vector_hits(memory, PROMPT)[0].via == "cue"


def test_forget_removes_the_cue_vector_and_correct_keeps_the_cue(memory: Any) -> None:
    from crib_plugin.write.manage import correct, forget

    entry_id = _store(memory, cue=UV_WHEN)
    new_id = correct(memory, entry_id, "The user's package manager for Python tools is now pixi.")
    assert memory.entry(new_id).metadata["when"] == UV_WHEN
    table = _cue_table(memory)
    assert table is not None and memory.store.stored_vectors(table, [new_id])
    forget(memory, [entry_id, new_id])
    assert not memory.store.stored_vectors(table, [entry_id, new_id])


def _fts_ids(memory: Any, text: str) -> list[int]:
    retrieval = memory.recall(text, channels=["fts"])
    return [h.entry_id for h in next(c for c in retrieval.channels if c.channel == "fts").hits]


def test_full_text_finds_a_memory_by_its_cue_at_a_share_of_its_own_words(memory: Any) -> None:
    """The full-text channel reads the cue index too (``with_cues``): "installing a library" is in
    the cue, not the memory. A memory that says the words itself ranks above one whose cue does."""
    from crib_plugin.read.channels.fulltext import CUE_WEIGHT, with_cues

    uv = _store(memory, cue=UV_WHEN)
    assert _fts_ids(memory, "installing a library") == [uv]
    says = int(memory.write("Installing a library in billing needs a security review.", type="decision"))
    assert _fts_ids(memory, "installing a library") == [says, uv]
    assert with_cues([(1, 4.0)], [(2, 6.0), (1, 2.0)]) == [(1, 4.0 + CUE_WEIGHT * 2.0), (2, CUE_WEIGHT * 6.0)]


def test_cue_words_count_as_the_entry_s_words() -> None:
    from crib_plugin.core.records import Entry

    entry = Entry(1, "decision", "Billing tests run against a real Postgres in testcontainers.", "2026-01-01T00:00:00Z",
                  {"when": "writing or fixing billing tests; adding a migration"})
    assert "migration" in evidence_text(entry) and "migration" not in evidence_text(Entry(1, "decision", entry.content, entry.created_at, {}))
    assert evidence_text(entry, 7).startswith("Billing\ndecision\n")


def test_crib_write_when_and_its_errors(crib: Any, db: Path) -> None:
    done = crib("write", "--type", "preference", "--when", UV_WHEN, input=UV)
    assert done.returncode == 0, done.stderr
    listed = crib("list", "--json")
    assert json.loads(listed.stdout)[0]["metadata"]["when"] == UV_WHEN
    bad = crib("write", "--when", "x" * (MAX_CUE_CHARS + 1), input="Another memory.")
    assert bad.returncode != 0 and "500-character limit" in bad.stderr and "Traceback" not in bad.stderr
    assert len(json.loads(crib("list", "--json").stdout)) == 1  # nothing stored


def test_the_mcp_remember_tool_stores_the_cue(tmp_path: Path) -> None:
    from crib_plugin.hosts.mcp_server import remember
    from crib_plugin.scopes import open_scope

    result = remember(UV, type="preference", when=UV_WHEN)
    with open_scope("project") as memory:
        assert memory.entry(result["id"]).metadata["when"] == UV_WHEN


def test_the_coding_set_ships_a_cue_for_every_memory_and_can_be_run_without() -> None:
    from crib_eval.coding import load

    data = load()
    assert all(m.when for m in data.memories)
    assert all(m.record(["note", "decision", "error", "correction", "preference"])["metadata"]["when"] == m.when for m in data.memories)
    assert not any(m.when or "when" in m.record(["note"])["metadata"] for m in data.without_cues().memories)


def test_claude_is_told_about_the_cue_at_session_start_and_in_the_skill() -> None:
    from crib_plugin.hosts.claude import MEMORY_AVAILABLE

    assert "--when" in MEMORY_AVAILABLE and "come back" in MEMORY_AVAILABLE
    skill = (Path(__file__).resolve().parent.parent / "skills" / "crib-memory" / "SKILL.md").read_text(encoding="utf-8")
    assert "`remember(text, type, scope, when)`" in skill and "--when" in skill


def test_export_and_import_carry_the_cue_and_its_vector(crib: Any, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    assert crib("write", "--type", "preference", "--when", UV_WHEN, input=UV).returncode == 0
    exported = crib("export")
    assert exported.returncode == 0 and UV_WHEN in exported.stdout
    monkeypatch.setenv("CRIB_DB", str(tmp_path / "copy.db"))
    done = crib("import", "-", "--format", "jsonl", input=exported.stdout)
    assert done.returncode == 0, done.stderr
    from crib_plugin import Memory

    with Memory(tmp_path / "copy.db") as copy:
        assert _vector_hits(copy, PROMPT)[0].via == "cue"


def test_a_cue_set_after_the_fact_finds_the_memory_and_clearing_it_stops_that(memory: Any) -> None:
    from crib_plugin.write.manage import audit_log, set_cue

    entry_id = _store(memory, cue=None)
    before = memory.entry(entry_id)
    done = set_cue(memory, entry_id, "  " + UV_WHEN + "  ")
    assert done == {"id": entry_id, "when": UV_WHEN, "embedded": True}
    after = memory.entry(entry_id)
    assert (after.content, after.type, after.created_at) == (before.content, before.type, before.created_at)
    assert after.metadata["when"] == UV_WHEN
    assert _vector_hits(memory, PROMPT)[0].via == "cue"
    assert set_cue(memory, entry_id, "")["when"] is None
    assert "when" not in memory.entry(entry_id).metadata
    assert all(h.via == "" for h in _vector_hits(memory, PROMPT))  # the old cue's vector is gone
    assert [row["action"] for row in audit_log(memory, entry_id=entry_id)][:2] == ["cue", "cue"]
    with pytest.raises(InputError, match="no entry with id 999"):
        set_cue(memory, 999, UV_WHEN)


def test_crib_cue_sets_and_clears_with_clean_errors(crib: Any) -> None:
    assert crib("write", "--type", "preference", input=UV).returncode == 0
    done = crib("cue", "1", UV_WHEN)
    assert done.returncode == 0 and "entry 1: cue set" in done.stdout
    assert json.loads(crib("list", "--json").stdout)[0]["metadata"]["when"] == UV_WHEN
    assert "cue cleared" in crib("cue", "1", "--clear").stdout
    assert "when" not in json.loads(crib("list", "--json").stdout)[0]["metadata"]
    for args, message in ((("cue", "7", UV_WHEN), "no entry with id 7"), (("cue", "1", "x" * 501), "500-character limit")):
        bad = crib(*args)
        assert bad.returncode != 0 and message in bad.stderr and "Traceback" not in bad.stderr


def test_a_big_store_leaves_the_words_most_cues_hold_out_of_the_cue_search(memory: Any, monkeypatch: pytest.MonkeyPatch) -> None:
    """Above ``BIG_STORE`` entries the cue search, like the word search, leaves out the words more
    than ``RETRIEVAL_SHARE`` of the entries hold — counted among the cues, whose words are not the
    memories' ("when writing … code" in most of them): ranking every cue that holds one cost
    0.3 s at 10⁵ entries on PostgreSQL (``bench/cue_scale.py``). A rare cue word still finds its memory."""
    from types import SimpleNamespace

    import crib_plugin.text.common_terms as common

    ids = [int(memory.write(f"Note {n} on the weekly report.", type="note", metadata={"when": f"writing code for report {n}"}))
           for n in range(6)]
    zeppelin = int(memory.write("Airship telemetry is sampled at 2 Hz.", type="note", metadata={"when": "writing zeppelin code"}))
    prompt = "writing the zeppelin code"
    assert set(_fts_ids(memory, prompt)) == {*ids, zeppelin}  # a small store: every cue word searched
    monkeypatch.setattr(common, "BIG_STORE", 5)
    monkeypatch.setattr(common, "RETRIEVAL_SHARE", 0.5)  # more than 3 of the 7 cues: "writing", "code"
    expression = memory.recall(prompt, channels=["fts"]).query.fts_expression
    assert common.cue_expression(memory.store, prompt, expression) == '"zeppelin"'
    assert _fts_ids(memory, prompt) == [zeppelin]
    assert common.cue_expression(memory.store, "writing code", '"writing" OR "code"') == ""  # every word common: no cue search
    assert _fts_ids(memory, "writing code") == []
    plugin_store = SimpleNamespace(count_entries=lambda: 10**6)  # a store without the cue counter: as before
    assert common.cue_expression(plugin_store, "writing code", '"writing" OR "code"') == '"writing" OR "code"'
