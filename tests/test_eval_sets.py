"""The evaluation harness's own parts: the plain-BM25 baseline, the dev/test splits, the public
sets' loaders (on tiny files in their published formats) and the commit-subject no-answer set."""

from __future__ import annotations

import ast
import json
from pathlib import Path

import pytest

from crib_eval import baseline, commits, locomo, madial, paired, realmem, splits


def test_baseline_ranks_by_bm25_over_non_stop_words() -> None:
    index = baseline.PlainBM25([("a", "We are choosing SQLite for storage"), ("b", "storage storage of the logs"), ("c", "what did we do")])
    assert baseline.query_expression("What did we choose for the storage?") == '"choose" OR "storage"'
    assert index.search("what did we choose for storage") == ["a", "b"]  # porter: choose ~ choosing; both words beat one twice
    assert index.search("what did we do") == []  # stop words only: nothing to search
    assert index.search("storage", exclude=["b"]) == ["a"]


def test_baseline_uses_no_crib_code() -> None:
    tree = ast.parse(Path(baseline.__file__).read_text(encoding="utf-8"))
    imported = {a.name for n in ast.walk(tree) if isinstance(n, ast.Import) for a in n.names}
    imported |= {n.module or "" for n in ast.walk(tree) if isinstance(n, ast.ImportFrom)}
    assert not any(name.startswith("crib") or name.startswith(".") for name in imported), imported


def test_splits_are_deterministic_halves() -> None:
    keys = [f"conv-{i}" for i in range(10)]
    dev = splits.dev_keys("locomo", keys)
    assert len(dev) == 5 and dev == splits.dev_keys("locomo", list(reversed(keys)))
    assert splits.split_of("locomo", keys[0], keys) in ("dev", "test")


def test_realmem_evidence_is_the_source_turn_and_the_answer_is_excluded(tmp_path: Path) -> None:
    point = {"index": "x", "content": "User studies wine for WSET", "source_turn": 2, "source_content_snapshot": "I am studying for WSET level 2",
             "session_uuid": "s1"}
    data = {"_metadata": {"person_name": "Ann"}, "dialogues": [
        {"session_uuid": "s1", "current_time": "2025-01-02 (Thursday)", "extracted_memory": [point], "dialogue_turns": [
            {"speaker": "User", "content": "hello"}, {"speaker": "User", "content": "I am studying for WSET level 2"}]},
        {"session_uuid": "s2", "current_time": "2025-02-01 (Saturday)", "extracted_memory": [], "dialogue_turns": [
            {"speaker": "User", "content": "What should I study next?", "is_query": True},
            {"speaker": "Assistant", "content": "Your WSET plan...", "memory_used": [{"session_uuid": "s1", "content": "User studies wine for WSET"}]}]},
    ]}
    (tmp_path / "Ann_dialogues_256k.json").write_text(json.dumps(data), encoding="utf-8")
    (conv,) = realmem.load(tmp_path)
    assert [t.dia_id for t in conv.turns] == ["s1:0", "s1:1", "s2:0", "s2:1"]
    (question,) = conv.questions
    assert question.evidence == {"s1:1"} and question.exclude == {"s2:0", "s2:1"}
    assert conv.turns[0].created_at.startswith("2025-01-02")


def test_madial_query_is_the_users_lines_before_the_test_turn(tmp_path: Path) -> None:
    (tmp_path / madial.MEMORY_FILE).write_text('{"1": {"time": "2023-12-25", "event": "Bart danced at the party."}}\n'
                                               '{"2": {"time": "2023-01-01", "event": "Bart lost his keys."}}\n', encoding="utf-8")
    dialogue = ["<BOD>\n", '<Bart>: "I will dance again!"\n', '<Assistant>: "Great."\n', '<Bart>: "Any tips?"\n',
                '<Assistant>: "Remember the party?"\n', "<EOD>\n"]
    (tmp_path / madial.DIALOGUE_FILE).write_text(json.dumps({"dialogue": dialogue, "test-turn": [4], "relevant-id": [1, 9], "user-id": 1}) + "\n",
                                                 encoding="utf-8")
    (conv,) = madial.load(tmp_path)
    (question,) = conv.questions
    assert question.question == "I will dance again! Any tips?"
    assert question.evidence == {"1"}  # 9 names no memory of the archive
    assert [s.key for s in splits.split_conversations("madial", [conv], "dev")[0].questions] + \
           [s.key for s in splits.split_conversations("madial", [conv], "test")[0].questions] == ["dialogue-0"]


def test_commit_subjects_are_attributed_and_split_by_repository() -> None:
    rows = commits.load()
    assert len(rows) >= 100 and all(r["repo"] and len(r["commit"]) == 40 and r["licence"] for r in rows)
    dev, test = commits.load("dev"), commits.load("test")
    assert len(dev) + len(test) == len(rows)
    assert not {r["repo"] for r in dev} & {r["repo"] for r in test}


def test_paired_difference_is_a_bootstrap_interval_around_the_mean_lead() -> None:
    same = [1.0, 0.0, 0.5] * 10
    assert paired.paired_difference(same, same) == paired.Difference(0.0, 0.0, 0.0)
    better = paired.paired_difference([1.0] * 40, [0.0] * 40)
    assert (better.mean, better.low, better.high) == (100.0, 100.0, 100.0) and better.clear
    # one question of ten differs: a 10-point lead that the questions' noise explains
    lucky = paired.paired_difference([1.0] + [0.0] * 9, [0.0] * 10)
    assert lucky.mean == pytest.approx(10.0) and lucky.low == 0.0 and lucky.high >= 20.0 and not lucky.clear
    # the same lead on four times as many questions: a narrower interval, and the same every run
    many = paired.paired_difference(([1.0] + [0.0] * 9) * 4, [0.0] * 40)
    assert many.high - many.low < lucky.high - lucky.low
    assert many == paired.paired_difference(([1.0] + [0.0] * 9) * 4, [0.0] * 40)
    assert "+10.0 [" in lucky.text()
    with pytest.raises(ValueError, match="differ in length"):
        paired.paired_difference([1.0], [1.0, 0.0])


def test_the_reports_print_the_fusions_lead_over_each_ranking() -> None:
    report = locomo.Report()
    question = locomo.Question(question="q", evidence={"D1:1"}, category=1)
    for _ in range(30):
        report.add(locomo.BASELINE, ["D1:9"], question)
        report.add("vectors alone", ["D1:1"], question)
        report.add(locomo.FUSED, ["D1:1"], question)
        report.add(locomo.INJECTED, [], question)
    table = report.table()
    assert "| plain BM25 (harness, no crib code) | **+100.0 [+100.0, +100.0]** | **+100.0 [+100.0, +100.0]** |" in table
    assert "| vectors alone | +0.0 [+0.0, +0.0] | +0.0 [+0.0, +0.0] |" in table
    assert "| fused, as injected | +" not in table  # the block is not a ranking of the same kind
