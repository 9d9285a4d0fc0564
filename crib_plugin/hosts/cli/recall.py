"""``crib recall QUESTION``: the block a prompt would get; ``--deep`` runs deep recall (:mod:`crib_plugin.hosts.deep`).

Added through ``register_commands`` with the other built-in commands (:mod:`.registered`).
"""

from __future__ import annotations

import json

import click

from ...core.errors import InputError
from ...core.limits import bound_prompt
from ...output.render import CONTEXT
from ..deep import configured_model, deep_recall
from ..deep.report import to_json, to_text
from ..scoped import retrieve


@click.command(name="recall")
@click.argument("question", nargs=-1, required=True)
@click.option("--deep", is_flag=True, help="Deep recall for a question that needs many memories: expand, grep-gate, read in waves "
              "with CRIB_DEEP_MODEL (else CRIB_JUDGE_MODEL) and synthesise a cited answer; without a model, the ranked, gated evidence.")
@click.option("--no-model", is_flag=True, help="--deep without a model even when one is configured: the ranked, gated evidence only.")
@click.option("--scope", type=click.Choice(["project", "global", "all"]), default="all", show_default=True)
@click.option("--json", "as_json", is_flag=True, help="JSON: answer, cites, evidence, what was spent and why it stopped.")
def recall(question: tuple[str, ...], deep: bool, no_model: bool, scope: str, as_json: bool) -> None:
    """What crib remembers about QUESTION: the dated block a prompt would get, or with --deep a cited answer
    drawn from many memories (or, with no model, the evidence, marked as not synthesised)."""
    text = " ".join(question).strip()
    if not text or "\x00" in text:
        raise InputError("recall needs a question (text without NUL characters)")
    text = bound_prompt(text)
    if not deep:
        click.echo(retrieve(text, template=CONTEXT) or "No stored memory is relevant to this question.")
        return
    result = deep_recall(text, model=None if no_model else configured_model(), scope=scope)
    click.echo(json.dumps(to_json(result), indent=2, ensure_ascii=False) if as_json else to_text(result))
