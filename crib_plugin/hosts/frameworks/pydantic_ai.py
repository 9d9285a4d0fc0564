"""crib in Pydantic AI: a capability that adds crib's block to the instructions of every model
request and offers crib's tools.

    from pydantic_ai import Agent
    from crib_plugin.hosts.frameworks.pydantic_ai import CribCapability

    agent = Agent("openai:gpt-5", capabilities=[CribCapability()])

The block is computed from the run's user prompt (``RunContext.prompt``) by a dynamic instruction,
which Pydantic AI evaluates for each request; when nothing is relevant it adds nothing. The tools are
crib's MCP tools (``remember``, ``recall``, ``show``, ``correct``, ``forget``), their schemas and
handlers unchanged (:mod:`.bridge`).
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from pydantic_ai import RunContext
from pydantic_ai.capabilities import AbstractCapability
from pydantic_ai.tools import Tool
from pydantic_ai.toolsets import FunctionToolset

from .bridge import INSTRUCTIONS, Crib, ToolSpec


def prompt_text(prompt: str | Any | None) -> str:
    """The text of a run's prompt: a string, or the text parts of a list of user content."""
    if prompt is None:
        return ""
    if isinstance(prompt, str):
        return prompt
    return "\n".join(part for part in prompt if isinstance(part, str))


def _tool(crib: Crib, spec: ToolSpec) -> Tool[Any]:
    def run(**arguments: Any) -> str:
        return crib.call_tool(spec.name, arguments)

    run.__name__ = spec.name
    return Tool.from_schema(run, name=spec.name, description=spec.description, json_schema=spec.parameters)


@dataclass
class CribCapability(AbstractCapability[Any]):
    """crib's memory for a Pydantic AI agent.

    ``crib`` holds the settings (budget, which tools); ``tools=False`` adds only the block;
    ``instructions=True`` also adds crib's paragraph on when to store a memory.
    """

    crib: Crib = field(default_factory=Crib)
    tools: bool = True
    instructions: bool = True

    def get_instructions(self) -> Any:
        def memory_block(ctx: RunContext[Any]) -> str:
            return self.crib.block(prompt_text(ctx.prompt))

        return [INSTRUCTIONS, memory_block] if self.instructions else memory_block

    def get_toolset(self) -> Any:
        if not self.tools:
            return None
        return FunctionToolset([_tool(self.crib, spec) for spec in self.crib.tool_specs()])


__all__ = ["CribCapability", "prompt_text"]
