"""``crib eval`` and ``crib eval-noanswer``: added through ``register_commands``
(:mod:`crib_plugin.plugins.default_plugins.commands`), exactly as a third party's command would be.

The only module of crib_plugin that imports :mod:`crib_eval` (the evaluations ship beside the runtime
package); the command table loads it for these two commands alone.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import click

from crib_eval import coding, commits, locomo, madial, noanswer, realmem, splits
from crib_eval.on_server import stores_on_server

from ...core.config import overriding, parse_channels
from .common import now_option
from .params import COUNT, POSITIVE

CONVERSATIONAL = {"locomo": "LoCoMo", "realmem": "RealMem", "madial": "MADial-Bench (en)"}
CONVERSATIONAL_LOADERS: dict[str, Any] = {"locomo": locomo, "realmem": realmem, "madial": madial}


@click.command(name="eval")  # added through register_commands
@click.option("--data", type=click.Path(dir_okay=False, path_type=Path), default=None, help="locomo10.json (default: CRIB_LOCOMO or ../shared/eval/locomo/locomo10.json).")
@click.option("--cache", type=click.Path(file_okay=False, path_type=Path), default=Path(".state/eval"), show_default=True, help="Where the per-conversation stores are built and reused.")
@click.option("--rebuild", is_flag=True, help="Rebuild the stores even if cached.")
@click.option("--questions", type=POSITIVE, default=None, help="Only the first N questions of each conversation (quick runs).")
@click.option("--conversations", type=POSITIVE, default=None, help="Only the first N conversations.")
@click.option("--only", "only", multiple=True, help="Only the conversation with this id (repeatable), within the split.")
@click.option("--set", "eval_set", type=click.Choice(["locomo", "coding", "realmem", "madial", "commits"]), default="locomo", show_default=True, help="Which evaluation: LoCoMo, the coding-agent memory shipped with crib, a public set read at run time (realmem: CRIB_REALMEM, madial: CRIB_MADIAL), or commits: silence on public commit subjects.")
@click.option("--split", type=click.Choice(["dev", "test", "all"]), default="all", show_default=True, help="Which prompts or conversations (tune on dev, report test).")
@click.option("--json", "json_out", type=click.Path(dir_okay=False, path_type=Path), default=None, help="coding: write every prompt's outcome to this JSON file.")
@click.option("--offenders", type=COUNT, default=0, help="coding: list the N worst prompts with what was injected.")
@click.option("--cues/--no-cues", default=True, show_default=True, help="coding: store the memories with the recall cues (`when`) the agent wrote, or without.")
@click.option("--cue-model", default=None, help="coding: let this Ollama model write every memory's recall cue instead (CRIB_CUE_MODEL).")
@click.option("--judge-model", default=None, help="Let this Ollama model pick each block from the best candidates (CRIB_JUDGE_MODEL).")
@click.option("--db-url", default=None, help="LoCoMo: score copies of the stores on this PostgreSQL server (one database per conversation; the role needs CREATEDB).")
@now_option
def eval_(data: Path | None, cache: Path, rebuild: bool, questions: int | None, conversations: int | None, only: tuple[str, ...], eval_set: str, split: str,
          json_out: Path | None, offenders: int, cues: bool, cue_model: str | None, judge_model: str | None, db_url: str | None) -> None:
    """LoCoMo recall@5/10/25, hit@k, nDCG@10, MRR: plain BM25, each channel alone, fused, and as
    injected; then the fused ranking's lead over each ranking at R@5 and R@10, with a 95 % paired
    bootstrap interval over the questions.

    With --set coding: hit rate, recall, precision of the injected block, silence, stale-shown-alone,
    search hit@k per channel and latency on the coding-agent memory, per prompt kind, and the raw
    rankings' R@5 / R@10 with the same intervals.
    """
    with overriding("CRIB_JUDGE_MODEL", judge_model):
        if eval_set == "commits":
            click.echo(commits.run(split=split, cache_dir=cache, rebuild=rebuild).table(offenders=offenders))
            return
        if eval_set == "coding":
            _eval_coding(cache, rebuild, split, json_out, offenders, cues, cue_model)
            return
        loader = CONVERSATIONAL_LOADERS[eval_set]
        path = data or loader.default_data_path()
        convs = [c for c in splits.split_conversations(eval_set, loader.load(path), split) if not only or c.sample_id in only][:conversations]
        progress = lambda msg: click.echo(msg, err=True)  # noqa: E731
        stores = locomo.prepare_stores(convs, path, cache, rebuild=rebuild, progress=progress)
        if db_url:
            stores = stores_on_server(stores, db_url, progress=progress)  # type: ignore[assignment]
        title = f"{CONVERSATIONAL[eval_set]} turn-level retrieval, {split} split"
        locomo_report = locomo.evaluate(convs, stores, progress=progress, limit_questions=questions, title=title,
                                        categories=loader.CATEGORIES)
        click.echo(locomo_report.table())



def _eval_coding(cache: Path, rebuild: bool, split: str, json_out: Path | None, offenders: int, cues: bool,
                 cue_model: str | None) -> None:
    """``crib eval --set coding``: the coding-agent evaluation's table (and JSON)."""
    report = coding.run(split=split, cache_dir=cache, rebuild=rebuild, progress=lambda msg: click.echo(msg, err=True), cues=cues,
                        cue_model=cue_model)
    click.echo(report.table(offenders=offenders))
    if json_out:
        coding.write_json(report, json_out)



@click.command(name="eval-noanswer")  # added through register_commands
@click.option("--data", type=click.Path(dir_okay=False, path_type=Path), default=None, help="locomo10.json (default: CRIB_LOCOMO or ../shared/eval/locomo/locomo10.json).")
@click.option("--cache", type=click.Path(file_okay=False, path_type=Path), default=Path(".state/eval"), show_default=True, help="Where the LoCoMo stores are built and reused (shared with `crib eval`).")
@click.option("--rebuild", is_flag=True, help="Rebuild the LoCoMo stores even if cached.")
@click.option("--conversations", type=POSITIVE, default=None, help="Only the first N LoCoMo conversations.")
@click.option("--no-locomo", is_flag=True, help="Only the coding-memory store (seconds instead of a minute).")
@click.option("--channel", "channels", multiple=True, help="Only these channels (repeatable): triples, fts, vector.")
@click.option("--offenders", type=COUNT, default=30, show_default=True, help="How many offending prompts to list.")
@click.option("--json", "json_out", type=click.Path(dir_okay=False, path_type=Path), default=None, help="Also write every offending trial and query outcome to this JSON file.")
def eval_noanswer(data: Path | None, cache: Path, rebuild: bool, conversations: int | None, no_locomo: bool, channels: tuple[str, ...], offenders: int, json_out: Path | None) -> None:
    """The no-answer set (share of unrelated prompts that inject nothing) and the coding-query hit rate."""
    progress = lambda msg: click.echo(msg, err=True)  # noqa: E731
    results = noanswer.run_all(
        data_path=data, cache_dir=cache, rebuild=rebuild, conversations=conversations, locomo=not no_locomo,
        channels=parse_channels(",".join(channels)) if channels else None, progress=progress,
    )
    click.echo(results.table(offenders=offenders))
    if json_out:
        noanswer.write_json(results, json_out)
