"""crib in Pydantic AI (crib_plugin/hosts/frameworks/pydantic_ai.py), against Pydantic AI's own
FunctionModel: no network, no model."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

pytest.importorskip("pydantic_ai")

from pydantic_ai import Agent  # noqa: E402
from pydantic_ai.messages import ModelMessage, ModelResponse, TextPart, ToolCallPart, ToolReturnPart  # noqa: E402
from pydantic_ai.models.function import AgentInfo, FunctionModel  # noqa: E402

from crib_plugin import Memory  # noqa: E402
from crib_plugin.hosts.frameworks.pydantic_ai import CribCapability  # noqa: E402

FACT = "Chose SQLite for storage: zero dependencies, one file."


def test_a_tool_call_stores_a_memory_and_the_next_run_gets_the_block(clean_env: Path, fake_embedder: Any) -> None:
    seen: list[str] = []
    tools_offered: list[list[str]] = []

    def model(messages: list[ModelMessage], info: AgentInfo) -> ModelResponse:
        seen.append(info.instructions or "")
        tools_offered.append([t.name for t in info.function_tools])
        returned = [p for m in messages for p in getattr(m, "parts", []) if isinstance(p, ToolReturnPart)]
        if "remember this" in str(messages[0]) and not returned:
            return ModelResponse(parts=[ToolCallPart("remember", {"text": FACT, "type": "decision"})])
        return ModelResponse(parts=[TextPart("done")])

    agent = Agent(FunctionModel(model), capabilities=[CribCapability()])
    assert agent.run_sync("remember this: we chose SQLite").output == "done"
    assert {"remember", "recall", "show", "correct", "forget"} <= set(tools_offered[0])
    with Memory(clean_env) as memory:  # the tool call went through crib's write path
        assert [e["content"] for e in memory.export()] == [FACT]

    seen.clear()
    agent.run_sync("Which storage did we choose: SQLite?")
    assert seen and FACT in seen[0], seen  # the block reached the model's instructions
    assert "<memory-context context_time=" in seen[0]

    seen.clear()
    agent.run_sync("how long should sourdough proof?")
    assert seen and "<memory-context context_time=" not in seen[0]  # nothing relevant: no block
