"""Every rule of the relevance gate earns its place: removed, some labelled prompt loses its memory.

The gate (:func:`crib_plugin.read.gate.relevance.decide`) opens on any of a few kinds of evidence.
For each of crib's own, this test switches that one rule off and re-decides every answerable prompt
of the coding set (its store built once, each prompt recalled once): at least one prompt whose gate
was open must then be shut — a prompt that rule alone lets through. A rule no prompt needs fails
here, and a new rule added to ``decide`` without an entry below fails the completeness check.
(Plugin channels' rule, ``others``, is the extension contract: ``tests/test_plugin_contract.py``.)
What each rule buys on every set, in figures: docs/relevance.md.
"""

from __future__ import annotations

import ast
import inspect
import textwrap
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

import crib_plugin.read.gate.relevance as relevance

# rule (as named in ``decide``'s ``evidence_open``/``is_open``) → (attribute of relevance, its "off" value)
OFF: dict[str, tuple[str, Any]] = {
    "distinct": ("distinctive", lambda *a, **k: {}),
    "coverage": ("FTS_COVERAGE", 9.0),
    "facts": ("facts_bear", lambda *a, **k: False),
    "extra": ("TYPE_WORDS", {}),  # its named-type half; its small-store "stands out" half: tests/test_seed000.py
    "window": ("_in_window", lambda *a, **k: []),
}
CONTRACT = {"others"}  # plugin channels: tests/test_plugin_contract.py


def _opening_names() -> set[str]:
    """The names ``decide`` ORs into its decision (``evidence_open = bool(a or b …)``, ``is_open``)."""
    tree = ast.parse(textwrap.dedent(inspect.getsource(relevance.decide)))
    names: set[str] = set()
    for node in ast.walk(tree):
        if isinstance(node, ast.Assign) and isinstance(node.targets[0], ast.Name) and node.targets[0].id in ("evidence_open", "is_open"):
            names |= {n.id for n in ast.walk(node.value) if isinstance(n, ast.Name)} - {"bool", "evidence_open", "FTS_COVERAGE", "None"}
    return names


def test_every_opening_rule_of_decide_is_ablated_here() -> None:
    assert _opening_names() == set(OFF) | CONTRACT


@pytest.fixture(scope="module")
def recalled(tmp_path_factory: pytest.TempPathFactory) -> Iterator[tuple[Any, list[tuple[Any, Any]]]]:
    from crib_eval import coding
    from crib_eval.noanswer_inject import open_memory

    data = coding.load()
    db, _ = coding.prepare_store(data, tmp_path_factory.mktemp("cache"))
    with coding.fixed_now(data.now), open_memory(Path(db)) as memory:
        yield memory, [(p, memory.recall(p.prompt)) for p in data.prompts if p.relevant]


@pytest.mark.parametrize("rule", sorted(OFF))
def test_removing_a_gate_rule_shuts_the_gate_on_a_prompt_that_has_a_memory(rule: str, recalled: Any, monkeypatch: pytest.MonkeyPatch) -> None:
    memory, prompts = recalled
    before = {p.prompt for p, r in prompts if relevance.decide(memory, r).open}
    attribute, off = OFF[rule]
    monkeypatch.setattr(relevance, attribute, off)
    after = {p.prompt for p, r in prompts if relevance.decide(memory, r).open}
    assert after <= before
    assert before - after, f"the gate's {rule!r} rule opens no answerable coding prompt that another rule does not"
