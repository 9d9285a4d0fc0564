"""crib in the OpenAI Agents SDK: the block before each model call, crib's tools as function tools,
and — only when asked — the agent's turns written to memory.

    from agents import Agent, Runner
    from crib_plugin.hosts.frameworks.openai_agents import CribAgents

    crib = CribAgents()
    agent = Agent(name="assistant", instructions="…", tools=crib.tools())
    result = Runner.run_sync(agent, "…", run_config=crib.run_config(), hooks=crib.hooks())

:meth:`CribAgents.filter` is a ``RunConfig.call_model_input_filter``: it runs immediately before
every model call, finds the latest user message of the input and appends crib's block for it to that
call's instructions (only for that call: the conversation's items are not changed). The tools are
crib's MCP tools, schemas and handlers unchanged (:mod:`.bridge`). ``write_turns=True`` stores each
finished turn (the user's message and the agent's answer) as a note through ``on_store``; by default
nothing is written that the agent did not choose to remember.
"""

from __future__ import annotations

import json
from dataclasses import dataclass, field
from typing import Any

from agents import FunctionTool, RunConfig
from agents.lifecycle import RunHooks
from agents.run_config import CallModelData, ModelInputData

from ...core.faillog import log_failure
from .bridge import INSTRUCTIONS, Crib, ToolSpec


def item_text(item: Any) -> str:
    """The text of one input item's content: a string, or the text of its text parts."""
    content = item.get("content") if isinstance(item, dict) else getattr(item, "content", None)
    if isinstance(content, str):
        return content
    parts = content if isinstance(content, list) else []
    texts = [p.get("text") if isinstance(p, dict) else getattr(p, "text", None) for p in parts]
    return "\n".join(t for t in texts if isinstance(t, str))


def last_user_text(items: list[Any]) -> str:
    """The latest user message in a model input, or ``""``."""
    for item in reversed(items):
        role = item.get("role") if isinstance(item, dict) else getattr(item, "role", None)
        if role == "user":
            return item_text(item)
    return ""


def _function_tool(crib: Crib, spec: ToolSpec) -> FunctionTool:
    async def invoke(_ctx: Any, arguments: str) -> str:
        try:
            parsed = json.loads(arguments or "{}")
        except json.JSONDecodeError as exc:
            return json.dumps({"error": f"arguments are not JSON: {exc}"})
        return crib.call_tool(spec.name, parsed if isinstance(parsed, dict) else {})

    return FunctionTool(name=spec.name, description=spec.description, params_json_schema=spec.parameters,
                        on_invoke_tool=invoke, strict_json_schema=False)


class _TurnWriter(RunHooks[Any]):
    """Stores each finished turn (``write_turns=True``)."""

    def __init__(self, owner: "CribAgents") -> None:
        self.owner = owner

    async def on_agent_end(self, context: Any, agent: Any, output: Any) -> None:
        try:
            self.owner.record_turn(str(output))
        except Exception as exc:  # fail open: a failed write never fails the run
            log_failure("openai-agents turn", exc)


@dataclass
class CribAgents:
    """crib for OpenAI Agents SDK runs. ``instructions=True`` adds crib's paragraph on when to store
    a memory to each call's instructions (beside the block)."""

    crib: Crib = field(default_factory=Crib)
    write_turns: bool = False
    instructions: bool = True
    _user: str = field(default="", repr=False)

    def filter(self, data: CallModelData[Any]) -> ModelInputData:
        """``RunConfig.call_model_input_filter``: this call's instructions with crib's block."""
        model_data = data.model_data
        self._user = last_user_text(list(model_data.input))
        extra = [INSTRUCTIONS] if self.instructions else []
        block = self.crib.block(self._user)
        if block:
            extra.append(block)
        if not extra:
            return model_data
        instructions = "\n\n".join([model_data.instructions or "", *extra]).strip()
        return ModelInputData(input=model_data.input, instructions=instructions)

    def run_config(self, **kwargs: Any) -> RunConfig:
        """A ``RunConfig`` whose input filter is :meth:`filter` (other settings passed through)."""
        return RunConfig(call_model_input_filter=self.filter, **kwargs)

    def tools(self) -> list[FunctionTool]:
        return [_function_tool(self.crib, spec) for spec in self.crib.tool_specs()]

    def hooks(self) -> RunHooks[Any] | None:
        """Run hooks storing each turn when ``write_turns`` is set, else ``None`` (nothing written)."""
        return _TurnWriter(self) if self.write_turns else None

    def record_turn(self, answer: str) -> int | None:
        """Store the latest user message and ``answer`` as one note (``on_store``)."""
        if not self.write_turns or not (self._user.strip() or answer.strip()):
            return None
        text = f"User: {self._user.strip()}\nAgent: {answer.strip()}"
        return self.crib.store(text, type="note", metadata={"source": "openai-agents"})


__all__ = ["CribAgents", "last_user_text"]
