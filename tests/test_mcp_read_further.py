"""Recall the agent drives, through a real MCP client session against ``crib mcp`` (issue 19, part 2):
``recall`` arrives as plain text, ``search`` is a bounded manifest, ``show`` returns one memory in
full (its successor first when it was superseded), and the deep-recall tools ``manifest`` and
``grep`` work as the ``deep-recall`` subagent calls them.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest
from test_mcp import call, crib_server, error_of, run, session

DEPLOY = [
    ("decision", "We deploy the api with GitHub Actions to ECS Fargate; the workflow is .github/workflows/deploy.yml."),
    ("note", "The staging deploy runs helm upgrade on the EKS cluster from ops/helm/api."),
    ("error", "helm upgrade failed with 'another operation is in progress'; fixed by helm rollback to the last good revision."),
    ("note", "The cafeteria serves pizza on Fridays."),
]


def test_recall_is_plain_text_content_and_nothing_structured(tmp_path: Path) -> None:
    async def scenario() -> Any:
        async with session(crib_server(tmp_path)) as client:
            await call(client, "remember", text='Chose SQLite for the "cache" service.\nIt must run offline.', type="decision")
            return await client.call_tool("recall", {"query": "which database does the cache service use?"})

    result = run(scenario())
    assert not result.is_error and result.structured_content is None  # no JSON copy a client could prefer
    assert len(result.content) == 1 and result.content[0].type == "text"
    text = result.content[0].text
    assert text.startswith("<memory-context") and '"cache" service.\n  It must run offline.' in text  # real quotes and newlines
    assert "\\n" not in text and '\\"' not in text


@pytest.mark.slow
def test_search_is_a_bounded_manifest_of_snippets(tmp_path: Path) -> None:
    long_tail = " ".join(f"detail{i}" for i in range(60))  # several times a snippet; more only costs embedding time
    async def scenario() -> dict[str, Any]:
        async with session(crib_server(tmp_path)) as client:
            for n in range(40):
                await call(client, "remember", text=f"Deploy note {n}: the deploy pipeline step {n} uploads artefacts. {long_tail}")
            return await call(client, "search", query="deploy pipeline artefacts", limit=100)

    found = run(scenario())
    rows = found["hits"]
    assert rows and set(rows[0]) <= {"id", "scope", "date", "type", "score", "snippet", "superseded_by"}
    assert {"id", "scope", "date", "type", "score", "snippet"} <= set(rows[0])
    assert all(len(r["snippet"]) <= 101 and "detail59" not in r["snippet"] for r in rows)  # never the whole entry
    assert len(json.dumps(found)) <= 4_300 and found["left_off"] > 0 and len(rows) + found["left_off"] == 40


def test_a_search_hit_s_id_shows_the_memory_in_full_and_a_superseded_one_with_its_successor(tmp_path: Path) -> None:
    long_text = "The release checklist lives in docs/release.md. " + "Step: verify the changelog entry. " * 60 + "LAST-STEP-MARKER"
    async def scenario() -> None:
        async with session(crib_server(tmp_path)) as client:
            kept = await call(client, "remember", text=long_text, type="note")
            old = await call(client, "remember", text="The cache service uses SQLite because it must run offline.", type="decision")
            hits = (await call(client, "search", query="release checklist"))["hits"]
            assert hits[0]["id"] == kept["id"] and "LAST-STEP-MARKER" not in hits[0]["snippet"]
            full = await call(client, "show", id=hits[0]["id"])
            assert isinstance(full, str) and "LAST-STEP-MARKER" in full and f"memory {kept['id']}" in full

            new = await call(client, "correct", id=old["id"], text="The cache service moved to Postgres in November: offline mode was dropped.")
            hits = (await call(client, "search", query="cache service SQLite offline", scope="project"))["hits"]
            marked = next(h for h in hits if h["id"] == old["id"])
            assert marked["superseded_by"] == new["id"]
            shown = await call(client, "show", id=old["id"])
            assert f"superseded by {new['id']}" in shown
            assert shown.index("moved to Postgres") < shown.index("uses SQLite")  # the current text first
            assert "no entry with id 999" in await error_of(client, "show", id=999)
            await error_of(client, "show", id=-1)
            await error_of(client, "show", id=1, scope="elsewhere")

    run(scenario())


def test_the_deep_recall_tools_list_gate_and_confirm(tmp_path: Path) -> None:
    async def scenario() -> None:
        async with session(crib_server(tmp_path)) as client:
            ids = [(await call(client, "remember", text=text, type=kind))["id"] for kind, text in DEPLOY]
            found = await call(client, "manifest", question="how did our deployment set-up change?")
            listed = [c["id"] for c in found["candidates"]]
            assert set(ids[:2]) <= set(listed) and ids[3] not in listed  # pizza never passes the gate
            assert "deployment" in found["terms"] and len(json.dumps(found)) <= 4_400
            row = found["candidates"][0]
            assert {"id", "scope", "date", "type", "snippet", "confirms"} <= set(row) and "content" not in row
            confirmed = await call(client, "grep", ids=[ids[1], ids[3], 404], terms=["helm", "deploying", "EKS"])
            by_id = {r["id"]: r for r in confirmed["results"]}
            assert by_id[ids[1]]["confirms"] == ["helm", "deploying", "eks"]  # by stem: "deploying" ~ "deploy"
            assert any("helm upgrade" in e for e in by_id[ids[1]]["excerpts"])
            assert by_id[ids[3]]["confirms"] == [] and by_id[ids[3]]["excerpts"] == []
            assert confirmed["not_found"] == [404]
            await error_of(client, "grep", ids=[], terms=["x"])
            await error_of(client, "grep", ids=list(range(1, 40)), terms=["x"])
            await error_of(client, "grep", ids=[1], terms=["x" * 200])
            await error_of(client, "manifest", question="\x00")

    run(scenario())
