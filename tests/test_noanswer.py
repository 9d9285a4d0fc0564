"""The no-answer set and coding-memory queries: data files, scoring, and the `crib eval-noanswer` wiring.

The benchmark's thresholds (≥ 95% of the no-answer set injects nothing) are *not* asserted here:
they are figures for `crib eval-noanswer`. These tests prove the data is well-formed and the
scoring counts what `retrieve` injects, on a coding store built once in a temporary directory.
"""

from __future__ import annotations

import json
import os
import re
from pathlib import Path
from typing import Iterator

import pytest
from click.testing import CliRunner

from crib_eval import noanswer
from crib_eval.noanswer import (
    CodingQuery,
    Injection,
    NoAnswerPrompt,
    NoAnswerReport,
    build_coding_store,
    inject,
    load_coding_memory,
    load_coding_queries,
    load_noanswer,
    open_memory,
    run_coding_queries,
    run_noanswer,
)
from crib_plugin.core.records import ENTRY_TYPES
from crib_plugin.core.timeutil import normalise_iso
from crib_plugin.read.query import has_cjk

# one worker runs the whole module under -n (pyproject: --dist loadgroup): its module fixture builds the coding store
pytestmark = pytest.mark.xdist_group("test_noanswer")

# -- the data files ----------------------------------------------------------------------------


def test_noanswer_set_is_large_labelled_and_unique() -> None:
    prompts = load_noanswer()
    assert len(prompts) >= 120
    assert {p.target for p in prompts} <= {"locomo", "coding", "both"}
    assert {p.target for p in prompts} == {"locomo", "coding", "both"}
    assert len({p.prompt.lower() for p in prompts}) == len(prompts), "duplicate prompts"
    assert all(p.why for p in prompts), "every prompt says why it has no answer"
    assert sum(p.runs_on("locomo") for p in prompts) >= 100
    assert sum(p.runs_on("coding") for p in prompts) >= 100
    assert any(has_cjk(p.prompt) for p in prompts if p.runs_on("coding"))


def test_noanswer_rows_are_exactly_prompt_target_why() -> None:
    for line in noanswer.NOANSWER_FILE.read_text(encoding="utf-8").splitlines():
        assert set(json.loads(line)) == {"prompt", "target", "why"}


def test_coding_memory_is_importable_records() -> None:
    records = load_coding_memory()
    assert 35 <= len(records) <= 60
    for record in records:
        assert isinstance(record["content"], str) and record["content"].strip()
        assert record["type"] in ENTRY_TYPES
        assert normalise_iso(record["created_at"])
        assert isinstance(record["metadata"], dict)
    # every type the set was built with; `preference` came later and has no entry here yet (adding one
    # would move the measured no-answer figures)
    assert set(ENTRY_TYPES) - {"preference"} <= {r["type"] for r in records} <= set(ENTRY_TYPES)
    langs = {r["metadata"].get("lang") for r in records}
    assert {"zh", "ja", "ko"} <= langs


def test_coding_queries_point_at_real_entries() -> None:
    records = load_coding_memory()
    queries = load_coding_queries(entries=len(records))
    assert len(queries) >= 25
    kinds = {q.kind for q in queries}
    assert {"paraphrase", "identifier", "cjk", "keyword"} <= kinds
    for query in [q for q in queries if q.kind == "identifier"]:
        # an identifier query names something that occurs verbatim in each expected entry
        identifiers = re.findall(r"[A-Za-z0-9]+(?:[._][A-Za-z0-9]+)+", query.prompt)
        assert identifiers, query.prompt
        for index in query.expected:
            assert all(i in records[index]["content"] for i in identifiers), query.prompt


def test_no_answer_prompt_is_not_a_coding_query() -> None:
    queries = {q.prompt.lower() for q in load_coding_queries()}
    for prompt in load_noanswer():
        if prompt.runs_on("coding"):
            assert prompt.prompt.lower() not in queries, prompt.prompt


def test_bad_target_is_rejected(tmp_path: Path) -> None:
    path = tmp_path / "bad.jsonl"
    path.write_text(json.dumps({"prompt": "x", "target": "elsewhere", "why": ""}) + "\n")
    with pytest.raises(ValueError, match="target"):
        load_noanswer(path)


# -- scoring, without a store ------------------------------------------------------------------


def test_report_fractions_and_offenders() -> None:
    a = NoAnswerPrompt("unrelated one", "both", "x")
    b = NoAnswerPrompt("unrelated two", "coding", "y")
    report = NoAnswerReport(prompts=[a, b], stores={"locomo": 2, "coding": 1})
    report.add(a, "locomo", Injection("conv-1", a.prompt))
    report.add(a, "locomo", Injection("conv-2", a.prompt, block_chars=120, entry_ids=[7], hit_channels=[["fts"]], contents=["x"]))
    report.add(a, "coding", Injection("coding", a.prompt))
    report.add(b, "coding", Injection("coding", b.prompt, block_chars=90, entry_ids=[1, 2], hit_channels=[["fts", "vector"], ["vector"]], contents=["p", "q"]))
    assert report.fraction() == 50.0
    assert report.fraction(kind="locomo") == 50.0
    assert report.fraction(kind="coding") == 50.0
    assert report.clean_prompts() == (0, 2)
    assert report.clean_prompts("both") == (0, 1)
    assert len(report.offenders) == 2
    assert report.offender_channels() == {"fts": 2, "vector": 1}
    assert report.vocabulary_share() == "n/a"  # no trial says whether the fts channel ran
    report.trials[0][2].fts_matched = True
    report.trials[2][2].fts_matched = False
    assert report.vocabulary_share() == "50%"
    table = report.table()
    assert "| **all trials** | 2 | 4 | 2 | **50.0** |" in table
    assert "unrelated two" in table and "vector 2" in table


# -- on a real (small) coding store ------------------------------------------------------------


@pytest.fixture(scope="module")
def coding_store(tmp_path_factory: pytest.TempPathFactory) -> Iterator[tuple[Path, list[int]]]:
    """The coding memory written once for the module (rules extractor, no Ollama)."""
    with pytest.MonkeyPatch.context() as mp:
        for name in list(os.environ):
            if name.startswith("CRIB_"):
                mp.delenv(name)
        mp.setenv("CRIB_EXTRACTOR", "rules")
        mp.setenv("OLLAMA_HOST", "http://127.0.0.1:9")
        db = tmp_path_factory.mktemp("coding") / "coding.db"
        ids = build_coding_store(db)
        yield db, ids


def test_coding_store_has_every_entry(coding_store) -> None:
    db, ids = coding_store
    assert len(ids) == len(load_coding_memory()) == len(set(ids))
    with open_memory(db) as memory:
        assert memory.store.count_entries() == len(ids)


def test_inject_reports_channels_of_what_was_injected(coding_store) -> None:
    db, ids = coding_store
    with open_memory(db) as memory:
        result = inject(memory, "ERR_DOCKET_LEASE_7", "coding")
    assert result.injected and result.block_chars > 0
    assert result.fts_matched
    position = result.entry_ids.index(ids[2])
    assert "fts" in result.hit_channels[position]
    assert "ERR_DOCKET_LEASE_7" in result.contents[position]


def test_run_noanswer_on_a_handful_of_prompts(coding_store) -> None:
    db, _ = coding_store
    prompts = [p for p in load_noanswer() if p.runs_on("coding")][:6]
    prompts.append(NoAnswerPrompt("a prompt for the chats only", "locomo", "never runs on the coding store"))
    report = run_noanswer(prompts, coding_db=db)
    assert report.stores == {"coding": 1}
    assert len(report.trials) == 6, "locomo-only prompts do not run when no LoCoMo store is given"
    clean = sum(not r.injected for _, _, r in report.trials)
    assert report.fraction() == pytest.approx(100.0 * clean / 6)
    assert report.fraction(kind="coding") == report.fraction()
    for _, _, result in report.offenders:
        assert result.entry_ids or result.facts or result.pointer_ids  # a block of pointers alone is not silence
    assert "No-answer set" in report.table()


def test_run_coding_queries_finds_expected_entries(coding_store) -> None:
    db, ids = coding_store
    queries = [CodingQuery("ERR_DOCKET_LEASE_7", (2,), "identifier"), CodingQuery("what does ERR_VAL_9021 mean?", (14,), "identifier")]
    report = run_coding_queries(db, ids, queries)
    assert report.hit_rate() == 100.0
    assert all(o.first_position is not None for o in report.outcomes)
    assert "| **all** | 2 | 100.0 |" in report.table()


def test_cli_eval_noanswer_without_locomo(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """`crib eval-noanswer --no-locomo` prints both tables (on trimmed data files, to stay fast)."""
    memory_file = tmp_path / "memory.jsonl"
    memory_file.write_text("".join(json.dumps(r, ensure_ascii=False) + "\n" for r in load_coding_memory()[:4]), encoding="utf-8")
    prompts_file = tmp_path / "noanswer.jsonl"
    prompts_file.write_text("".join(
        json.dumps({"prompt": p.prompt, "target": p.target, "why": p.why}) + "\n" for p in load_noanswer()[:3]
    ))
    queries_file = tmp_path / "queries.jsonl"
    queries_file.write_text(json.dumps({"prompt": "ERR_DOCKET_LEASE_7", "expected": [2], "kind": "identifier"}) + "\n")
    monkeypatch.setattr(noanswer, "CODING_MEMORY_FILE", memory_file)
    monkeypatch.setattr(noanswer, "NOANSWER_FILE", prompts_file)
    monkeypatch.setattr(noanswer, "CODING_QUERIES_FILE", queries_file)
    from crib_plugin.hosts.cli.app import cli, load_plugin_commands

    load_plugin_commands()  # `eval` is added through register_commands, as the `crib` command does

    out = tmp_path / "offenders.json"
    result = CliRunner().invoke(cli, ["eval-noanswer", "--no-locomo", "--json", str(out)])
    assert result.exit_code == 0, result.output
    assert "No-answer set" in result.output and "Coding-memory queries" in result.output
    assert "| **all** | 1 | 100.0 |" in result.output
    data = json.loads(out.read_text(encoding="utf-8"))
    assert set(data) >= {"fraction", "by_store", "offenders", "coding_queries"}
