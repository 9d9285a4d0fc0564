"""Deep recall (issue 19, part 3; seed 001's pattern): the manifest, the grep gate, graduated
dispatch and the budgets — offline, and with the Ollama path against the loopback fake server
(``tests/fake_ollama.py``) whose replies are scripted per call kind (expand, read, synthesise).
"""

from __future__ import annotations

import json
import re
from typing import Any, Callable

import pytest

from crib_plugin.hosts.deep import configured_model, deep_recall
from crib_plugin.hosts.deep.expand import named_types
from crib_plugin.hosts.deep.manifest import Candidate, build_manifest, gate
from crib_plugin.hosts.deep.ollama import EXPAND_SCHEMA, READ_SCHEMA, SYNTH_SCHEMA
from crib_plugin.hosts.deep.report import to_json, to_text

try:
    from fake_ollama import FakeOllama
except ImportError:  # pragma: no cover - run from the repository root
    from tests.fake_ollama import FakeOllama

MODEL = "qwen2.5:3b"
QUESTION = "how did our deployment set-up change this year?"
DEPLOYMENT = [  # eight memories about deployment, each naming it
    ("decision", "2026-01-10T09:00:00Z", "Deployment: the api is deployed with GitHub Actions to ECS Fargate (.github/workflows/deploy.yml)."),
    ("note", "2026-02-03T09:00:00Z", "Deployment of staging runs helm upgrade on the EKS cluster from ops/helm/api."),
    ("decision", "2026-03-15T09:00:00Z", "Moved the production deployment from ECS to EKS because Fargate cost twice as much."),
    ("error", "2026-04-02T09:00:00Z", "A deployment failed: helm upgrade said another operation is in progress; fixed by helm rollback."),
    ("decision", "2026-05-20T09:00:00Z", "Deployment windows are Tuesday and Thursday mornings, never Friday."),
    ("note", "2026-06-11T09:00:00Z", "Canary deployment: Argo Rollouts shifts 10% of traffic first, then 50%."),
    ("correction", "2026-07-01T09:00:00Z", "The deployment role is deploy-bot, not the admin role as noted before."),
    ("note", "2026-08-19T09:00:00Z", "Deployment secrets come from AWS Secrets Manager through external-secrets."),
]
UNRELATED = [
    ("note", "2026-02-01T09:00:00Z", "The cafeteria serves pizza on Fridays."),
    ("preference", "2026-03-01T09:00:00Z", "The user wants commit messages in the imperative mood."),
]


@pytest.fixture
def store(memory: Any) -> dict[str, int]:
    """The memories above; returns text-prefix → id."""
    ids = {}
    for kind, when, text in DEPLOYMENT + UNRELATED:
        ids[text[:30]] = memory.write(text, type=kind if kind != "preference" else "note", created_at=when)
    memory.close()
    return ids


def kind_of(request: Any) -> str:
    fmt = request.json.get("format")
    return {json.dumps(EXPAND_SCHEMA): "expand", json.dumps(READ_SCHEMA): "read", json.dumps(SYNTH_SCHEMA): "synth"}.get(json.dumps(fmt), "other")


def calls(fake: FakeOllama, kind: str) -> list[Any]:
    return [r for r in fake.requests_to("/api/chat") if kind_of(r) == kind]


def read_ids(fake: FakeOllama) -> list[str]:
    return [re.search(r"Memory (\w+) \[", r.json["messages"][-1]["content"]).group(1) for r in calls(fake, "read")]


def scripted(synth: Callable[[Any, int], dict[str, Any]]) -> Callable[[Any], Any]:
    """Replies per call kind: two expansion terms; a reader says a memory bears when it names
    deployment; the synthesis is ``synth(request, how many syntheses so far)``."""
    count = {"synth": 0}

    def reply(request: Any) -> Any:
        kind = kind_of(request)
        text = request.json["messages"][-1]["content"]
        if kind == "expand":
            return {"terms": ["rollout", "helm"]}
        if kind == "read":
            relevant = "eploy" in text.split("]:", 1)[-1]
            return {"relevant": relevant, "finding": text.split("]:", 1)[-1].strip()[:120]}
        if kind == "synth":
            count["synth"] += 1
            return synth(request, count["synth"])
        return {}
    return reply


def cited(request: Any) -> list[str]:
    return re.findall(r"^\[(\w+)\]", request.json["messages"][-1]["content"], re.M)


@pytest.fixture
def deep_model(fake_ollama_env: FakeOllama, monkeypatch: pytest.MonkeyPatch) -> FakeOllama:
    fake_ollama_env.add_model(MODEL)
    monkeypatch.setenv("CRIB_DEEP_MODEL", MODEL)
    return fake_ollama_env


def test_the_manifest_is_bounded_metadata_and_the_gate_keeps_out_what_confirms_nothing(store: dict[str, int]) -> None:
    manifest = build_manifest(QUESTION)
    listed = {c.id for c in manifest.candidates}
    assert {store[t[:30]] for _k, _w, t in DEPLOYMENT} <= listed
    assert store[UNRELATED[0][2][:30]] not in listed and store[UNRELATED[1][2][:30]] not in listed
    assert all(c.confirmed for c in manifest.candidates)
    data = manifest.to_json(max_bytes=700)
    assert len(json.dumps(data, ensure_ascii=False)) <= 700 and data["left_off"] > 0
    assert all(len(row["snippet"]) <= 101 and "content" not in row for row in data["candidates"])


def test_offline_expansion_adds_words_that_co_occur_with_the_question_s(store: dict[str, int]) -> None:
    manifest = build_manifest("deployment")
    expansion = [t for t in manifest.terms if t.source == "cooccur"]
    assert expansion and all(t.weight < 1 for t in expansion)
    assert {"helm", "eks"} & {t.text for t in expansion}  # beside "deployment" in two or more of its matches


def test_expansion_counts_the_memories_text_not_their_recall_cues(memory: Any) -> None:
    """Cues share their own boilerplate ("adding", "changing"); the store's document frequency is of
    the text, so a cue word the text rarely holds would look rare and topical."""
    for kind, when, text in DEPLOYMENT:
        memory.write(text, type=kind, created_at=when, metadata={"when": "adding or changing the deploy set-up"})
    memory.write("Adding a changelog entry is part of every PR.", type="note", created_at="2026-09-01T09:00:00Z")
    memory.close()
    expansion = {t.text for t in build_manifest("deployment").terms if t.source == "cooccur"}
    assert {"helm", "eks"} & expansion and not {"adding", "changing"} & expansion


def test_a_survey_question_s_frame_is_no_term_and_a_type_it_names_is_a_preference(memory: Any) -> None:
    """"every decision we made about …": "every" and "made" frame the question, "decision" names a
    type; neither is a word to confirm, so a memory holding only "every" never passes the gate, and a
    decision outranks a note that confirms as much."""
    for kind, when, text in DEPLOYMENT:
        memory.write(text, type=kind, created_at=when)
    frame = memory.write("Every migration's SQL is pasted in the PR; never SELECT *.", type="note", created_at="2026-09-01T09:00:00Z")
    memory.close()
    manifest = build_manifest("every decision we made about deployment")
    asked = [t.text for t in manifest.terms if t.source == "question"]
    assert asked == ["deployment"] and manifest.types == ("decision",)
    assert frame not in {c.id for c in manifest.candidates}
    assert manifest.to_json()["types"] == ["decision"]
    note, decision = (Candidate(i, "project", kind, "2026-01-01T00:00:00Z", "the deployment runs on EKS") for i, kind in ((2, "note"), (1, "decision")))
    assert [c.id for c in gate("q", manifest.terms, [note, decision], manifest.types).candidates] == [1, 2]  # the newer first, were it not for the type
    assert named_types("how did our errors and notes change?", ("note", "decision", "error")) == ("note", "error")


def test_no_model_returns_the_gated_evidence_and_says_nothing_synthesised_it(store: dict[str, int], crib: Any) -> None:
    result = deep_recall(QUESTION, model=None)
    assert not result.synthesised and result.calls == 0 and len(result.evidence()) == len(DEPLOYMENT)
    assert to_json(result)["note"].startswith("NOT SYNTHESISED")
    out = crib("recall", "--deep", QUESTION)
    assert out.returncode == 0 and out.stdout.startswith("NOT SYNTHESISED: no model ran")
    assert "Moved the production deployment from ECS to EKS" in out.stdout and "pizza" not in out.stdout
    assert configured_model() is None


def test_a_question_the_first_wave_answers_sends_no_second_wave(store: dict[str, int], deep_model: FakeOllama) -> None:
    deep_model.respond_with(scripted(lambda request, n: {"answer": "ECS then EKS.", "cites": cited(request)[:2] + ["9999"], "complete": True}))
    result = deep_recall(QUESTION, model=configured_model())
    assert len(result.manifest.candidates) > 5  # a second wave was possible
    assert len(calls(deep_model, "read")) == 5 and len(calls(deep_model, "synth")) == 1 and result.waves == 1
    assert result.synthesised and result.answer == "ECS then EKS." and result.complete and result.stopped is None
    assert result.cites and "9999" not in result.cites  # only ids it read can be cited
    assert set(result.cites) <= set(read_ids(deep_model))
    assert len(calls(deep_model, "expand")) == 1 and result.calls == 7 and result.tokens > 0


def test_citations_written_as_the_findings_show_them_are_kept(store: dict[str, int], deep_model: FakeOllama) -> None:
    """A model cites ``[30]`` (the findings' form), ``#30`` or only in the answer's text: each is
    normalised to the id read; an id it never read is still dropped."""
    shown: list[str] = []

    def synth(request: Any, n: int) -> dict[str, Any]:
        ids = shown[:] = cited(request)
        return {"answer": f"ECS then EKS [{ids[1]}].", "cites": [f"[{ids[0]}]", "[9999]"], "complete": True}

    deep_model.respond_with(scripted(synth))
    result = deep_recall(QUESTION, model=configured_model())
    assert len(shown) >= 2 and result.cites == shown[:2]  # "[id]" from the list, "[id]" from the answer text, in order
    assert "9999" not in result.cites and set(result.cites) <= set(read_ids(deep_model))


def test_gaps_send_further_waves_and_gated_out_memories_are_never_read(store: dict[str, int], deep_model: FakeOllama) -> None:
    deep_model.respond_with(scripted(lambda request, n: {"answer": f"partial {n}", "cites": cited(request), "complete": False, "missing": ["secrets"]}))
    result = deep_recall(QUESTION, model=configured_model())
    read = read_ids(deep_model)
    gated_out = {str(c.id) for c in result.manifest.gated_out}
    assert gated_out and not gated_out & set(read)  # pizza and the commit style never reach a model
    assert sorted(read) == sorted(str(c.id) for c in result.manifest.candidates)  # every gated one, each once
    assert result.waves == 2 and len(calls(deep_model, "synth")) == 2
    second = read[5:]
    assert second[0] == str(store[DEPLOYMENT[7][2][:30]])  # the gap's term ("secrets") ranks its memory first
    assert not any("pizza" in r.json["messages"][-1]["content"] for r in deep_model.requests_to("/api/chat"))


@pytest.mark.parametrize("budget, value, says", [
    ("CRIB_DEEP_CALLS", "4", "call budget reached: 4 of 4"),
    ("CRIB_DEEP_TOKENS", "900", "token budget reached"),
])
def test_a_budget_stops_the_loop_and_says_so(store: dict[str, int], deep_model: FakeOllama, monkeypatch: pytest.MonkeyPatch,
                                              budget: str, value: str, says: str) -> None:
    monkeypatch.setenv(budget, value)
    deep_model.respond_with(scripted(lambda request, n: {"answer": "x", "cites": [], "complete": False}))
    result = deep_recall(QUESTION, model=configured_model())
    assert result.stopped is not None and says in result.stopped and (budget in result.stopped)
    assert len(deep_model.requests_to("/api/chat")) == result.calls  # every call counted, none made past the budget
    if budget == "CRIB_DEEP_CALLS":
        assert result.calls == 4
    else:
        assert result.tokens <= 900 and result.calls < 1 + len(DEPLOYMENT)
    assert "Stopped" in to_text(result) or "NOT SYNTHESISED" in to_text(result)


def test_the_wall_time_budget_abandons_a_slow_model(store: dict[str, int], deep_model: FakeOllama, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("CRIB_DEEP_SECONDS", "1.5")
    deep_model.respond_with(scripted(lambda request, n: {"answer": "x", "cites": [], "complete": False}))
    deep_model.slow(0.6, path="/api/chat")
    result = deep_recall(QUESTION, model=configured_model())
    assert result.stopped is not None and "time budget reached: 1.5 s (CRIB_DEEP_SECONDS)" in result.stopped
    assert result.seconds < 3.0 and result.calls <= 4


def test_a_failing_model_leaves_the_evidence_marked_unsynthesised(store: dict[str, int], deep_model: FakeOllama) -> None:
    deep_model.fail(500, path="/api/chat")
    result = deep_recall(QUESTION, model=configured_model())
    assert not result.synthesised and result.stopped.startswith("model failed") and len(result.evidence()) == len(DEPLOYMENT)
    assert to_text(result).startswith("NOT SYNTHESISED: model failed")


def test_the_session_start_line_says_when_to_look_further() -> None:
    from crib_plugin.hosts.claude import MEMORY_AVAILABLE

    for words in ("pointer", "`show`", "`search`", "deep-recall agent", "crib recall --deep"):
        assert words in MEMORY_AVAILABLE, words
    assert len(MEMORY_AVAILABLE) < 900  # one line, read at every session start
