"""The ``crib`` command: stdin/stdout like the original crib, plus maintenance and inspection.

Errors crib raises on purpose (:class:`~crib_plugin.errors.CribError`) become one line on stderr
and a non-zero exit. ``retrieve`` and ``hook`` are the exceptions: they always exit 0 and print
nothing on failure, because a broken retrieval must never block the agent or put a traceback into
its context.
"""

from __future__ import annotations

import json
import logging
import sys
from pathlib import Path
from typing import Any, NoReturn

import click

from .cli_io import read_stdin, read_stdin_text
from .errors import CribError, InputError
from .retrieve_command import run_retrieve

log = logging.getLogger("crib")


def fail(message: str, code: int = 1) -> NoReturn:
    click.echo(f"crib: {message}", err=True)
    sys.exit(code)


class CribGroup(click.Group):
    """Turns CribError into a clean one-line message (no traceback) for every subcommand."""

    def invoke(self, ctx: click.Context) -> Any:
        try:
            return super().invoke(ctx)
        except CribError as exc:
            fail(str(exc), exc.exit_code)


def open_memory(create: bool = True, **kwargs: Any) -> Any:
    from .memory import Memory

    return Memory(create=create, **kwargs)


def _scope_kwargs(to_global: bool) -> dict[str, Any]:
    """``open_memory`` arguments for the global store (``--global``), else none (the project's)."""
    if not to_global:
        return {}
    from .scopes import global_db

    return {"path": global_db()}


def warn_all(memory: Any) -> None:
    for note in memory.warnings:
        click.echo(f"crib: warning: {note}", err=True)


def _set_now(_ctx: click.Context, _param: click.Parameter, value: str | None) -> None:
    """``--now``: the same as ``CRIB_NOW`` for this process (checked where it is read)."""
    if value:
        import os

        os.environ["CRIB_NOW"] = value


now_option = click.option(
    "--now", default=None, expose_value=False, callback=_set_now,
    help="ISO 8601 time taken as now for time expressions (CRIB_NOW); reproducible evaluations.",
)


@click.group(cls=CribGroup)
@click.version_option(package_name="crib-plugin", prog_name="crib")
def cli() -> None:
    """crib — persistent memory for AI agents (one SQLite file: facts, full text, vectors).

    The project store is CRIB_DB (default .state/crib/crib.db at the git repository's root, else
    under the current directory); the global store is CRIB_GLOBAL_DB (default: the user data
    directory). `crib where` prints both.
    """


@cli.command()
@click.option("--type", "entry_type", default=None, help="note (default), decision, error, correction, preference or a plugin's type (or a leading type=WORD); `crib types` explains each.")
@click.option("--created-at", default=None, help="ISO 8601 time of the memory (default now).")
@click.option("--metadata", default=None, help="JSON object stored with the entry.")
@click.option("--thread", default=None, help="Conversation this memory belongs to (CRIB_THREAD); neighbours in a thread give each other context.")
@click.option("--global", "to_global", is_flag=True, help="Write to the global store (every project inherits it) instead of the project's.")
@click.argument("text", required=False)
def write(entry_type: str | None, created_at: str | None, metadata: str | None, thread: str | None, to_global: bool, text: str | None) -> None:
    """Store a memory read from stdin (or TEXT). A leading `type=decision` sets its type."""
    raw = text if text is not None else read_stdin_text()
    if not raw.strip():
        raise InputError("nothing to write: stdin is empty")
    meta: dict[str, Any] = {}
    if metadata:
        try:
            meta = json.loads(metadata)
        except (json.JSONDecodeError, RecursionError) as exc:
            raise InputError(f"--metadata is not valid JSON: {exc}") from None
        if not isinstance(meta, dict):
            raise InputError("--metadata must be a JSON object")
    if not thread:
        from .config import get_settings

        thread = get_settings().thread
    if thread:
        meta["thread"] = thread
    with open_memory(**_scope_kwargs(to_global)) as memory:
        memory.last_write = None
        entry_id = memory.pm.hook.on_store(text=raw, type=entry_type, metadata=meta, memory=memory, created_at=created_at)
        if entry_id is None:
            raise InputError("no on_store implementation stored the memory")
        report = memory.last_write
        warn_all(memory)
    parts = [f"stored entry {entry_id}" + (" (global)" if to_global else "")]
    if report is not None:
        if report.duplicate:
            parts = [f"entry {entry_id} already stored (identical content)"]
        else:
            parts.append("vector" if report.embedded else "no vector (queued)")
            parts.append(f"{report.facts} fact{'s' if report.facts != 1 else ''}")
        for note in report.notes:
            click.echo(f"crib: {note}", err=True)
    click.echo(", ".join(parts))


@cli.command()
@click.option("--json", "as_json", is_flag=True, help="One JSON object per type: name, meaning, standing.")
def types(as_json: bool) -> None:
    """The kinds of memory crib stores, what each means, and which SessionStart re-injects (standing)."""
    from .type_registry import registered_types

    for t in registered_types().values():
        if as_json:
            click.echo(json.dumps({"name": t.name, "meaning": t.meaning, "standing": t.standing}))
        else:
            click.echo(f"{t.name:<12} {t.meaning}{'  [standing]' if t.standing else ''}")


@cli.command()
@click.option("--format", "fmt", type=click.Choice(["memory", "context"]), default="memory", help="memory: <memory> block (default); context: fenced <memory-context> block.")
@click.option("--budget", type=int, default=None, help="Character budget for the block (default CRIB_BUDGET or 8000).")
@click.option("--explain", is_flag=True, help="After the block, print (to stderr) why each memory was kept or dropped.")
@now_option
@click.argument("prompt", required=False)
def retrieve(fmt: str, budget: int | None, explain: bool, prompt: str | None) -> None:
    """Print the memories relevant to the prompt on stdin (or PROMPT); nothing when none are.

    Always exits 0: failures print nothing on stdout and one line on stderr.
    """
    run_retrieve(prompt if prompt is not None else read_stdin(), fmt=fmt, budget=budget, explain=explain)


@cli.command()
@click.argument("query")
@click.option("--limit", "-k", type=int, default=10, show_default=True)
@click.option("--json", "as_json", is_flag=True, help="One JSON object per hit (id, score, channels, content, type, created_at, metadata).")
@click.option("--channel", "channels", multiple=True, help="Only these channels (repeatable): triples, fts, vector.")
@click.option("--explain", is_flag=True, help="Show each channel's rank and score, floors and timings.")
@click.option("--scope", type=click.Choice(["project", "global", "all"]), default="all", show_default=True, help="Which stores to search (all: project, then global).")
@now_option
def search(query: str, limit: int, as_json: bool, channels: tuple[str, ...], explain: bool, scope: str) -> None:
    """Ranked hits for QUERY (fused, floors applied, no budget), from the project and global stores."""
    from .config import parse_channels
    from .scoped import recall_scopes

    names = parse_channels(",".join(channels)) if channels else None
    hits, retrievals = recall_scopes(query, scope=scope, channels=names, limit=limit, warn=lambda n: click.echo(f"crib: warning: {n}", err=True))
    several = len(retrievals) > 1
    from .redact import redact_for_render as safe

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
        from .explain import explain_text

        for name, retrieval in retrievals:
            click.echo((f"[{name}]\n" if several else "") + explain_text(retrieval), err=as_json)


@cli.command(name="import")
@click.argument("source", type=click.Path(path_type=Path, allow_dash=True))
@click.option("--format", "fmt", type=click.Choice(["jsonl", "claude", "markdown"]), default=None, help="Default: by name (folder or .md: markdown; CLAUDE.md, CLAUDE.local.md, .claude/: claude; else jsonl).")
@click.option("--global", "to_global", is_flag=True, help="Import into the global store (e.g. ~/.claude/CLAUDE.md).")
def import_(source: Path, fmt: str | None, to_global: bool) -> None:
    """Import memories from SOURCE (`-` for stdin): crib's JSONL (content, type, created_at,
    metadata), a Claude Code memory file (CLAUDE.md…) or a folder of markdown notes, split into
    one memory per bullet or paragraph under its heading path.

    Everything is checked before anything is written: one bad record writes nothing.
    """
    from .importers import read_records
    from .progress import Progress, fetch_model

    kind, records = read_records(source, fmt, stdin=sys.stdin)
    if kind == "claude" and not to_global and str(source) != "-" and (Path.home() / ".claude") in source.resolve().parents:
        click.echo("crib: note: ~/.claude/ memory applies to every project; `--global` imports it into the global store", err=True)
    with open_memory(**_scope_kwargs(to_global)) as memory, Progress("import", unit="entries") as progress:
        fetch_model(memory)
        reports = memory.import_records(records, on_progress=progress)
        warn_all(memory)
    new = sum(1 for r in reports if not r.duplicate)
    rate = f", {progress.rate:.0f} entries/s" if reports else ""
    click.echo(f"imported {new} entries ({len(reports) - new} already present) from {kind}{rate}")


@cli.command()
def export() -> None:
    """Write every entry as JSONL to stdout (id, type, content, created_at, metadata)."""
    with open_memory(create=False, readonly=True) as memory:
        for record in memory.export():
            click.echo(json.dumps(record, ensure_ascii=False))


@cli.command()
@click.argument("entity", required=False)
@click.option("--all", "all_versions", is_flag=True, help="Every version with its validity dates, not only current facts.")
@click.option("--json", "as_json", is_flag=True, help="A JSON list of facts.")
def facts(entity: str | None, all_versions: bool, as_json: bool) -> None:
    """List current facts (about ENTITY, or all); --all adds superseded versions with their dates."""
    from .facts import facts_command_output

    with open_memory(create=False, readonly=True) as memory:
        click.echo(facts_command_output(memory.store, entity, all_versions, as_json))


@cli.command()
@click.option("--embedder", default=None, help="Switch the store to this embedder (e.g. ollama, minilm).")
def reindex(embedder: str | None) -> None:
    """Embed entries that have no vector (the queue), or switch embedders explicitly."""
    from .progress import Progress, fetch_model

    with open_memory(create=False) as memory, Progress("reindex", unit="entries") as progress:
        fetch_model(memory)
        result = memory.reindex(embedder, on_progress=progress)
    click.echo(json.dumps(result))


@cli.command()
@click.option("--no-model", is_flag=True, help="Do not fetch the offline model weights.")
def init(no_model: bool) -> None:
    """Create the database, fetch the offline model's weights and compile crib's bytecode now,
    rather than on the first prompt."""
    from .bytecode import compile_package
    from .config import load_settings

    settings = load_settings()
    if not compile_package():  # the per-prompt commands start cold: no compiling on every prompt
        click.echo("crib: warning: could not write crib's bytecode; each prompt will compile it", err=True)
    with open_memory() as memory:
        version = memory.store.schema_version()
        name = memory.embedder_name()
        if not no_model and name == "minilm":
            from .models.weights import ensure_minilm
            from .progress import fetch_model

            fetch_model(memory)  # with a progress bar when it has to be downloaded
            path = ensure_minilm()
            click.echo(f"offline model ready: {path}")
    click.echo(f"crib database ready: {settings.db} (schema {version}, embedder {name})")


@cli.command()
def doctor() -> None:
    """Check every prerequisite and print JSON; exit 1 when something required is missing."""
    from .doctor import run_doctor

    report = run_doctor()
    click.echo(json.dumps(report, indent=2, default=str))
    sys.exit(0 if report.get("ok") else 1)


@cli.command()
def scrub() -> None:
    """Filter stdin to stdout, removing memory blocks, flushing as it goes."""
    import codecs

    from .plugins import get_plugin_manager
    from .session import ResponseStream

    hook = get_plugin_manager().hook.on_response  # crib's scrubber wraps every implementation
    stream = ResponseStream(id="crib-scrub")
    decoder = codecs.getincrementaldecoder("utf-8")("replace")
    source = getattr(sys.stdin, "buffer", None)
    if source is None:
        return
    read = getattr(source, "read1", source.read)  # read1: whatever has arrived, so output streams
    out = sys.stdout
    while True:
        data = read(65536)
        stream.final = not data
        text = hook(chunk=decoder.decode(data, final=not data), stream=stream)
        if text:
            out.write(text)
            out.flush()
        if not data:
            break


@cli.command()
def mcp() -> None:
    """Serve crib's memory over MCP on stdio: remember, recall, search, list_memories, correct, forget."""
    from .mcp_server import main as serve

    serve()


@click.command()  # added by crib's own register_commands (builtin_commands.py), as a plugin's would be
@click.option("--dry-run", is_flag=True, help="Measure and report without writing the gate into the store.")
@click.option("--reset", is_flag=True, help="Forget the calibrated gate and use the shipped default again.")
def calibrate(dry_run: bool, reset: bool) -> None:
    """Derive this store's vector relevance gate from off-topic probes (JSON report)."""
    from .calibrate import calibrate as run_calibration
    from .progress import Progress, fetch_model

    with open_memory(create=False) as memory:
        if reset:
            memory.store.clear_gate(memory.embedder_key())
            click.echo(json.dumps({"reset": True}))
            return
        fetch_model(memory)
        with Progress("calibrate", unit="texts") as progress:
            report = run_calibration(memory, write=not dry_run, on_progress=progress)
        click.echo(json.dumps(report, indent=2))


@click.command(name="eval")  # added through register_commands
@click.option("--data", type=click.Path(dir_okay=False, path_type=Path), default=None, help="locomo10.json (default: CRIB_LOCOMO or ../shared/eval/locomo/locomo10.json).")
@click.option("--cache", type=click.Path(file_okay=False, path_type=Path), default=Path(".state/eval"), show_default=True, help="Where the per-conversation stores are built and reused.")
@click.option("--rebuild", is_flag=True, help="Rebuild the stores even if cached.")
@click.option("--questions", type=int, default=None, help="Only the first N questions of each conversation (quick runs).")
@click.option("--conversations", type=int, default=None, help="Only the first N conversations.")
@click.option("--set", "eval_set", type=click.Choice(["locomo", "coding"]), default="locomo", show_default=True, help="Which evaluation: LoCoMo, or the coding-agent memory shipped with crib.")
@click.option("--split", type=click.Choice(["dev", "test", "all"]), default="all", show_default=True, help="coding: which prompts (tune on dev, report test).")
@click.option("--json", "json_out", type=click.Path(dir_okay=False, path_type=Path), default=None, help="coding: write every prompt's outcome to this JSON file.")
@click.option("--offenders", type=int, default=0, help="coding: list the N worst prompts with what was injected.")
@now_option
def eval_(data: Path | None, cache: Path, rebuild: bool, questions: int | None, conversations: int | None, eval_set: str, split: str, json_out: Path | None, offenders: int) -> None:
    """LoCoMo recall@5/10/25, hit@k, nDCG@10, MRR: each channel alone, fused, and as injected.

    With --set coding: hit rate, recall, precision of the injected block, silence, stale-shown-alone,
    search hit@k per channel and latency on the coding-agent memory, per prompt kind.
    """
    if eval_set == "coding":
        from .evaluation import coding

        report = coding.run(split=split, cache_dir=cache, rebuild=rebuild, progress=lambda msg: click.echo(msg, err=True))
        click.echo(report.table(offenders=offenders))
        if json_out:
            coding.write_json(report, json_out)
        return
    from .evaluation import locomo

    path = data or locomo.default_data_path()
    convs = locomo.load(path)[:conversations]
    progress = lambda msg: click.echo(msg, err=True)  # noqa: E731
    stores = locomo.prepare_stores(convs, path, cache, rebuild=rebuild, progress=progress)
    report = locomo.evaluate(convs, stores, progress=progress, limit_questions=questions)
    click.echo(report.table())


_HOOK_CONTEXT = {"ignore_unknown_options": True, "allow_extra_args": True}  # never a usage error (exit 2)


class HookGroup(click.Group):
    """``crib hook …`` never ends in a usage error: exit 2 from a hook would erase the user's prompt."""

    def invoke(self, ctx: click.Context) -> Any:
        try:
            return super().invoke(ctx)
        except click.UsageError as exc:
            click.echo(f"crib: {exc.format_message()}", err=True)
            sys.exit(0)


@cli.group(cls=HookGroup, invoke_without_command=True)
@click.pass_context
def hook(ctx: click.Context) -> None:
    """Claude Code hooks: the hook's JSON on stdin, `hookSpecificOutput` JSON (or nothing) on stdout.

    Always exit 0, within CRIB_HOOK_TIMEOUT seconds (default 2); failures go to crib.log.
    """
    if ctx.invoked_subcommand is None:
        click.echo(ctx.get_help(), err=True)


@hook.command("user-prompt-submit", context_settings=_HOOK_CONTEXT)
def hook_user_prompt_submit() -> None:
    """UserPromptSubmit: relevant memories not yet injected in this session, as additionalContext."""
    from .claude import USER_PROMPT_SUBMIT, run_hook

    sys.exit(run_hook(USER_PROMPT_SUBMIT))


@hook.command("session-start", context_settings=_HOOK_CONTEXT)
def hook_session_start() -> None:
    """SessionStart (startup/resume/clear/compact): re-inject standing memories; reset the session."""
    from .claude import SESSION_START, run_hook

    sys.exit(run_hook(SESSION_START))


@hook.command("message-display", context_settings=_HOOK_CONTEXT)
def hook_message_display() -> None:
    """MessageDisplay: remove memory blocks from assistant text as it is shown (state per message_id)."""
    from .display import run_message_display

    sys.exit(run_message_display(sys.stdin, sys.stdout))


@click.command(name="eval-noanswer")  # added through register_commands
@click.option("--data", type=click.Path(dir_okay=False, path_type=Path), default=None, help="locomo10.json (default: CRIB_LOCOMO or ../shared/eval/locomo/locomo10.json).")
@click.option("--cache", type=click.Path(file_okay=False, path_type=Path), default=Path(".state/eval"), show_default=True, help="Where the LoCoMo stores are built and reused (shared with `crib eval`).")
@click.option("--rebuild", is_flag=True, help="Rebuild the LoCoMo stores even if cached.")
@click.option("--conversations", type=int, default=None, help="Only the first N LoCoMo conversations.")
@click.option("--no-locomo", is_flag=True, help="Only the coding-memory store (seconds instead of a minute).")
@click.option("--channel", "channels", multiple=True, help="Only these channels (repeatable): triples, fts, vector.")
@click.option("--offenders", type=int, default=30, show_default=True, help="How many offending prompts to list.")
@click.option("--json", "json_out", type=click.Path(dir_okay=False, path_type=Path), default=None, help="Also write every offending trial and query outcome to this JSON file.")
def eval_noanswer(data: Path | None, cache: Path, rebuild: bool, conversations: int | None, no_locomo: bool, channels: tuple[str, ...], offenders: int, json_out: Path | None) -> None:
    """The no-answer set (share of unrelated prompts that inject nothing) and the coding-query hit rate."""
    from .config import parse_channels
    from .evaluation import noanswer

    progress = lambda msg: click.echo(msg, err=True)  # noqa: E731
    results = noanswer.run_all(
        data_path=data, cache_dir=cache, rebuild=rebuild, conversations=conversations, locomo=not no_locomo,
        channels=parse_channels(",".join(channels)) if channels else None, progress=progress,
    )
    click.echo(results.table(offenders=offenders))
    if json_out:
        noanswer.write_json(results, json_out)


from .cli_manage import register as _register_manage  # noqa: E402 - where, list, show, stats, forget, correct, log

_register_manage(cli)
#: crib's commands that are not part of the core group: :mod:`crib_plugin.builtin_commands` adds
#: them through the ``register_commands`` hook, ``trylast``, exactly as a third party's.
REGISTERED_COMMANDS: tuple[click.Command, ...] = (calibrate, eval_, eval_noanswer)


def _load_plugin_commands() -> None:
    try:
        from .plugins import get_plugin_manager

        get_plugin_manager().hook.register_commands(cli=cli)
    except CribError as exc:  # pragma: no cover - a broken plugin must not break the CLI
        click.echo(f"crib: plugin commands not loaded: {exc}", err=True)


def main(argv: list[str] | None = None) -> None:
    """Console-script entry point."""
    _load_plugin_commands()
    cli.main(args=argv, prog_name="crib")

