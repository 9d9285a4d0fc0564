"""``crib types / retrieve / search``: the kinds of memory, and reading them back (``crib write`` is :mod:`.writing`)."""

from __future__ import annotations

import json

import click

from ...core.config import parse_channels
from ...output.explain import explain_text
from ...plugins.type_registry import registered_types
from ...text.redact import redact_for_render as safe
from ..scoped import recall_scopes
from .common import now_option
from .io import read_stdin
from .params import COUNT, POSITIVE
from .retrieve import run_retrieve


@click.command()
@click.option("--json", "as_json", is_flag=True, help="One JSON object per type: name, meaning, standing.")
def types(as_json: bool) -> None:
    """The kinds of memory crib stores, what each means, and which SessionStart re-injects (standing)."""
    for t in registered_types().values():
        if as_json:
            click.echo(json.dumps({"name": t.name, "meaning": t.meaning, "standing": t.standing}))
        else:
            click.echo(f"{t.name:<12} {t.meaning}{'  [standing]' if t.standing else ''}")


@click.command()
@click.option("--format", "fmt", type=click.Choice(["memory", "context"]), default="memory", help="memory: <memory> block (default); context: fenced <memory-context> block.")
@click.option("--budget", type=COUNT, default=None, help="Character budget for the block (default CRIB_BUDGET or 8000).")
@click.option("--explain", is_flag=True, help="After the block, print (to stderr) why each memory was kept or dropped.")
@now_option
@click.argument("prompt", required=False)
def retrieve(fmt: str, budget: int | None, explain: bool, prompt: str | None) -> None:
    """Print the memories relevant to the prompt on stdin (or PROMPT); nothing when none are.

    Always exits 0: failures print nothing on stdout and one line on stderr.
    """
    run_retrieve(prompt if prompt is not None else read_stdin(), fmt=fmt, budget=budget, explain=explain)


@click.command()
@click.argument("query")
@click.option("--limit", "-k", type=POSITIVE, default=10, show_default=True)
@click.option("--json", "as_json", is_flag=True, help="One JSON object per hit (id, score, channels, content, type, created_at, metadata).")
@click.option("--channel", "channels", multiple=True, help="Only these channels (repeatable): triples, fts, vector.")
@click.option("--explain", is_flag=True, help="Show each channel's rank and score, floors and timings.")
@click.option("--scope", type=click.Choice(["project", "global", "all"]), default="all", show_default=True, help="Which stores to search (all: project, then global).")
@now_option
def search(query: str, limit: int, as_json: bool, channels: tuple[str, ...], explain: bool, scope: str) -> None:
    """Ranked hits for QUERY (fused, floors applied, no budget), from the project and global stores."""
    names = parse_channels(",".join(channels)) if channels else None
    hits, retrievals = recall_scopes(query, scope=scope, channels=names, limit=limit, warn=lambda n: click.echo(f"crib: warning: {n}", err=True))
    several = len(retrievals) > 1
    for hit in hits:
        if as_json:
            record = hit.to_json()
            if isinstance(record.get("content"), str):
                record["content"] = safe(record["content"])
            click.echo(json.dumps(record, ensure_ascii=False))
        else:
            chans = ",".join(sorted(hit.channels))
            where = f"{hit.entry.scope:<7} " if several else ""
            click.echo(f"{where}{hit.entry.id:>6}  {hit.score:.4f}  [{hit.entry.created_at[:10]} {hit.entry.type}] ({chans}) {safe(hit.entry.content)[:120]}")
    if explain:
        for name, retrieval in retrievals:
            click.echo((f"[{name}]\n" if several else "") + explain_text(retrieval), err=as_json)
