"""Retrieval is one pipeline read top to bottom (crib_plugin/read/pipeline.py): its stages run in the
documented order from one place, each returns a new value and leaves the one it was given alone,
and no stage calls back into the ``Memory`` facade."""

from __future__ import annotations

import ast
from pathlib import Path
from typing import Any

from crib_plugin.read import pipeline

ROOT = Path(__file__).resolve().parent.parent
PACKAGE = ROOT / "crib_plugin"
STAGE_FUNCTIONS = ["query_stage", "candidates_stage", "fused_stage", "gated_stage", "selected_stage", "pointers_stage"]
#: Stage modules: everything the pipeline runs, and the renderer.
STAGE_MODULES = sorted([*PACKAGE.glob("read/**/*.py"), PACKAGE / "output" / "block.py", PACKAGE / "output" / "render.py"])
#: The facade's operations; a stage that calls one of these on the memory it was given calls back up.
FACADE_CALLS = {"recall", "select", "render", "retrieve", "search", "vector_floor", "while_embedding"}


def calls_in_order(path: Path, names: set[str]) -> list[str]:
    """The calls of ``names`` (as ``x.name(...)`` or ``name(...)``) in ``path``, in source order."""
    tree = ast.parse(path.read_text(encoding="utf-8"))
    found = []
    for node in ast.walk(tree):
        if isinstance(node, ast.Call):
            func = node.func
            name = func.attr if isinstance(func, ast.Attribute) else func.id if isinstance(func, ast.Name) else ""
            if name in names:
                found.append((node.lineno, node.col_offset, name))
    return [name for *_, name in sorted(found)]


def test_the_stages_are_called_in_order_from_one_place() -> None:
    assert pipeline.STAGES == ("query", "candidates", "fused", "gated", "selected", "pointers", "rendered")
    assert [f.removesuffix("_stage") for f in STAGE_FUNCTIONS] == list(pipeline.STAGES[:-1])
    assert calls_in_order(PACKAGE / "read" / "pipeline.py", set(STAGE_FUNCTIONS)) == STAGE_FUNCTIONS
    callers = [p.relative_to(PACKAGE) for p in PACKAGE.rglob("*.py") if calls_in_order(p, set(STAGE_FUNCTIONS))]
    assert callers == [Path("read/pipeline.py")]  # nowhere else (the evaluation may, outside the package)
    # the block: the read stages (through select_across), then the rendered stage
    assert calls_in_order(PACKAGE / "output" / "block.py", {"select_across", "render_within"}) == ["select_across", "render_within"]


def test_no_stage_imports_or_calls_back_into_the_facade() -> None:
    offenders = []
    for path in STAGE_MODULES:
        tree = ast.parse(path.read_text(encoding="utf-8"))
        for node in ast.walk(tree):
            if isinstance(node, ast.ImportFrom) and (node.module or "").split(".")[-1] == "memory" and node.level:
                offenders.append(f"{path.relative_to(PACKAGE)}:{node.lineno} imports the facade")
            if isinstance(node, ast.Call) and isinstance(node.func, ast.Attribute) and node.func.attr in FACADE_CALLS:
                owner = node.func.value
                if isinstance(owner, ast.Name) and owner.id in {"memory", "primary", "other", "self"}:
                    offenders.append(f"{path.relative_to(PACKAGE)}:{node.lineno} calls {owner.id}.{node.func.attr}()")
    assert offenders == []


def test_the_protocol_is_imported_under_its_own_name() -> None:
    aliased = [f"{p.relative_to(PACKAGE)}:{node.lineno}" for p in PACKAGE.rglob("*.py")
               for node in ast.walk(ast.parse(p.read_text(encoding="utf-8")))
               if isinstance(node, ast.ImportFrom) for a in node.names if a.name == "MemoryLike" and a.asname not in (None, "MemoryLike")]
    assert aliased == []


def test_a_stage_value_cannot_be_rebound() -> None:
    """Retrieval is frozen: a stage builds its output with ``dataclasses.replace``, never by assigning
    to the value it was given."""
    import dataclasses

    import pytest

    from crib_plugin.core.records import Query, Retrieval

    value = Retrieval(query=Query("q"))
    with pytest.raises(dataclasses.FrozenInstanceError):
        value.hits = []  # type: ignore[misc]


def snapshot(retrieval: Any) -> tuple[Any, ...]:
    return (list(retrieval.hits), list(retrieval.facts), list(retrieval.channels), list(retrieval.dropped), dict(retrieval.timings),
            list(retrieval.notes), list(retrieval.pointers), retrieval.gate, retrieval.evidence, retrieval.judged)


def test_each_stage_returns_a_new_value_and_leaves_its_input_alone(memory: Any) -> None:
    from crib_plugin.output.block import render_within
    from crib_plugin.read import recall, selection

    for text in ("Chose SQLite for storage: zero dependencies.", "The billing job retries three times.",
                 "Deploys go through ArgoCD.", "Chose uv over pip for installs.",
                 "Chose PostgreSQL as the database for the team's shared storage."):
        memory.write(f"type=decision {text}")
    values: list[Any] = []
    taken: list[tuple[Any, ...]] = []  # each value as its stage returned it, before any later stage ran

    def step(value: Any) -> None:
        values.append(value)
        taken.append(snapshot(value))

    step(recall.query_stage("which database did we choose for storage?"))
    step(recall.candidates_stage(memory, values[-1]))
    step(recall.fused_stage(memory, values[-1]))
    step(selection.gated_stage(memory, values[-1]))
    step(selection.selected_stage(memory, values[-1], budget=2000, max_items=1))
    step(selection.pointers_stage(memory, values[2], values[-1], budget=2000))
    taken = taken[:5]
    block, shown = render_within(memory, values[-1], "memory.md.j2", 120)
    assert len({id(v) for v in values}) == len(values)  # every stage a new value
    assert [snapshot(v) for v in values[:5]] == taken  # none changed the one it was given
    assert values[2].hits and values[4].hits and values[5].pointers  # the cut and the pointers did something
    assert len(values[5].hits) == 1 and len(values[3].hits) > 1  # max_items cut the selected stage's copy only
    assert shown is not values[5] and len(block) <= 120  # the cap dropped what did not fit from its own copy
    # and the pipeline, run whole, gives what the stages give one by one
    whole = pipeline.select(memory, pipeline.recall(memory, "which database did we choose for storage?"), budget=2000, max_items=1)
    assert [h.entry.id for h in whole.hits] == [h.entry.id for h in values[5].hits]
    assert [h.entry.id for h in whole.pointers] == [h.entry.id for h in values[5].pointers]
