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
    types of :mod:`crib_plugin.core.entry_types`), plus the top of a retrieval against the last user prompt
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
  (:func:`crib_plugin.core.faillog.log_failure`, ``crib.log`` beside the database).
* **A hard wall-clock budget.** In a hook process the work runs in a forked child
  (:mod:`crib_plugin.core.deadline`); ``CRIB_HOOK_TIMEOUT`` seconds (default 2.0) after the process
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
global store (:mod:`crib_plugin.hosts.scoped`).
Memory therefore belongs to the project, as with the plain ``crib`` command — the same file that
``crib write`` (the plugin's ``bin/crib`` on the Bash tool's PATH) writes to. The plugin's stable
data directory (``CLAUDE_PLUGIN_DATA``) holds the Python environment, not the memories.

The package, by concern: :mod:`.input` (hook JSON, events, ``resolve_db``, the timeout),
:mod:`.state` (per-session files), :mod:`.output` (``HookResult``, caps, joining blocks),
:mod:`.prompt` (UserPromptSubmit), :mod:`.start` (SessionStart), :mod:`.fetch` (the background
model fetch) and :mod:`.runner` (``run_hook`` and its deadline). The names below are re-exported.
"""

from __future__ import annotations

from .fetch import fetch_model_in_background
from .input import (
    CLAUDE_CONTEXT_CAP,
    DEFAULT_SESSION_TTL_DAYS,
    DEFAULT_TIMEOUT,
    EVENT_NAMES,
    HOOK_BUDGET,
    INDEX_LIMIT,
    MAX_TIMEOUT,
    PREFERENCE_LIMIT,
    RECALL_LIMIT,
    SESSION_START,
    STANDING_LIMIT,
    STATE_VERSION,
    TRANSCRIPT_TAIL_BYTES,
    USER_PROMPT_SUBMIT,
    VECTOR_SHARE,
    HookError,
    HookInput,
    hook_timeout,
    parse_hook_input,
    resolve_db,
)
from .output import HookResult, join_within_cap, plugin_blocks
from .prompt import user_prompt_submit
from .runner import HANDLERS, run_hook
from .start import MEMORY_AVAILABLE, Standing, last_user_prompt, memory_available, session_start, standing_entries
from .state import SessionState, prune_sessions, sanitise_session_id, session_ttl_days, sessions_dir

__all__ = [
    "CLAUDE_CONTEXT_CAP", "DEFAULT_SESSION_TTL_DAYS", "DEFAULT_TIMEOUT", "EVENT_NAMES", "HANDLERS", "HOOK_BUDGET",
    "INDEX_LIMIT", "MAX_TIMEOUT", "MEMORY_AVAILABLE", "PREFERENCE_LIMIT", "RECALL_LIMIT", "SESSION_START", "STANDING_LIMIT",
    "STATE_VERSION", "TRANSCRIPT_TAIL_BYTES", "USER_PROMPT_SUBMIT", "VECTOR_SHARE", "HookError", "HookInput",
    "HookResult", "SessionState", "Standing", "fetch_model_in_background", "hook_timeout", "join_within_cap",
    "last_user_prompt", "memory_available", "parse_hook_input", "plugin_blocks", "prune_sessions",
    "resolve_db", "run_hook", "sanitise_session_id", "session_start", "session_ttl_days",
    "sessions_dir", "standing_entries", "user_prompt_submit",
]
