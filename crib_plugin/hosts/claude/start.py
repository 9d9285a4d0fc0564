"""The SessionStart handler: the availability line, the standing memories and the top of a retrieval
against the transcript's last prompt."""

from __future__ import annotations

import dataclasses
import json
import os
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Mapping

from ...core.entry_types import as_table, standing_names
from ...core.faillog import log_failure
from ...read.fusion import fit_budget, item_cost
from ...scopes import global_db
from ...text.scrub import strip_memory_blocks
from ...text.snippet import HEADING_CHARS, pointer_cost
from .fetch import fetch_model_in_background, warm_models_in_background
from .input import (
    CLAUDE_CONTEXT_CAP,
    INDEX_LIMIT,
    INDEX_SNIPPET_CHARS,
    PREFERENCE_LIMIT,
    RECALL_LIMIT,
    SESSION_START,
    STANDING_LIMIT,
    TRANSCRIPT_TAIL_BYTES,
    HookInput,
)
from .output import HookResult, join_within_cap, open_memory, plugin_blocks
from .state import SessionState


def memory_available(types: Mapping[str, Any] | None = None) -> str:
    """The one line SessionStart always prints, so Claude knows memory exists and how to write it.

    The type names come from the type table (:mod:`crib_plugin.core.entry_types`, plugins' types included).
    """
    names = ", ".join(as_table(types))
    return (
        "crib memory is available in this project: store one self-contained fact with the crib MCP tool `remember` "
        f"(or `crib write --type TYPE --when SITUATIONS` in Bash), TYPE one of {names} — a decision with its reason, an error with its fix, "
        "a correction of an earlier belief, the user's preference — and `when`, the tasks or questions it should come back for; "
        "look up with `recall`, fix with `correct` (see the crib-memory skill). "
        "Look further when a pointer in a memory block bears on the task (`show` its id), when the task is in an area "
        "no block covers (`search`), or when a question needs many memories (the deep-recall agent, or `crib recall --deep`)."
    )


MEMORY_AVAILABLE = memory_available()
"""The line with crib's own types (what SessionStart prints when no plugin adds a type)."""


def _message_text(message: Any) -> str:
    """The typed text of a transcript user message (tool results and images are not prompts)."""
    content = message.get("content") if isinstance(message, dict) else None
    if isinstance(content, str):
        return content
    if isinstance(content, list):
        parts = [b.get("text", "") for b in content if isinstance(b, dict) and b.get("type") == "text"]
        return "\n".join(p for p in parts if isinstance(p, str))
    return ""


def last_user_prompt(transcript_path: str, *, tail_bytes: int = TRANSCRIPT_TAIL_BYTES) -> str:
    """The last prompt the user typed, from the tail of a Claude Code JSONL transcript ('' if none).

    Only the end of the file is read. Meta lines, tool results, slash-command echoes and
    anything unparseable are skipped; injected memory blocks are stripped from what remains.
    """
    if not transcript_path:
        return ""
    try:
        with open(transcript_path, "rb") as fh:
            fh.seek(0, os.SEEK_END)
            size = fh.tell()
            fh.seek(max(0, size - tail_bytes))
            data = fh.read(tail_bytes)  # bounded even for a device or a file still growing
    except OSError:
        return ""
    for line in reversed(data.decode("utf-8", "replace").splitlines()):
        try:
            record = json.loads(line)
        except ValueError:
            continue  # the first, cut line, or garbage
        if not isinstance(record, dict) or record.get("type") != "user" or record.get("isMeta"):
            continue
        text = strip_memory_blocks(_message_text(record.get("message"))).strip()
        if text and not text.startswith(("<command-", "<local-command", "<bash-", "<system-reminder")):
            return text
    return ""


def _standing_of(memory: Any, scope: str) -> tuple[list[Any], list[Any], list[Any], list[Any]]:
    """One store's current standing entries, newest first, tagged with ``scope``: the preferences
    and the other standing types shown in full (:data:`PREFERENCE_LIMIT`, :data:`STANDING_LIMIT`),
    then each one's next :data:`INDEX_LIMIT` (for the index of pointers)."""
    standing = standing_names(memory.registry.types)
    others = tuple(t for t in standing if t != "preference")
    store = memory.store
    prefs = store.recent_entries(PREFERENCE_LIMIT + INDEX_LIMIT, types=("preference",), current_only=True) if "preference" in standing else []
    rest = store.recent_entries(STANDING_LIMIT + INDEX_LIMIT, types=others, current_only=True) if others else []
    prefs = [dataclasses.replace(e, scope=scope) for e in prefs]
    rest = [dataclasses.replace(e, scope=scope) for e in rest]
    return prefs[:PREFERENCE_LIMIT], rest[:STANDING_LIMIT], prefs[PREFERENCE_LIMIT:], rest[STANDING_LIMIT:]


@dataclass
class Standing:
    """What SessionStart re-injects: ``entries`` in full, ``facts``, the ``channels`` that answered,
    and ``pointers`` — the index of older standing memories, one line each."""

    entries: list[Any] = field(default_factory=list)
    facts: list[Any] = field(default_factory=list)
    channels: list[str] = field(default_factory=list)
    pointers: list[Any] = field(default_factory=list)


def standing_entries(memory: Any, prompt: str, budget: int, scope: str = "project") -> Standing:
    """Entries, facts and pointers to re-inject at session start, best first, within ``budget``.

    The top of a retrieval against ``prompt`` (what the user was last working on) comes first, then
    the user's preferences (the project's, then the global store's), then the most recent decisions
    and corrections (and any other standing type) — superseded ones left out. The standing memories
    past those limits become pointers (older preferences first), at most :data:`INDEX_LIMIT`,
    counted against the budget after the entries: every preference the user stated stays within
    one ``show`` of the agent, however many there are. ``memory`` is the ``scope`` store; the global
    store is read too when ``memory`` is the project's. Entries carry their scope only when both
    stores contributed, as in :func:`crib_plugin.read.across.select_across`.
    """
    # deferred: imported after the prefetch fork, overlapping the prompt's embedding (47 ms)
    from ...read.across import scope_key
    from ..scoped import close_shared, global_memory, select_scoped

    entries: list[Any] = []
    facts: list[Any] = []
    channels = ["standing"]
    if prompt:
        retrieval = select_scoped(memory, prompt, budget=budget, max_items=RECALL_LIMIT, primary_scope=scope)
        entries.extend(dataclasses.replace(h.entry, scope=h.entry.scope or scope) for h in retrieval.hits)
        facts = list(retrieval.facts)
        channels.extend(c.channel for c in retrieval.channels if c.ran)
    prefs, rest, older_prefs, older_rest = _standing_of(memory, scope)
    other = global_memory(memory) if scope == "project" else None
    if other is not None:
        try:
            global_prefs, global_rest, global_older_prefs, global_older_rest = _standing_of(other, "global")
        except Exception as exc:  # the global store must never break the project's session start

            log_failure("global store", exc)
            global_prefs, global_rest, global_older_prefs, global_older_rest = [], [], [], []
        finally:
            close_shared(memory, other)
        prefs, rest = prefs + global_prefs, rest + global_rest
        older_prefs, older_rest = older_prefs + global_older_prefs, older_rest + global_older_rest
    seen = {scope_key(e.scope, e.id) for e in entries}
    for entry in prefs + rest:
        if scope_key(entry.scope, entry.id) not in seen:
            entries.append(entry)
            seen.add(scope_key(entry.scope, entry.id))
    overhead = 300 + sum(len(f.subject) + len(f.predicate) + len(f.object) + 30 for f in facts)
    kept, _dropped = fit_budget([e.content for e in entries], budget, overhead=overhead)
    entries = [entries[i] for i in kept]
    room = budget - overhead - sum(item_cost(e.content) for e in entries) - HEADING_CHARS
    pointers: list[Any] = []
    for entry in older_prefs + older_rest:
        if len(pointers) >= INDEX_LIMIT or scope_key(entry.scope, entry.id) in seen:
            continue
        room -= pointer_cost(entry.content, INDEX_SNIPPET_CHARS)
        if room < 0:
            break
        pointers.append(entry)
        seen.add(scope_key(entry.scope, entry.id))
    if {e.scope for e in entries + pointers} <= {scope} and scope == "project":  # one store: the block as before
        entries = [dataclasses.replace(e, scope="") for e in entries]
        pointers = [dataclasses.replace(e, scope="") for e in pointers]
    return Standing(entries, facts, channels, pointers)


def session_start(hook: HookInput, db: Path) -> HookResult | None:
    """The availability line and the standing memories; the session's record restarts from them."""
    # deferred: imported after the prefetch fork, overlapping the prompt's embedding (47 ms)
    from ...read.across import scope_key

    if not (db.exists() or global_db().exists()):
        # deferred: the MessageDisplay hook imports this package (claude.input, claude.state) on every streamed batch: the type registry would add the plugin manager and pluggy
        from ...plugins.type_registry import registered_types

        return HookResult(SESSION_START, memory_available(registered_types()))
    state = SessionState.for_session(db, hook.session_id).reset()
    scope = "project" if db.exists() else "global"  # no project store yet: the global one alone
    with open_memory(db if scope == "project" else global_db()) as memory:
        fetch_model_in_background(memory)
        warm_models_in_background(memory)
        budget = memory.settings.budget
        prompt = last_user_prompt(hook.transcript_path)
        standing = standing_entries(memory, prompt, budget, scope)
        entries, facts, pointers = standing.entries, standing.facts, standing.pointers
        # deferred: imported after the prefetch fork, overlapping the prompt's embedding (41 ms)
        from ...output.render import CONTEXT, INDEX_HEADING, render_block

        def render() -> str:
            return render_block(entries, facts, template=CONTEXT, user_dir=memory.settings.templates,
                                channels=standing.channels, types=memory.registry.types, pointers=pointers,
                                pointer_heading=INDEX_HEADING, pointer_chars=INDEX_SNIPPET_CHARS)

        block = render()
        line = memory_available(memory.registry.types)
        cap = CLAUDE_CONTEXT_CAP - len(line) - 1
        while len(block) > cap and (pointers or entries or facts):  # pointers go first, as in a prompt's block
            (pointers if pointers else entries if entries else facts).pop()
            block = render()
        if len(block) > cap:
            block = ""
        state.entries = {scope_key(e.scope or scope, e.id) for e in entries} if block else set()
        state.facts = {f.id for f in facts} if block else set()
        state.pointers = {scope_key(e.scope or scope, e.id) for e in pointers} if block else set()
        # Plugins' on_prompt blocks for what the user was last working on (crib's own is the block above).
        extra = plugin_blocks(memory, prompt, state, budget) if prompt else []
    block = join_within_cap([b for b in [block, *extra] if b], CLAUDE_CONTEXT_CAP - len(line) - 1)
    # The reset record is kept even when nothing is injected: what was injected before is gone.
    context = f"{line}\n{block}" if block else line
    return HookResult(SESSION_START, context, state)
