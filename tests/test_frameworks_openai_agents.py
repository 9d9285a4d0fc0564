"""crib in the OpenAI Agents SDK (crib_plugin/hosts/frameworks/openai_agents.py), with a custom
Model standing in for the API: no network."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

pytest.importorskip("agents")

from agents import Agent, Runner  # noqa: E402
from agents.items import ModelResponse  # noqa: E402
from agents.models.interface import Model  # noqa: E402
from agents.usage import Usage  # noqa: E402
from openai.types.responses import ResponseFunctionToolCall, ResponseOutputMessage, ResponseOutputText  # noqa: E402

from crib_plugin import Memory  # noqa: E402
from crib_plugin.hosts.frameworks.openai_agents import CribAgents  # noqa: E402

FACT = "Chose SQLite for storage: zero dependencies, one file."


class ScriptedModel(Model):
    """Calls ``remember`` once when asked to, else answers "done"; records what each call got."""

    def __init__(self) -> None:
        self.calls: list[dict[str, Any]] = []

    async def get_response(self, system_instructions: str | None, input: Any, model_settings: Any, tools: list[Any],
                           output_schema: Any, handoffs: Any, tracing: Any, **kwargs: Any) -> ModelResponse:
        self.calls.append({"instructions": system_instructions or "", "tools": [t.name for t in tools], "input": input})
        items = input if isinstance(input, list) else [{"role": "user", "content": input}]
        answered = any(isinstance(i, dict) and i.get("type") == "function_call_output" for i in items)
        if "remember this" in json.dumps(items, default=str) and not answered:
            call = ResponseFunctionToolCall(id="fc_1", call_id="call_1", name="remember", type="function_call",
                                            arguments=json.dumps({"text": FACT, "type": "decision"}), status="completed")
            return ModelResponse(output=[call], usage=Usage(), response_id=None)
        text = ResponseOutputText(text="done", type="output_text", annotations=[])
        message = ResponseOutputMessage(id="msg_1", role="assistant", status="completed", type="message", content=[text])
        return ModelResponse(output=[message], usage=Usage(), response_id=None)

    def stream_response(self, *args: Any, **kwargs: Any) -> Any:  # pragma: no cover - not used
        raise NotImplementedError


def _run(crib: CribAgents, model: ScriptedModel, prompt: str) -> str:
    agent = Agent(name="assistant", instructions="You help.", model=model, tools=crib.tools())
    return str(Runner.run_sync(agent, prompt, run_config=crib.run_config(tracing_disabled=True), hooks=crib.hooks()).final_output)


def test_a_tool_call_stores_a_memory_and_the_block_reaches_the_model(clean_env: Path, fake_embedder: Any) -> None:
    crib, model = CribAgents(), ScriptedModel()
    assert _run(crib, model, "remember this: we chose SQLite") == "done"
    assert {"remember", "recall", "show", "correct", "forget"} <= set(model.calls[0]["tools"])
    with Memory(clean_env) as memory:  # stored through crib's write path; the turn itself was not
        assert [e["content"] for e in memory.export()] == [FACT]

    model.calls.clear()
    _run(crib, model, "Which storage did we choose: SQLite?")
    first = model.calls[0]["instructions"]
    assert first.startswith("You help.") and FACT in first and "<memory-context context_time=" in first
    assert FACT not in json.dumps(model.calls[0]["input"], default=str)  # the conversation is unchanged

    model.calls.clear()
    _run(crib, model, "how long should sourdough proof?")
    assert "<memory-context context_time=" not in model.calls[0]["instructions"]


def test_turns_are_written_only_when_asked(clean_env: Path, fake_embedder: Any) -> None:
    crib = CribAgents(write_turns=True)
    _run(crib, ScriptedModel(), "Please keep the changelog in CHANGES.md")
    with Memory(clean_env) as memory:
        assert [e["content"] for e in memory.export()] == ["User: Please keep the changelog in CHANGES.md\nAgent: done"]
