"""``crib where / list / show / stats / forget / correct / cue / log``: see and fix what is stored.

Thin click wrappers over :mod:`crib_plugin.write.manage` and :mod:`crib_plugin.scopes` (the MCP server
calls the same functions). Registered on the ``crib`` group by :func:`register`; nothing here is
imported on the per-prompt path.
"""

from __future__ import annotations

import json
from typing import Any

import click

from ...core.errors import InputError
from ...read.forget_preview import preview_forget
from ...scopes import SCOPES, list_scoped, open_scope, scope_path, stores_in_use
from ...write.manage import audit_log, iter_ids, set_cue, show_entry
from ...write.manage import correct as correct_entry
from ...write.manage import forget as forget_ids
from ...write.manage import stats as store_stats
from .io import read_stdin
from .params import COUNT, ENTRY_ID, POSITIVE

SCOPE_CHOICE = click.Choice(["project", "global"])


def _open(scope: str, create: bool = False) -> Any:
    return open_scope(scope, create=create)


def _read(scope: str) -> Any:
    """The store of ``scope`` opened for a read command: read-only, so a read-only folder or a full
    disk does not stop it (an older store is still upgraded first, where it can be written)."""
    return open_scope(scope, create=False, readonly=True)


def _echo_json(data: Any) -> None:
    click.echo(json.dumps(data, ensure_ascii=False, indent=2))


def _line(row: dict[str, Any], width: int = 100) -> str:
    text = " ".join(row["content"].split())
    text = text if len(text) <= width else text[: width - 1] + "…"
    mark = f" → {row['superseded_by']}" if row.get("superseded_by") else ""
    scope = f"{row['scope']:<7} " if "scope" in row else ""
    return f"{scope}{row['id']:>6}  {row['created_at'][:10]}  {row['type']:<10}{mark} {text}"


@click.command()
@click.option("--json", "as_json", is_flag=True, help="A JSON list of the stores.")
def where(as_json: bool) -> None:
    """Print the stores in use (project, then global): path, whether it exists, entry count."""
    rows = []
    for scope in stores_in_use():
        count = None
        if scope.exists:
            with _open(scope.name) as memory:
                count = memory.store.count_entries()
        rows.append({"scope": scope.name, "path": str(scope.path), "exists": scope.exists, "entries": count})
    if as_json:
        _echo_json(rows)
        return
    for row in rows:
        state = f"{row['entries']} entries" if row["exists"] else "not created yet"
        click.echo(f"{row['scope']:<8} {row['path']}  ({state})")


@click.command(name="list")
@click.option("--type", "types", multiple=True, help="Only this type (repeatable).")
@click.option("--since", default=None, help="Created on or after this ISO date/time.")
@click.option("--until", default=None, help="Created on or before this ISO date/time (a date covers the day).")
@click.option("--scope", type=click.Choice(["project", "global", "all"]), default="all", show_default=True)
@click.option("--limit", type=COUNT, default=50, show_default=True, help="At most this many (0: all).")
@click.option("--current", is_flag=True, help="Leave out entries a correction superseded.")
@click.option("--json", "as_json", is_flag=True, help="A JSON list.")
def list_(types: tuple[str, ...], since: str | None, until: str | None, scope: str, limit: int, current: bool, as_json: bool) -> None:
    """List stored memories, newest first."""
    rows = list_scoped(scope, types=types, since=since, until=until, limit=limit or None, include_superseded=not current)
    if as_json:
        _echo_json(rows)
        return
    for row in rows:
        click.echo(_line(row))


@click.command()
@click.argument("entry_id", type=ENTRY_ID)
@click.option("--scope", type=SCOPE_CHOICE, default="project", show_default=True)
@click.option("--json", "as_json", is_flag=True)
def show(entry_id: int, scope: str, as_json: bool) -> None:
    """One memory: its text (the corrected text first), facts, sources, history and audit rows."""
    with _read(scope) as memory:
        data = show_entry(memory, entry_id)  # redacted: content, metadata, facts
    if as_json:
        _echo_json(data)
        return
    chain = data["history"]
    current = chain[-1]
    entry = data["entry"]
    if current["id"] != entry["id"]:
        click.echo(f"corrected by {current['id']} ({current['created_at'][:10]} {current['type']}):")
        click.echo(f"  {current['content']}")
        click.echo("")
    click.echo(f"entry {entry['id']} [{entry['type']}] {entry['created_at']}")
    click.echo(entry["content"])
    if entry["metadata"]:
        click.echo(f"metadata: {json.dumps(entry['metadata'], ensure_ascii=False)}")
    if data["sources"]:
        click.echo("sources: " + ", ".join(f"{k}={v}" for k, v in data["sources"].items()))
    if data["facts"]:
        click.echo("facts:")
        for fact in data["facts"]:
            until = f" until {fact['valid_until'][:10]}" if fact["valid_until"] else ""
            click.echo(f"  {fact['subject']} {fact['predicate']} {fact['object']}{until}")
    if len(chain) > 1:
        click.echo("history (newest first):")
        for row in reversed(chain):
            here = " ← this" if row["id"] == entry["id"] else ""
            click.echo(f"  {row['id']:>6}  {row['created_at'][:10]}  {row['type']:<10} {row['content'][:80]}{here}")
    if data["audit"]:
        click.echo("audit:")
        for row in data["audit"]:
            click.echo(f"  {row['at']}  {row['action']}")


@click.command()
@click.option("--scope", type=click.Choice(["project", "global", "all"]), default="all", show_default=True)
@click.option("--json", "as_json", is_flag=True)
def stats(scope: str, as_json: bool) -> None:
    """Counts per store: entries by type, superseded, facts, entities, vectors, pending queue."""
    out: dict[str, Any] = {}
    for name in SCOPES if scope == "all" else (scope,):
        if not scope_path(name).exists():
            out[name] = None
            continue
        with _read(name) as memory:
            out[name] = store_stats(memory)
    if as_json:
        _echo_json(out)
        return
    for name, data in out.items():
        if data is None:
            click.echo(f"{name}: no store yet ({scope_path(name)})")
            continue
        types = ", ".join(f"{k} {v}" for k, v in data["by_type"].items()) or "none"
        click.echo(f"{name}: {data['path']}")
        click.echo(f"  entries {data['entries']} ({types}); superseded {data['superseded']}; with a recall cue {data['with_cue']}")
        click.echo(f"  facts {data['facts']} current / {data['fact_versions']} versions; entities {data['entities']}")
        vectors = ", ".join(f"{k}: {v['vectors']}" for k, v in data["vector_spaces"].items()) or "none"
        click.echo(f"  vectors {vectors}; pending {data['pending_vectors']}; {data['size_bytes']} bytes")


@click.command()
@click.argument("entry_ids", nargs=-1)
@click.option("--query", default=None, help="Forget the memories matching this text (previewed first).")
@click.option("--yes", is_flag=True, help="Do not ask for confirmation (scripts).")
@click.option("--limit", type=POSITIVE, default=20, show_default=True, help="With --query: at most this many matches.")
@click.option("--scope", type=SCOPE_CHOICE, default="project", show_default=True)
def forget(entry_ids: tuple[str, ...], query: str | None, yes: bool, limit: int, scope: str) -> None:
    """Delete memories by id, or those matching --query, from every channel and index.

    Only an audit row (id, type, content hash — no text) remains.
    """
    ids = list(iter_ids(entry_ids))
    if not ids and not query:
        raise InputError("give entry ids or --query TEXT")
    with _open(scope) as memory:
        if query:
            matches = preview_forget(memory, query, limit=limit)
            if not matches:
                click.echo("nothing matches; nothing forgotten")
                return
            click.echo(f"{len(matches)} memor{'y' if len(matches) == 1 else 'ies'} match {query!r}:", err=True)
            for row in matches:
                click.echo("  " + _line(row), err=True)
            if not yes and not click.confirm("Forget all of these?", default=False, err=True):
                click.echo("nothing forgotten")
                return
            ids.extend(row["id"] for row in matches)
        removed = forget_ids(memory, ids, reason="query" if query else "id")
    missing = sorted(set(ids) - set(removed))
    if missing and not removed:
        raise InputError(f"no entry with id {', '.join(map(str, missing))}")
    for entry_id in removed:
        click.echo(f"forgot entry {entry_id}")
    if missing:
        click.echo(f"crib: no entry with id {', '.join(map(str, missing))}", err=True)


@click.command()
@click.argument("entry_id", type=ENTRY_ID)
@click.argument("text", required=False)
@click.option("--type", "entry_type", default=None, help="Type of the new entry (default correction).")
@click.option("--scope", type=SCOPE_CHOICE, default="project", show_default=True)
def correct(entry_id: int, text: str | None, entry_type: str | None, scope: str) -> None:
    """Replace what entry ENTRY_ID says with TEXT (or stdin): a new entry supersedes it; both are kept."""
    new_text = text if text is not None else read_stdin()
    if not new_text.strip():
        raise InputError("nothing to write: give the corrected text")
    with _open(scope) as memory:
        new_id = correct_entry(memory, entry_id, new_text, type=entry_type)
    click.echo(f"entry {entry_id} corrected by entry {new_id}")


@click.command()
@click.argument("entry_id", type=ENTRY_ID)
@click.argument("when", required=False)
@click.option("--clear", is_flag=True, help="Remove the entry's cue.")
@click.option("--scope", type=SCOPE_CHOICE, default="project", show_default=True)
def cue(entry_id: int, when: str | None, clear: bool, scope: str) -> None:
    """Say when entry ENTRY_ID should come back: WHEN (or stdin) lists the tasks, questions or
    symptoms it bears on. Its text is not touched; `--clear` removes the cue."""
    if clear:
        when = None
    elif when is None:
        when = read_stdin()
        if not when.strip():
            raise InputError("nothing to set: give the situations the memory should come back for (or --clear)")
    with _open(scope) as memory:
        done = set_cue(memory, entry_id, when)
    if not done["when"]:
        click.echo(f"entry {entry_id}: cue cleared")
    else:
        click.echo(f"entry {entry_id}: cue set" + ("" if done["embedded"] else " (vector queued for `crib reindex`)"))


@click.command(name="log")
@click.option("--limit", type=COUNT, default=50, show_default=True)
@click.option("--entry", "entry_id", type=ENTRY_ID, default=None, help="Only rows about this entry.")
@click.option("--scope", type=SCOPE_CHOICE, default="project", show_default=True)
@click.option("--json", "as_json", is_flag=True)
def log_(limit: int, entry_id: int | None, scope: str, as_json: bool) -> None:
    """The audit log: every write, import, correction, forget and reindex, newest first."""
    if not scope_path(scope).exists():
        rows: list[dict[str, Any]] = []
    else:
        with _read(scope) as memory:
            rows = audit_log(memory, limit=limit, entry_id=entry_id)
    if as_json:
        _echo_json(rows)
        return
    for row in rows:
        target = f"entry {row['entry_id']}" if row["entry_id"] is not None else "-"
        detail = " ".join(f"{k}={v}" for k, v in row["detail"].items())
        click.echo(f"{row['id']:>6}  {row['at']}  {row['action']:<8} {target:<12} {detail}")
