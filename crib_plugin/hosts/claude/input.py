"""Hook input: the JSON Claude Code sends, the hook events, which database a hook uses and its time budget."""

from __future__ import annotations

import json
import os
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Mapping

from ...core.config import get_settings, load_settings
from ...core.limits import bound_prompt
from ...scopes import repo_store
from ..agents import get_host

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
INDEX_LIMIT = 16
"""Standing memories past those two limits (older preferences first, then older decisions and
corrections), listed at SessionStart as one-line pointers: the agent knows every preference exists
and can ``show`` the one a task needs, for about 25 tokens each instead of the whole memory."""
INDEX_SNIPPET_CHARS = 72
"""Characters of an index pointer's snippet: longer than a prompt's pointers (40), since the index
is paid once a session and a preference's first words rarely say what it is about."""
RECALL_LIMIT = 5  # top hits of the transcript's last prompt re-injected at SessionStart
TRANSCRIPT_TAIL_BYTES = 512 * 1024  # the last user prompt is near the end; never read a whole transcript
STATE_VERSION = 1

USER_PROMPT_SUBMIT = "user-prompt-submit"
SESSION_START = "session-start"
EVENT_NAMES = {USER_PROMPT_SUBMIT: "UserPromptSubmit", SESSION_START: "SessionStart"}


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
    timeout: float = DEFAULT_TIMEOUT  # seconds it may take (CRIB_HOOK_TIMEOUT); not the block's budget, which is characters
    host: str = "claude"  # which agent host sent it (:mod:`crib_plugin.hosts.agents`)


def _text(data: Mapping[str, Any], key: str) -> str:
    value = data.get(key)
    return value if isinstance(value, str) else ""


def parse_hook_input(raw: str, event: str, host: str = "claude") -> HookInput:
    """Parse the hook's stdin. Plain text (not JSON) is taken as the prompt, for manual use.

    ``host`` names the agent host whose JSON it is (:func:`crib_plugin.hosts.agents.get_host`):
    its field names are mapped onto the ones read here.

    The prompt is bounded (:func:`crib_plugin.core.limits.bound_prompt`): retrieval's cost does not grow
    with it past ``MAX_PROMPT_CHARS``."""
    text = raw.strip()
    data: Any = None
    if text.startswith("{"):
        try:
            data = json.loads(text)
        except (json.JSONDecodeError, RecursionError):
            data = None
    if not isinstance(data, dict):
        return HookInput(event=event, prompt=bound_prompt(text), host=host)
    data = get_host(host).read(data)
    return HookInput(
        event=event,
        session_id=_text(data, "session_id").strip(),
        prompt=bound_prompt(_text(data, "prompt").strip()),
        cwd=_text(data, "cwd"),
        source=_text(data, "source").strip().lower(),
        transcript_path=_text(data, "transcript_path"),
        raw=data,
        host=host,
    )


def resolve_db(hook: HookInput, environ: Mapping[str, str] | None = None) -> Path:
    """``CRIB_DB`` (or ``db`` in a config file: the project's ``.crib.toml`` is looked for in the
    project dir), else ``.state/crib/crib.db`` at the repository root of the project dir, the
    hook's cwd, or ``.``."""
    env = os.environ if environ is None else environ
    base = (env.get("CLAUDE_PROJECT_DIR") or "").strip() or hook.cwd.strip()
    settings = load_settings(env, project_dir=base or None)
    if settings.source("db") != "default":
        return settings.db
    return repo_store(Path(base) if base else None)  # the repository root's store


def hook_timeout(environ: Mapping[str, str] | None = None) -> float:
    """``CRIB_HOOK_TIMEOUT`` in seconds (default 2.0, at most ``MAX_TIMEOUT``); ConfigError if malformed."""
    settings = get_settings() if environ is None else load_settings(environ)
    return min(float(settings.hook_timeout), MAX_TIMEOUT)
