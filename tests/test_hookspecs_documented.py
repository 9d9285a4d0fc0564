"""Every hookspec is typed, says how it is called, and is documented in docs/hooks.md.

The specs are found by introspection (the ``crib_spec`` marker pluggy attaches), so a hook added
later is checked without touching this file.
"""

from __future__ import annotations

import inspect
import re
from pathlib import Path
from typing import Any, Callable

import pytest

from crib_plugin.plugins import hookspecs
from crib_plugin.plugins.manager import new_plugin_manager

HOOKS_DOC = Path(__file__).resolve().parent.parent / "docs" / "hooks.md"
SPEC_ATTR = "crib_spec"  # pluggy: f"{project_name}_spec"

# How a docstring states the calling behaviour, by kind of hook.
FIRSTRESULT_WORDS = ("firstresult",)
COLLECTED_WORDS = ("every implementation", "all implementations", "each implementation")


def _specs() -> dict[str, Callable[..., Any]]:
    return {
        name: func
        for name, func in inspect.getmembers(hookspecs, inspect.isfunction)
        if hasattr(func, SPEC_ATTR)
    }


SPECS = _specs()


def test_specs_are_found_and_match_the_plugin_manager() -> None:
    assert {"on_prompt", "on_store", "on_response"} <= set(SPECS)
    assert any(name.startswith("register_") for name in SPECS)
    pm = new_plugin_manager(load_entrypoints=False)
    registered = {name for name in vars(pm.hook) if not name.startswith("_")}
    assert set(SPECS) == registered


@pytest.mark.parametrize("name", sorted(SPECS))
def test_spec_is_fully_typed(name: str) -> None:
    signature = inspect.signature(SPECS[name])
    untyped = [p.name for p in signature.parameters.values() if p.annotation is inspect.Parameter.empty]
    assert not untyped, f"{name}: parameters without a type: {untyped}"
    assert signature.return_annotation is not inspect.Signature.empty, f"{name}: no return type"


@pytest.mark.parametrize("name", sorted(SPECS))
def test_spec_docstring_states_its_calling_behaviour(name: str) -> None:
    func = SPECS[name]
    doc = " ".join((inspect.getdoc(func) or "").split()).lower()
    assert len(doc) >= 40, f"{name}: missing or trivial docstring"
    opts = getattr(func, SPEC_ATTR)
    if opts.get("firstresult"):
        assert any(w in doc for w in FIRSTRESULT_WORDS), f"{name} is firstresult but its docstring does not say so"
    else:
        assert any(w in doc for w in COLLECTED_WORDS), (
            f"{name}: say that every implementation is called (results collected), e.g. 'every implementation runs'"
        )
    if opts.get("historic"):
        assert "historic" in doc, f"{name} is historic but its docstring does not say so"


@pytest.mark.parametrize("name", sorted(SPECS))
def test_spec_is_documented(name: str) -> None:
    text = HOOKS_DOC.read_text(encoding="utf-8")
    assert re.search(rf"`{re.escape(name)}\b", text), f"docs/hooks.md does not document the hook `{name}`"
