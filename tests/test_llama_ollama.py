"""The real-model shim's own logic (tests/llama_ollama.py) that needs no model: integer bounds made
enforceable, Ollama's keep_alive spellings, and the grammar keeping a schema's key order."""

from __future__ import annotations

import llama_ollama as shim
import pytest

from crib_plugin.models.ollama.judge import judge_schema


def test_integer_bounds_become_an_enum_the_grammar_enforces() -> None:
    schema = shim.bounded(judge_schema(8))
    assert schema["properties"]["relevant"]["items"] == {"enum": list(range(1, 9))}
    assert shim.bounded({"type": "integer", "minimum": 0, "maximum": 10}) == {"enum": list(range(0, 11))}
    assert shim.bounded({"type": "string", "minLength": 1}) == {"type": "string", "minLength": 1}


@pytest.mark.parametrize("value,seconds", [(None, 300.0), ("5m", 300.0), ("30s", 30.0), ("1h", 3600.0), (0, 0.0),
                                          ("0", 0.0), (-1, float("inf")), ("-1m", float("inf")), (90, 90.0)])
def test_keep_alive_is_read_as_ollama_reads_it(value: object, seconds: float) -> None:
    assert shim.keep_alive_seconds(value) == seconds


def test_the_grammar_keeps_key_order_and_bounds() -> None:
    pytest.importorskip("llama_cpp", reason="llama-cpp-python is not installed: the shim's grammar needs it")
    grammar = shim.grammar_text({"type": "object", "properties": {"z": {"type": "string", "minLength": 1},
                                                                  "a": {"type": "integer", "minimum": 1, "maximum": 3}},
                                 "required": ["z", "a"]})
    root = next(line for line in grammar.splitlines() if line.startswith("root ::="))
    assert root.index("z-kv") < root.index("a-kv")  # the schema's order, as Ollama keeps it
    assert '"1"' in grammar and '"3"' in grammar and '"4"' not in grammar
