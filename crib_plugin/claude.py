"""Claude Code hook adapters: the hook's JSON on stdin → ``hookSpecificOutput`` JSON on stdout.

Two events are served (``crib hook user-prompt-submit`` and ``crib hook session-start``):

``UserPromptSubmit``
    Retrieves memories for the prompt and answers
    ``{"hookSpecificOutput": {"hookEventName": "UserPromptSubmit", "additionalContext": "…"}}`` with
    the fenced ``<memory-context>`` block — or prints nothing when nothing new is relevant. Third-party
    ``on_prompt`` implementations contribute blocks after crib's own.

``SessionStart``
    For every ``source`` (``startup``, ``resume``, ``clear``, ``compact``) re-injects the standing
    memories — the user's preferences, the most recent decisions and corrections (the *standing*
    types of :mod:`crib_plugin.entry_types`), plus the top of a retrieval against the last user prompt
    in the transcript when ``transcript_path`` is readable — after one line (:data:`MEMORY_AVAILABLE`)
    telling Claude that memory exists and how to write it. That line is printed even with an empty or
    missing store: it is how Claude learns to store the first memory. No fenced block is printed when
    there is nothing standing (never an empty block, never an empty ``additionalContext``). It resets
    the session's
    "already injected" record: after ``clear`` or ``compact`` the context no longer holds what was
    injected before, and on ``startup``/``resume`` a fresh record is simply the honest state.

Rules both follow, because Claude Code documents them (hooks reference, 2026):

* **Never block the prompt.** Exit status is always 0 (exit 2 would erase the prompt); failures print
  nothing on stdout — any stray stdout line would become context — and one line goes to the log file
  (:func:`crib_plugin.cli_io.log_failure`, ``crib.log`` beside the database).
* **A hard wall-clock budget.** In a hook process the work runs in a forked child
  (:mod:`crib_plugin.deadline`); ``CRIB_HOOK_TIMEOUT`` seconds (default 2.0) after the process
  started — Python's start-up included — the parent kills it, prints nothing and exits 0, whatever
  the child is stuck in (a socket read, a C call holding the GIL). Without ``fork``, and when called
  in process, a worker thread and ``os._exit`` do what they can.
* **Under the 10,000-character cap.** crib's block is selected within ``min(CRIB_BUDGET, 9000)``
  characters; whatever is rendered is then checked against the cap (a user template can add text),
  dropping the lowest-ranked items until it fits. The final string is checked again before printing.
* **Never repeat within a session.** Entry ids (and fact ids) injected into a session are kept in
  ``<database dir>/sessions/<sanitised session_id>.json`` — with the default database that is
  ``.state/crib/sessions/`` — written atomically and pruned after ``CRIB_SESSION_TTL_DAYS`` days
  (default 7). They are passed to selection as ``exclude``: asking the same thing twice in one
  session injects nothing the second time. Without a ``session_id`` nothing is recorded.

Which database: ``CRIB_DB`` when set; otherwise ``.state/crib/crib.db`` at the git repository root
holding ``CLAUDE_PROJECT_DIR`` (the project root Claude Code gives hooks), else the hook's ``cwd``,
else the current directory (:func:`crib_plugin.scopes.project_db`); the prompt hook also reads the
global store (:mod:`crib_plugin.scoped`).
Memory therefore belongs to the project, as with the plain ``crib`` command — the same file that
``crib write`` (the plugin's ``bin/crib`` on the Bash tool's PATH) writes to. The plugin's stable
data directory (``CLAUDE_PLUGIN_DATA``) holds the Python environment, not the memories.
"""

from __future__ import annotations

import hashlib
import json
import os
import re
import sys
import tempfile
import threading
import time
from dataclasses import dataclass, field
from pathlib import Path
from typing import IO, Any, Callable, Mapping

from .timeutil import now_iso

CLAUDE_CONTEXT_CAP = 10_000  # Claude Code replaces a longer injected string by a file path + preview
HOOK_BUDGET = 9_000  # what crib's selection may use, leaving room for the fence and plugin blocks
DEFAULT_TIMEOUT = 2.0  # seconds of hook work, well under Claude Code's own hook timeout
VECTOR_SHARE = 0.6
"""Share of the hook's budget the vector channel may wait for the prompt's embedding; after it,
the vector channel is reported as skipped and the full-text and fact channels still answer."""
MAX_TIMEOUT = 60.0
DEFAULT_SESSION_TTL_DAYS = 7.0
STANDING_LIMIT = 8  # recent decisions and corrections (other standing types) re-injected at SessionStart
PREFERENCE_LIMIT = 12  # the user's newest preferences, re-injected at SessionStart before the rest
RECALL_LIMIT = 5  # top hits of the transcript's last prompt re-injected at SessionStart
TRANSCRIPT_TAIL_BYTES = 512 * 1024  # the last user prompt is near the end; never read a whole transcript
STATE_VERSION = 1

USER_PROMPT_SUBMIT = "user-prompt-submit"
SESSION_START = "session-start"
EVENT_NAMES = {USER_PROMPT_SUBMIT: "UserPromptSubmit", SESSION_START: "SessionStart"}


def memory_available(types: Mapping[str, Any] | None = None) -> str:
    """The one line SessionStart always prints, so Claude knows memory exists and how to write it.

    The type names come from the type table (:mod:`crib_plugin.entry_types`, plugins' types included).
    """
    from .entry_types import as_table

    names = ", ".join(as_table(types))
    return (
        "crib memory is available in this project: store one self-contained fact with the crib MCP tool `remember` "
        f"(or `crib write --type TYPE` in Bash), TYPE one of {names} — a decision with its reason, an error with its fix, "
        "a correction of an earlier belief, the user's preference; look up with `recall`, fix with `correct` "
        "(see the crib-memory skill)."
    )


MEMORY_AVAILABLE = memory_available()
"""The line with crib's own types (what SessionStart prints when no plugin adds a type)."""


class HookError(Exception):
    """A hook produced something it must not print (e.g. a block over Claude Code's cap)."""


# -- input --------------------------------------------------------------------------------------


@dataclass
class HookInput:
    """The fields crib uses from Claude Code's hook JSON (unknown fields are kept in ``raw``)."""

    event: str
    session_id: str = ""
    prompt: str = ""
    cwd: str = ""
    source: str = ""
    transcript_path: str = ""
    raw: dict[str, Any] = field(default_factory=dict)
    started: float | None = None  # time.perf_counter() when the hook began (set by run_hook)
    budget: float = DEFAULT_TIMEOUT  # seconds it may take (CRIB_HOOK_TIMEOUT)


def _text(data: Mapping[str, Any], key: str) -> str:
    value = data.get(key)
    return value if isinstance(value, str) else ""


def parse_hook_input(raw: str, event: str) -> HookInput:
    """Parse the hook's stdin. Plain text (not JSON) is taken as the prompt, for manual use.

    The prompt is bounded (:func:`crib_plugin.limits.bound_prompt`): retrieval's cost does not grow
    with it past ``MAX_PROMPT_CHARS``."""
    from .limits import bound_prompt

    text = raw.strip()
    data: Any = None
    if text.startswith("{"):
        try:
            data = json.loads(text)
        except (json.JSONDecodeError, RecursionError):
            data = None
    if not isinstance(data, dict):
        return HookInput(event=event, prompt=bound_prompt(text))
    return HookInput(
        event=event,
        session_id=_text(data, "session_id").strip(),
        prompt=bound_prompt(_text(data, "prompt").strip()),
        cwd=_text(data, "cwd"),
        source=_text(data, "source").strip().lower(),
        transcript_path=_text(data, "transcript_path"),
        raw=data,
    )


def resolve_db(hook: HookInput, environ: Mapping[str, str] | None = None) -> Path:
    """``CRIB_DB`` (or ``db`` in a config file: the project's ``.crib.toml`` is looked for in the
    project dir), else ``.state/crib/crib.db`` at the repository root of the project dir, the
    hook's cwd, or ``.``."""
    from .config import load_settings
    from .scopes import repo_store

    env = os.environ if environ is None else environ
    base = (env.get("CLAUDE_PROJECT_DIR") or "").strip() or hook.cwd.strip()
    settings = load_settings(env, project_dir=base or None)
    if settings.source("db") != "default":
        return settings.db
    return repo_store(Path(base) if base else None)  # the repository root's store


def hook_timeout(environ: Mapping[str, str] | None = None) -> float:
    """``CRIB_HOOK_TIMEOUT`` in seconds (default 2.0, at most ``MAX_TIMEOUT``); ConfigError if malformed."""
    from .config import get_settings, load_settings

    settings = get_settings() if environ is None else load_settings(environ)
    return min(float(settings.hook_timeout), MAX_TIMEOUT)


# -- per-session state --------------------------------------------------------------------------


_UNSAFE = re.compile(r"[^A-Za-z0-9_.-]")


def sanitise_session_id(session_id: str) -> str:
    """A file-name-safe, collision-resistant name for a session id ('' when there is none).

    Claude Code's ids are UUIDs and pass through unchanged; anything else is reduced to safe
    characters and suffixed with a short hash of the original, so two ids never share a file.
    """
    session_id = session_id.strip()
    if not session_id:
        return ""
    safe = _UNSAFE.sub("_", session_id)[:80].lstrip(".")
    if safe == session_id:
        return safe
    digest = hashlib.sha256(session_id.encode("utf-8")).hexdigest()[:12]
    return f"{safe or 'session'}-{digest}"


def sessions_dir(db: Path) -> Path:
    """Where session records live: ``sessions/`` beside the database (``.state/crib/sessions``)."""
    if "://" in str(db):  # a server database (PostgreSQL later): keep state in the project
        from .config import DEFAULT_DB

        return DEFAULT_DB.parent / "sessions"
    return db.parent / "sessions"


def session_ttl_days(environ: Mapping[str, str] | None = None) -> float:
    """``CRIB_SESSION_TTL_DAYS`` (default 7); ConfigError if malformed."""
    from .config import get_settings, load_settings

    settings = get_settings() if environ is None else load_settings(environ)
    return float(settings.session_ttl_days)


@dataclass
class SessionState:
    """What one Claude Code session has already been given: entry ids and fact ids."""

    path: Path | None
    session_id: str = ""
    entries: set[int] = field(default_factory=set)
    facts: set[int] = field(default_factory=set)

    @classmethod
    def for_session(cls, db: Path, session_id: str) -> "SessionState":
        """The saved record of ``session_id`` (empty when missing or unreadable; no path without an id)."""
        name = sanitise_session_id(session_id)
        if not name:
            return cls(path=None)
        path = sessions_dir(db) / f"{name}.json"
        state = cls(path=path, session_id=session_id)
        try:
            data = json.loads(path.read_text(encoding="utf-8"))
        except (OSError, ValueError):
            return state  # missing or corrupt: start afresh (at worst something is repeated once)
        if isinstance(data, dict):
            state.entries = _int_set(data.get("entries"))
            state.facts = _int_set(data.get("facts"))
        return state

    def reset(self) -> "SessionState":
        """The same session with nothing recorded (after compaction the context holds none of it)."""
        return SessionState(self.path, self.session_id)

    def save(self) -> None:
        """Write atomically (temporary file in the same folder, then rename); no-op without a path."""
        if self.path is None:
            return
        from .store.dirs import prepare_store_dir

        prepare_store_dir(self.path.parent)  # .state/crib (with its .gitignore), before sessions/
        self.path.parent.mkdir(parents=True, exist_ok=True)
        payload = {
            "version": STATE_VERSION,
            "session_id": self.session_id,
            "entries": sorted(self.entries),
            "facts": sorted(self.facts),
            "updated_at": now_iso(),
        }
        fd, tmp = tempfile.mkstemp(prefix=".tmp-", suffix=".json", dir=str(self.path.parent))
        try:
            with os.fdopen(fd, "w", encoding="utf-8") as fh:
                json.dump(payload, fh)
            os.replace(tmp, self.path)
        except BaseException:
            try:
                os.unlink(tmp)
            except OSError:
                pass
            raise


def _int_set(value: Any) -> set[int]:
    if not isinstance(value, list):
        return set()
    return {int(v) for v in value if isinstance(v, int) and not isinstance(v, bool)}


def prune_sessions(folder: Path, max_age_days: float, *, now: float | None = None) -> int:
    """Delete session records (and stray temporary files) not touched for ``max_age_days``."""
    if not folder.is_dir():
        return 0
    cutoff = (time.time() if now is None else now) - max_age_days * 86400
    removed = 0
    for path in folder.iterdir():
        if path.suffix != ".json":
            continue
        try:
            if path.stat().st_mtime < cutoff:
                path.unlink()
                removed += 1
        except OSError:
            continue
    return removed


# -- output -------------------------------------------------------------------------------------


@dataclass
class HookResult:
    """What a hook decided: the context to inject and the session record to keep."""

    event: str
    context: str
    state: SessionState | None = None

    def payload(self) -> dict[str, Any]:
        return {"hookSpecificOutput": {"hookEventName": EVENT_NAMES[self.event], "additionalContext": self.context}}

    def output(self) -> str:
        """The JSON line to print; refuses (HookError) a context over Claude Code's cap."""
        if len(self.context) > CLAUDE_CONTEXT_CAP:
            raise HookError(f"context of {len(self.context)} characters exceeds the {CLAUDE_CONTEXT_CAP} cap")
        return json.dumps(self.payload(), ensure_ascii=False)

    def commit(self, environ: Mapping[str, str] | None = None) -> None:
        """Save the session record and prune old ones."""
        if self.state is None or self.state.path is None:
            return
        self.state.save()
        prune_sessions(self.state.path.parent, session_ttl_days(environ))


# -- retrieval helpers ----------------------------------------------------------------------------


def _open_memory(db: Path) -> Any:
    """The project's memory, opened read-mostly (never created), budget capped for hooks."""
    from .config import load_settings
    from .memory import Memory

    settings = load_settings()
    settings.db = db
    settings.budget = min(settings.budget, HOOK_BUDGET)
    return Memory(create=False, settings=settings, readonly=True)


def render_within_cap(memory: Any, retrieval: Any, cap: int) -> str:
    """Render the fenced block, dropping the lowest-ranked hits (then facts) until it fits ``cap``."""
    from .builtin_hooks import render_within
    from .render import CONTEXT

    return render_within(memory, retrieval, CONTEXT, cap)


def plugin_blocks(memory: Any, prompt: str, state: SessionState, budget: int) -> list[str]:
    """Blocks from third-party ``on_prompt`` implementations (crib's own is replaced by this module).

    crib's built-in ``on_prompt`` is left out because the hook does that retrieval itself, with the
    session's fact ids excluded too. A failing plugin contributes nothing.
    """
    from .session import Session

    pm = memory.pm
    builtin = pm.get_plugin("crib_plugin.builtin_hooks")
    caller = pm.subset_hook_caller("on_prompt", remove_plugins=[builtin] if builtin is not None else [])
    session = Session(memory, id=state.session_id, injected=set(state.entries), budget=budget)
    try:
        results = caller(prompt=prompt, session=session)
    except Exception as exc:
        from .cli_io import log_failure

        log_failure("hook on_prompt plugin", exc)
        return []
    state.entries |= {i for i in session.injected if isinstance(i, int)}
    return [r.strip() + "\n" for r in results if isinstance(r, str) and r.strip()]


def _builtin_only(pm: Any) -> Any:
    """A caller of ``on_prompt`` that runs crib's own implementation and no plugin's."""
    builtin = pm.get_plugin("crib_plugin.builtin_hooks")
    others = [p for p in pm.get_plugins() if p is not builtin]
    return pm.subset_hook_caller("on_prompt", remove_plugins=others)


def join_within_cap(blocks: list[str], cap: int = CLAUDE_CONTEXT_CAP) -> str:
    """Join blocks in order, skipping any that would push the total over ``cap``."""
    out = ""
    for block in blocks:
        candidate = f"{out}\n{block}" if out else block
        if len(candidate) <= cap:
            out = candidate
    return out


# -- UserPromptSubmit -----------------------------------------------------------------------------


def user_prompt_submit(hook: HookInput, db: Path) -> HookResult | None:
    """Relevant memories not yet injected in this session, as the fenced block (None: print nothing)."""
    from .scopes import global_db

    if not hook.prompt or not (db.exists() or global_db().exists()):
        return None  # a missing database is the normal state before the first `crib write`
    state = SessionState.for_session(db, hook.session_id)
    from .config import load_settings
    from .prefetch import fork_for

    worker = fork_for(load_settings(), hook.prompt)  # its numpy import overlaps opening the store
    try:
        return _user_prompt_submit(hook, db, state, worker)
    finally:
        if worker is not None:
            worker.cancel()


def _user_prompt_submit(hook: HookInput, db: Path, state: "SessionState", worker: Any) -> HookResult | None:
    """The ``on_prompt`` hook point, as any host calls it; crib's block first, then the plugins'.

    Reads the project store and the global one (the global one alone while the project has none);
    the session's injected set holds :func:`~crib_plugin.scoped.scope_key` keys."""
    from .scopes import global_db
    from .session import Session

    scope = "project" if db.exists() else "global"  # no project store yet: the global one alone
    with _open_memory(db if scope == "project" else global_db()) as memory:
        give_up_at = None
        if hook.started is not None:  # the vector may use part of the budget; the rest must still answer
            give_up_at = hook.started + VECTOR_SHARE * hook.budget
        session = Session(
            memory, id=state.session_id, injected=set(state.entries), budget=memory.settings.budget,
            injected_facts=set(state.facts), cap=CLAUDE_CONTEXT_CAP, worker=worker, give_up_at=give_up_at,
            scope=scope,
        )
        try:
            results = memory.pm.hook.on_prompt(prompt=hook.prompt, session=session)
        except Exception as exc:  # a plugin raised: keep crib's own block, drop the plugins'
            from .cli_io import log_failure

            log_failure("hook on_prompt plugin", exc)
            results = _builtin_only(memory.pm)(prompt=hook.prompt, session=session)
        if session.error is not None:
            raise session.error
        block = session.block or ""
        extra = [r.strip() + "\n" for r in results if isinstance(r, str) and r.strip() and r is not session.block]
        state.entries |= {i for i in session.injected if isinstance(i, int)}
        state.facts |= {i for i in session.injected_facts if isinstance(i, int)}
    context = join_within_cap([b for b in [block, *extra] if b])
    if not context:
        return None
    return HookResult(USER_PROMPT_SUBMIT, context, state)


# -- SessionStart ---------------------------------------------------------------------------------


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
    from .scrub import strip_memory_blocks

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


def _standing_of(memory: Any, scope: str) -> tuple[list[Any], list[Any]]:
    """One store's current preferences and its other standing entries, newest first, tagged with ``scope``."""
    import dataclasses

    from .entry_types import standing_names

    standing = standing_names(memory.registry.types)
    others = tuple(t for t in standing if t != "preference")
    store = memory.store
    prefs = store.recent_entries(PREFERENCE_LIMIT, types=("preference",), current_only=True) if "preference" in standing else []
    rest = store.recent_entries(STANDING_LIMIT, types=others, current_only=True) if others else []
    return [dataclasses.replace(e, scope=scope) for e in prefs], [dataclasses.replace(e, scope=scope) for e in rest]


def standing_entries(memory: Any, prompt: str, budget: int, scope: str = "project") -> tuple[list[Any], list[Any], list[str]]:
    """Entries and facts to re-inject at session start, best first, within ``budget``.

    The top of a retrieval against ``prompt`` (what the user was last working on) comes first, then
    the user's preferences (the project's, then the global store's), then the most recent decisions
    and corrections (and any other standing type) — superseded ones left out. ``memory`` is the
    ``scope`` store; the global store is read too when ``memory`` is the project's. Entries carry
    their scope only when both stores contributed, as in :func:`crib_plugin.scoped.select_scoped`.
    """
    import dataclasses

    from .fusion import fit_budget
    from .scoped import _close_shared, global_memory, scope_key, select_scoped

    entries: list[Any] = []
    facts: list[Any] = []
    channels = ["standing"]
    if prompt:
        retrieval = select_scoped(memory, prompt, budget=budget, max_items=RECALL_LIMIT, primary_scope=scope)
        entries.extend(dataclasses.replace(h.entry, scope=h.entry.scope or scope) for h in retrieval.hits)
        facts = list(retrieval.facts)
        channels.extend(c.channel for c in retrieval.channels if c.ran)
    prefs, rest = _standing_of(memory, scope)
    other = global_memory(memory) if scope == "project" else None
    if other is not None:
        try:
            global_prefs, global_rest = _standing_of(other, "global")
        except Exception as exc:  # the global store must never break the project's session start
            from .cli_io import log_failure

            log_failure("global store", exc)
            global_prefs, global_rest = [], []
        finally:
            _close_shared(memory, other)
        prefs, rest = prefs + global_prefs, rest + global_rest
    seen = {scope_key(e.scope, e.id) for e in entries}
    for entry in prefs + rest:
        if scope_key(entry.scope, entry.id) not in seen:
            entries.append(entry)
            seen.add(scope_key(entry.scope, entry.id))
    fact_cost = sum(len(f.subject) + len(f.predicate) + len(f.object) + 30 for f in facts)
    kept, _dropped = fit_budget([e.content for e in entries], budget, overhead=300 + fact_cost)
    entries = [entries[i] for i in kept]
    if {e.scope for e in entries} <= {scope} and scope == "project":  # one store: the block as before
        entries = [dataclasses.replace(e, scope="") for e in entries]
    return entries, facts, channels


def session_start(hook: HookInput, db: Path) -> HookResult | None:
    """The availability line and the standing memories; the session's record restarts from them."""
    from .scoped import scope_key
    from .scopes import global_db

    if not (db.exists() or global_db().exists()):
        from .type_registry import registered_types

        return HookResult(SESSION_START, memory_available(registered_types()))
    state = SessionState.for_session(db, hook.session_id).reset()
    scope = "project" if db.exists() else "global"  # no project store yet: the global one alone
    with _open_memory(db if scope == "project" else global_db()) as memory:
        _fetch_model_in_background(memory)
        budget = memory.settings.budget
        prompt = last_user_prompt(hook.transcript_path)
        entries, facts, channels = standing_entries(memory, prompt, budget, scope)
        from .render import CONTEXT, render_block

        def render() -> str:
            return render_block(entries, facts, template=CONTEXT, user_dir=memory.settings.templates, channels=channels,
                                types=memory.registry.types)

        block = render()
        line = memory_available(memory.registry.types)
        cap = CLAUDE_CONTEXT_CAP - len(line) - 1
        while len(block) > cap and (entries or facts):
            (entries if entries else facts).pop()
            block = render()
        if len(block) > cap:
            block = ""
        state.entries = {scope_key(e.scope or scope, e.id) for e in entries} if block else set()
        state.facts = {f.id for f in facts} if block else set()
        # Plugins' on_prompt blocks for what the user was last working on (crib's own is the block above).
        extra = plugin_blocks(memory, prompt, state, budget) if prompt else []
    block = join_within_cap([b for b in [block, *extra] if b], CLAUDE_CONTEXT_CAP - len(line) - 1)
    # The reset record is kept even when nothing is injected: what was injected before is gone.
    context = f"{line}\n{block}" if block else line
    return HookResult(SESSION_START, context, state)


def _fetch_model_in_background(memory: Any) -> None:
    """Start fetching the offline MiniLM weights in a detached process when they are missing.

    The per-prompt hook has a 2-second budget and could never finish a first download itself.
    """
    try:
        if memory.embedder_name() != "minilm":
            return
        from .models.weights import WEIGHTS_FILE, model_dir

        if (model_dir() / WEIGHTS_FILE).exists():
            return
        import subprocess

        subprocess.Popen(
            [sys.executable, "-c", "from crib_plugin.models.weights import ensure_minilm; ensure_minilm()"],
            stdin=subprocess.DEVNULL,
            stdout=subprocess.DEVNULL,
            stderr=subprocess.DEVNULL,
            start_new_session=True,
        )
    except Exception:  # best effort: the next session start tries again
        pass


# -- running a hook -------------------------------------------------------------------------------

HANDLERS: dict[str, Callable[[HookInput, Path], HookResult | None]] = {
    USER_PROMPT_SUBMIT: user_prompt_submit,
    SESSION_START: session_start,
}


def _read(stream: IO[str] | None) -> str:
    """At most ``MAX_HOOK_STDIN_BYTES`` of stdin, invalid UTF-8 replaced (never an error)."""
    from .limits import MAX_HOOK_STDIN_BYTES

    if stream is None or stream.closed:
        return ""
    try:
        source = getattr(stream, "buffer", None)
        if source is None:
            return stream.read(MAX_HOOK_STDIN_BYTES)
        return source.read(MAX_HOOK_STDIN_BYTES).decode("utf-8", "replace")
    except (OSError, ValueError):
        return ""


def _log(event: str, exc: BaseException) -> None:
    from .cli_io import log_failure

    log_failure(f"hook {event}", exc)


def run_hook(
    event: str,
    *,
    stdin: IO[str] | None = None,
    stdout: IO[str] | None = None,
    own_process: bool = True,
) -> int:
    """Run one hook within its time budget and print its JSON (or nothing). Always returns 0.

    Reading stdin, opening the database and retrieving all happen in a daemon worker thread; the
    calling thread waits at most ``CRIB_HOOK_TIMEOUT`` seconds. On timeout nothing is printed, one
    line is logged and — when this process is the hook (``own_process``) — it leaves at once with
    ``os._exit(0)``, since a worker blocked in a socket read cannot be interrupted. The session
    record is saved only when the answer is printed, so a timed-out answer is not remembered as
    injected. Where ``fork`` exists and this process is the hook, :func:`_run_forked` replaces the
    thread with a killable child process: a hard deadline (see :mod:`crib_plugin.deadline`).
    """
    stdin = sys.stdin if stdin is None else stdin
    stdout = sys.stdout if stdout is None else stdout
    started = time.perf_counter()
    try:
        timeout = hook_timeout()
    except Exception as exc:  # a malformed setting: log it (naming the variable), print nothing
        _log(event, exc)
        return 0
    from . import deadline

    if own_process and deadline.supported():  # a hard deadline: the work runs in a killable child
        return _run_forked(event, stdin, stdout, timeout, started)
    box: dict[str, Any] = {}

    def work() -> None:
        try:
            hook = parse_hook_input(_read(stdin), event)
            hook.started, hook.budget = started, timeout
            db = resolve_db(hook)
            if own_process:  # one-shot process: make every component (and the log) agree on the db
                os.environ["CRIB_DB"] = str(db)
            box["result"] = HANDLERS[event](hook, db)
        except BaseException as exc:  # noqa: BLE001 - fail open on anything, even SystemExit
            box["error"] = exc

    worker = threading.Thread(target=work, name=f"crib-hook-{event}", daemon=True)
    worker.start()
    worker.join(timeout)
    if worker.is_alive():
        _log(event, TimeoutError(f"gave up after {timeout:g} s (CRIB_HOOK_TIMEOUT); printed nothing"))
        if own_process:
            _hard_exit(stdout)
        return 0
    if "error" in box:
        _log(event, box["error"])
        return 0
    result: HookResult | None = box.get("result")
    if result is not None:
        _emit(event, result, stdout)
    return 0


def _emit(event: str, result: "HookResult", stdout: IO[str]) -> None:
    """Print a finished hook's JSON and save its session record; each failure is logged, never raised."""
    try:
        text = result.output()
    except HookError as exc:
        _log(event, exc)
        return
    try:
        result.commit()
    except Exception as exc:  # the answer is still right; at worst it is repeated later
        _log(event, exc)
    try:
        stdout.write(text + "\n")
        stdout.flush()
    except (OSError, ValueError) as exc:
        _log(event, exc)


def _run_forked(event: str, stdin: IO[str], stdout: IO[str], timeout: float, started: float) -> int:
    """:func:`run_hook` for a hook process: :func:`crib_plugin.deadline.run_in_child` does the work
    in a forked child and, at the deadline, kills it and leaves with nothing printed."""
    from . import deadline

    origin = started - deadline.process_age()  # the budget counts from the process's start

    def answer(note: Callable[[dict[str, Any]], None]) -> tuple[str, Any] | None:
        try:
            hook = parse_hook_input(_read(stdin), event)
            hook.started, hook.budget = origin, timeout
            db = resolve_db(hook)
            os.environ["CRIB_DB"] = str(db)  # one-shot process: every component (and the log) agrees
            note({"db": str(db)})  # so the parent logs a timeout beside this database
            result = HANDLERS[event](hook, db)
            if result is None:
                return None
            state = result.state
            record = None if state is None or state.path is None else {
                "path": str(state.path), "session_id": state.session_id,
                "entries": sorted(state.entries), "facts": sorted(state.facts),
            }
            return result.output(), record
        except BaseException as exc:  # noqa: BLE001 - fail open on anything, even SystemExit
            _log(event, exc)
            return None

    def commit(record: Any) -> None:
        if isinstance(record, dict) and isinstance(record.get("path"), str):
            state = SessionState(Path(record["path"]), str(record.get("session_id") or ""),
                                 _int_set(record.get("entries")), _int_set(record.get("facts")))
            try:
                HookResult(event, "", state).commit()
            except Exception as exc:  # the answer is still right; at worst it is repeated later
                _log(event, exc)

    def on_timeout(notes: list[dict[str, Any]]) -> None:
        db = next((n["note"]["db"] for n in notes if isinstance(n.get("note"), dict) and "db" in n["note"]), None)
        if isinstance(db, str):
            os.environ["CRIB_DB"] = db
        _log(event, TimeoutError(f"gave up after {timeout:g} s (CRIB_HOOK_TIMEOUT); printed nothing"))

    return deadline.run_in_child(answer, commit, stdout=stdout, timeout=timeout, on_timeout=on_timeout)


def _hard_exit(stdout: IO[str]) -> None:
    """Leave now with status 0, without waiting for a stuck worker or interpreter clean-up."""
    for stream in (stdout, sys.stderr):
        try:
            stream.flush()
        except Exception:
            pass
    os._exit(0)
