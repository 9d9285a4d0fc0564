"""The coding-agent evaluation: its data is valid and realistic in shape, its metrics are right on
hand-made cases, and a small end-to-end run goes through crib's real write and retrieve paths."""

from __future__ import annotations

import json
import os
import re
from collections import Counter
from pathlib import Path
from typing import Any

import pytest

from crib_eval import coding
from crib_eval.coding import (
    CodingDataError,
    CodingMemory,
    CodingPrompt,
    CodingSet,
    Outcome,
)


@pytest.fixture(scope="module")
def data() -> CodingSet:
    return coding.load()


# -- the data ----------------------------------------------------------------------------------


def test_set_is_large_enough_and_covers_every_kind_and_type(data: CodingSet) -> None:
    assert len(data.memories) >= 200
    assert len(data.prompts) >= 150
    assert set(Counter(p.kind for p in data.prompts)) == set(coding.KINDS)
    assert set(Counter(m.type for m in data.memories)) == set(coding.MEMORY_TYPES)
    assert len({m.project for m in data.memories} - {"general"}) >= 3


def test_memories_span_about_six_months_and_now_is_after_them(data: CodingSet) -> None:
    dates = sorted(m.created_at for m in data.memories)
    assert dates[0][:7] <= "2026-05" and dates[-1][:7] >= "2026-11"
    assert data.now > dates[-1]


def test_keys_unique_and_labels_point_at_memories(data: CodingSet) -> None:
    keys = [m.key for m in data.memories]
    assert len(keys) == len(set(keys))
    for prompt in data.prompts:
        assert set(prompt.relevant) | set(prompt.acceptable) <= set(keys), prompt.id


def test_supersede_links_point_back_in_time_and_stale_prompts_ask_for_the_newest(data: CodingSet) -> None:
    by_key = data.by_key()
    chains = [m for m in data.memories if m.supersedes]
    assert len(chains) >= 10
    for m in chains:
        assert by_key[m.supersedes].created_at < m.created_at
    current = data.current_of()
    stale = [p for p in data.prompts if p.kind == "stale"]
    assert len(stale) >= 10
    for prompt in stale:
        assert all(key not in current for key in prompt.relevant), prompt.id  # the answer is never superseded
        assert any(key in current for key in prompt.acceptable), prompt.id  # and names the older belief


def test_splits_are_stratified_by_kind(data: CodingSet) -> None:
    for kind in coding.KINDS:
        splits = Counter(p.split for p in data.prompts if p.kind == kind)
        assert abs(splits["dev"] - splits["test"]) <= 1, kind


def test_noanswer_prompts_include_on_domain_tasks(data: CodingSet) -> None:
    silent = [p for p in data.prompts if p.kind == "noanswer"]
    assert len(silent) >= 25
    assert sum(p.domain == "on" for p in silent) >= 0.3 * len(silent)
    assert all(not p.relevant and not p.acceptable for p in silent)


def _write_set(folder: Path, memories: list[dict], prompts: list[dict], now: str = "2026-11-20T12:00:00Z") -> Path:
    folder.mkdir(parents=True, exist_ok=True)
    (folder / "memories-x.jsonl").write_text("".join(json.dumps(m) + "\n" for m in memories), encoding="utf-8")
    (folder / "prompts.jsonl").write_text("".join(json.dumps(p) + "\n" for p in prompts), encoding="utf-8")
    (folder / "meta.json").write_text(json.dumps({"now": now}), encoding="utf-8")
    return folder


MEM = {"key": "a-1", "project": "x", "type": "note", "created_at": "2026-06-01T00:00:00Z", "content": "x uses Postgres."}
PROMPT = {"id": "q1", "prompt": "which database?", "kind": "question", "relevant": ["a-1"], "split": "dev"}


@pytest.mark.parametrize(
    ("memories", "prompts", "message"),
    [
        ([MEM, MEM], [PROMPT], "duplicate memory key"),
        ([MEM], [{**PROMPT, "relevant": ["a-2"]}], "unknown memory key"),
        ([MEM, {**MEM, "key": "a-2", "supersedes": "a-9"}], [PROMPT], "supersedes unknown key"),
        ([MEM, {**MEM, "key": "a-2", "supersedes": "a-1", "created_at": "2026-05-01T00:00:00Z"}], [PROMPT], "not older"),
        ([MEM], [{**PROMPT, "kind": "chitchat"}], "kind"),
        ([MEM], [{**PROMPT, "split": "train"}], "split"),
        ([MEM], [{**PROMPT, "kind": "noanswer", "domain": "off"}], "noanswer"),
        ([MEM], [{**PROMPT, "relevant": [], "kind": "noanswer"}], "domain"),
    ],
)
def test_malformed_sets_are_rejected(tmp_path: Path, memories: list[dict], prompts: list[dict], message: str) -> None:
    with pytest.raises(CodingDataError, match=message):
        coding.load(_write_set(tmp_path / "set", memories, prompts))


# -- metrics -----------------------------------------------------------------------------------


def test_hit_recall_precision() -> None:
    assert coding.hit(["a", "b"], ["x", "b"]) and not coding.hit(["a"], ["x"])
    assert coding.recall(["a", "b"], ["b", "x"]) == 0.5
    assert coding.recall([], ["x"]) == 0.0
    assert coding.precision(["a"], ["b"], ["a", "b", "x", "y"]) == 0.5
    assert coding.precision(["a"], [], []) is None
    assert coding.precision([], [], ["x"]) == 0.0


def test_stale_shown_alone_needs_the_newest_of_the_chain() -> None:
    current = {"v1": "v3", "v2": "v3"}  # v1 -> v2 -> v3
    assert coding.stale_alone(["v1"], current) == ["v1"]
    assert coding.stale_alone(["v1", "v2"], current) == ["v1", "v2"]  # the successor is itself stale
    assert coding.stale_alone(["v2", "v3"], current) == []
    assert coding.stale_alone(["other"], current) == []
    assert coding.stale_alone(["v1"], current, marked=["v1"]) == []  # shown, but marked as superseded


def test_current_of_follows_chains() -> None:
    m = lambda key, sup=None, day=1: CodingMemory(key, "p", "decision", f"2026-06-{day:02d}T00:00:00Z", key, sup)
    data = CodingSet([m("v1"), m("v2", "v1", 2), m("v3", "v2", 3), m("w")], [], {"now": "2026-07-01T00:00:00Z"})
    assert data.current_of() == {"v1": "v3", "v2": "v3"}


def _outcome(kind: str, relevant: list[str], injected: list[str], acceptable: list[str] = (), domain: str = "") -> Outcome:  # type: ignore[assignment]
    prompt = CodingPrompt(kind + str(len(injected)), "p", kind, tuple(relevant), tuple(acceptable), "dev", domain)
    return Outcome(prompt, injected=list(injected), ranked={"fused": list(injected), "fts": []}, seconds=0.01)


def test_summary_on_hand_made_outcomes() -> None:
    outcomes = [
        _outcome("task", ["a"], ["a", "b", "c", "d"], acceptable=["b"]),  # hit, precision 0.5
        _outcome("task", ["e"], []),  # miss, silent: not in precision
        _outcome("stale", ["new"], ["old"]),  # miss, and the stale entry shown alone
        _outcome("noanswer", [], [], domain="on"),  # silent
        _outcome("noanswer", [], ["x"], domain="off"),  # noisy: precision 0
    ]
    s = coding.summarise(outcomes, {"old": "new"})
    assert s.n == 5 and s.answerable == 3
    assert s.hit == pytest.approx(100 / 3)
    assert s.precision == pytest.approx(100 * (0.5 + 0 + 0) / 3)
    assert s.silence == 50.0 and s.silence_on == 100.0 and s.silence_off == 0.0
    assert s.stale_alone == 1
    assert s.mean_injected == pytest.approx(6 / 5)
    assert s.mean_injected_when_any == pytest.approx(2.0)
    assert s.search_hit1 == pytest.approx(100 / 3)
    assert s.channel_hits["fts"] == (0.0, 0.0)


def test_percentile_and_fixed_now(monkeypatch: pytest.MonkeyPatch) -> None:
    assert coding.percentile([1, 2, 3, 4, 5, 6, 7, 8, 9, 10], 0.9) == 9
    assert coding.percentile([], 0.9) == 0.0
    monkeypatch.setenv("CRIB_NOW", "before")
    with coding.fixed_now("2026-11-20T12:00:00Z"):
        assert os.environ["CRIB_NOW"] == "2026-11-20T12:00:00Z"
    assert os.environ["CRIB_NOW"] == "before"


# -- end to end on a subset --------------------------------------------------------------------


@pytest.fixture
def subset(tmp_path: Path, data: CodingSet) -> Path:
    """Twenty-odd memories of the real set and a handful of its prompts, one of each shape."""
    wanted = {"iden-02", "stal-07", "noan-14", "ques-08", "time-13"}
    prompts = [p for p in data.prompts if p.id in wanted]
    keys = {k for p in prompts for k in (*p.relevant, *p.acceptable)}
    memories = [m for m in data.memories if m.key in keys or m.key.startswith("web-0") and m.key < "web-020"]
    rows = [
        {"key": m.key, "project": m.project, "type": m.type, "created_at": m.created_at, "content": m.content,
         **({"supersedes": m.supersedes} if m.supersedes in {x.key for x in memories} else {})}
        for m in memories
    ]
    prompt_rows = [
        {"id": p.id, "prompt": p.prompt, "kind": p.kind, "relevant": list(p.relevant), "acceptable": list(p.acceptable),
         "split": p.split, **({"domain": p.domain} if p.domain else {})}
        for p in prompts
    ]
    return _write_set(tmp_path / "subset", rows, prompt_rows)


def test_end_to_end_on_a_subset(subset: Path, tmp_path: Path) -> None:
    report = coding.run(data_dir=subset, cache_dir=tmp_path / "cache")
    by_id = {o.prompt.id: o for o in report.outcomes}
    assert set(by_id) == {"iden-02", "stal-07", "noan-14", "ques-08", "time-13"}
    assert "web-004" in by_id["iden-02"].injected  # ERR_PNPM_OUTDATED_LOCKFILE names its memory exactly
    assert by_id["iden-02"].ranked["fused"][0] == "web-004"
    assert set(by_id["iden-02"].ranked) >= {"fused", "fts", "vector"}
    assert all(k in {m.key for m in report.data.memories} for o in report.outcomes for k in o.injected)
    table = report.table(offenders=3)
    assert "| **all** |" in table and "search ranking" in table
    assert "| fused minus each ranking, points" in table  # the fusion's lead over each ranking, with its interval
    assert "| plain BM25 (harness, no crib code) | " in table.split("fused minus each ranking")[1]
    assert "CRIB_NOW" not in os.environ  # restored after the run
    # cached: a second run reuses the store (same ids), a changed data file rebuilds it
    folder = next((tmp_path / "cache" / "coding").iterdir())
    again = coding.run(data_dir=subset, cache_dir=tmp_path / "cache")
    assert [o.injected for o in again.outcomes] == [o.injected for o in report.outcomes]
    assert len(list((tmp_path / "cache" / "coding").iterdir())) == 1 and folder.exists()


def test_cli_eval_set_coding(subset: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    from click.testing import CliRunner

    from crib_plugin.hosts.cli.app import cli, load_plugin_commands

    load_plugin_commands()  # `eval` is added through register_commands, as the `crib` command does

    monkeypatch.setattr(coding, "DATA_DIR", subset)
    out = tmp_path / "out.json"
    result = CliRunner().invoke(
        cli, ["eval", "--set", "coding", "--split", "dev", "--cache", str(tmp_path / "c"), "--json", str(out), "--offenders", "2"]
    )
    assert result.exit_code == 0, result.output
    assert "Coding-agent evaluation" in result.output and "split: dev" in result.output
    dumped = json.loads(out.read_text())
    assert dumped["split"] == "dev" and all(p["split"] == "dev" for p in dumped["prompts"])
    assert {"injected", "ranked", "precision", "stale_alone"} <= set(dumped["prompts"][0])


def test_a_cue_model_writes_every_cue_of_the_store_it_builds(subset: Path, tmp_path: Path, fake_ollama_env: Any) -> None:
    """`crib eval --set coding --cue-model M`: the set's own cues are left out and the model writes
    each memory's (here the fake Ollama, answering every memory with a cue naming its first words)."""
    from crib_plugin import Memory

    fake_ollama_env.respond_with(lambda req: {"when": "working on " + req.json["messages"][-1]["content"][:40]})
    report = coding.run(data_dir=subset, cache_dir=tmp_path / "cache", cue_model="gemma3:1b")
    assert report.outcomes and "CRIB_CUE_MODEL" not in os.environ  # set for the build only
    (folder,) = (tmp_path / "cache" / "coding").iterdir()
    assert folder.name.endswith("-cues-gemma3_1b")  # its own cache: never mixed with the set's cues
    with Memory(folder / "coding.db") as memory:
        entries = list(memory.store.iter_entries())
        assert entries and all(e.metadata.get("when_by") == "gemma3:1b" and e.metadata["when"].startswith("working on ")
                               for e in entries)
    assert len(fake_ollama_env.requests_to("/api/chat")) == len(entries)


def test_judge_ceiling_bench_runs_an_oracle_judge(subset: Path, tmp_path: Path) -> None:
    """`bench/judge_ceiling.py`: a perfect oracle judge is never wrong; one that picks every
    candidate (false picks 100 %) injects what is irrelevant and is silent on nothing."""
    import subprocess
    import sys

    script = Path(__file__).resolve().parent.parent / "bench" / "judge_ceiling.py"
    result = subprocess.run([sys.executable, str(script), "--data", str(subset), "--cache", str(tmp_path / "cache"),
                             "--depth", "4", "--errors", "0,1"], capture_output=True, text=True, timeout=300)
    assert result.returncode == 0, result.stderr
    rows = [[c.strip() for c in line.strip("|").split("|")] for line in result.stdout.splitlines()
            if line.startswith("| 4 ")]
    perfect, everything = rows
    assert perfect[4] == "100.0" and perfect[5].startswith("100.0")  # precision, silence
    assert float(everything[4]) < 100 and everything[5].startswith("0.0")


def test_eval_judge_model_runs_the_set_through_the_judge(subset: Path, tmp_path: Path, fake_ollama_env: Any,
                                                         monkeypatch: pytest.MonkeyPatch) -> None:
    """`crib eval --set coding --judge-model M`: every prompt's block is the judge's (here: nothing)."""
    from click.testing import CliRunner

    from crib_plugin.hosts.cli.app import cli, load_plugin_commands
    from crib_plugin.models.ollama.judge import judge_schema

    load_plugin_commands()
    monkeypatch.setattr(coding, "DATA_DIR", subset)
    fake_ollama_env.add_model("qwen2.5:3b")
    fake_ollama_env.respond_with(lambda req: {"relevant": []})
    out = tmp_path / "out.json"
    result = CliRunner().invoke(cli, ["eval", "--set", "coding", "--cache", str(tmp_path / "cache"), "--judge-model", "qwen2.5:3b", "--json", str(out)])
    assert result.exit_code == 0, result.output
    prompts = json.loads(out.read_text())["prompts"]
    assert len(prompts) == 5 and all(p["injected"] == [] for p in prompts)  # the judge picked nothing, every time
    asked = [r for r in fake_ollama_env.requests_to("/api/chat")
             if r.json.get("format") == judge_schema(len(re.findall(r"^\d+\. ", r.json["messages"][-1]["content"], re.M)))]
    assert len(asked) == len(prompts)
    assert "CRIB_JUDGE_MODEL" not in os.environ  # set for the run only


def test_the_session_context_figure_counts_what_session_start_reinjects(subset: Path, tmp_path: Path) -> None:
    """Beside the issue's metrics: is a relevant memory in a Claude Code session's context at all —
    the prompt's block, or the standing memories (newest preferences, decisions, corrections) that
    SessionStart re-injects?"""
    from crib_eval.noanswer_inject import open_memory

    report = coding.run(data_dir=subset, cache_dir=tmp_path / "cache")
    data = coding.load(subset)
    (folder,) = (tmp_path / "cache" / "coding").iterdir()
    ids = json.loads((folder / "ids.json").read_text())
    with open_memory(folder / "coding.db") as memory:
        standing = coding.standing_keys(memory, ids)
    types = {m.key: m.type for m in data.memories}
    superseded = {m.supersedes for m in data.memories if m.supersedes}
    assert standing and all(types[k] in {"preference", "decision", "correction"} and k not in superseded for k in standing)
    for o in report.outcomes:
        assert o.in_session == bool(standing & set(o.prompt.relevant))
    assert any(o.in_session for o in report.outcomes)  # the subset's decisions are standing
    assert "In a Claude Code session's context" in report.table()


def test_pointer_bar_bench_sweeps_the_pointer_depth(subset: Path, tmp_path: Path) -> None:
    """`bench/pointer_bar.py`: with no pointer allowed, hit ∪ pointers is the entries' hit and no
    block holds a pointer; with eight, pointers appear (the module's values are restored after)."""
    import subprocess
    import sys

    script = Path(__file__).resolve().parent.parent / "bench" / "pointer_bar.py"
    result = subprocess.run([sys.executable, str(script), "--data", str(subset), "--cache", str(tmp_path / "cache"),
                             "--split", "all", "--no-locomo", "--max", "0", "--max", "8"],
                            capture_output=True, text=True, timeout=300)
    assert result.returncode == 0, result.stderr
    rows = [[c.strip() for c in line.strip("|").split("|")] for line in result.stdout.splitlines()
            if line.startswith(("| 0 ", "| 8 "))]
    none, eight = rows
    assert none[0] == "0" and none[3] == none[4] and none[7] == "0.0"
    assert eight[0] == "8" and float(eight[7]) > 0 and float(eight[4]) >= float(eight[3])
