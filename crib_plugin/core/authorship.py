"""Who wrote a change: the user, the machine, the kind of agent, its session and the project.

Every audit row (``crib log``) carries these, so on a store a team shares — one PostgreSQL database
for several developers' agents, CI bots and a reviewer, on several machines — each memory's
``write`` row says who stored it, from which project, and ``crib log`` / ``crib show`` show it.
The audit log is the place (not the entry's metadata): metadata takes part in duplicate detection
and is the memory's own data, exported and imported with it; the audit row is the record of the
act, kept even after a forget. Both backends carry it without a schema change.

A leaf: reads only the process (user, host name, environment), never a store.
"""

from __future__ import annotations

import getpass
import os
from collections.abc import Sequence
from functools import lru_cache
from pathlib import Path
from typing import Any

from .config import setting_value
from .repo import repo_root

AGENT: str | None = None  # set by a long-lived host (the MCP server) to name itself
SESSION = os.urandom(6).hex()  # one per process (12 hex digits, as uuid4's first 12): an MCP server's lifetime is one agent session


def _machine() -> str:
    """The host name, without importing socket or platform (the stores import this module on the
    per-prompt path): ``uname`` on POSIX, ``COMPUTERNAME`` on Windows."""
    return os.uname().nodename if hasattr(os, "uname") else os.environ.get("COMPUTERNAME", "")


@lru_cache(maxsize=1)
def _user_and_machine() -> tuple[str, str]:
    try:
        user = getpass.getuser()
    except Exception:  # no login name (a container without /etc/passwd entry)
        user = str(os.getuid()) if hasattr(os, "getuid") else "unknown"
    return user, _machine() or "unknown"


def agent() -> str:
    """``mcp`` (the MCP server), ``claude-code`` (a command Claude Code runs: it sets
    ``CLAUDECODE``), ``ci`` (``CI`` set), else ``cli`` — a person or a script."""
    if AGENT:
        return AGENT
    if os.environ.get("CLAUDECODE"):
        return "claude-code"
    if os.environ.get("CI"):
        return "ci"
    return "cli"


#: Environment variables an agent host sets in the commands it runs (its hooks, its MCP servers, its
#: shell tool), and the host each names; ``CRIB_HOST`` (set by ``crib setup``) comes first.
HOST_MARKERS: tuple[tuple[str, str], ...] = (
    ("CLAUDECODE", "claude-code"), ("GEMINI_CLI", "gemini-cli"), ("OPENCODE", "opencode"), ("CODEX_SANDBOX", "codex"),
    ("CODEX_THREAD_ID", "codex"),
)
HOST_NAMES = {"claude": "claude-code", "gemini": "gemini-cli"}  # crib setup's short names → the hosts' own


def host() -> str:
    """The agent host the change came through (``codex``, ``claude-code``, ``gemini-cli``,
    ``opencode``), or "" when none is known (a person at a terminal, a script)."""
    given = str(setting_value("host", "") or "").strip().lower()
    if given:
        return HOST_NAMES.get(given, given)
    return next((name for var, name in HOST_MARKERS if os.environ.get(var)), "")


def project(cwd: Path | None = None) -> str:
    """The repository (its folder's name) the change was made from, else the current folder's name."""
    return _project_of(os.path.abspath(cwd or Path.cwd()))


@lru_cache(maxsize=16)
def _project_of(folder: str) -> str:
    """:func:`project` of an absolute folder (a store stamps every entry it inserts with it)."""
    root = repo_root(Path(folder)) or Path(folder)
    return root.name


def project_filter(setting: str) -> str | None:
    """The project ``CRIB_PROJECTS`` restricts reads to: ``None`` for ``all``, the current
    repository's name (:func:`project`) for ``this``, else the name given."""
    value = setting.strip()
    if value.lower() == "all":
        return None
    return project() if value.lower() == "this" else value


def readable(entry_project: str | None, wanted: str | None) -> bool:
    """Whether an entry written from ``entry_project`` is read under the filter ``wanted``: every
    entry when there is none; else that project's and those of no recorded project (written before
    crib recorded it: never hidden, since nothing says where they belong)."""
    return wanted is None or entry_project is None or entry_project == wanted


def readable_entries(store: Any, ids: Sequence[int], setting: str) -> dict[int, Any]:
    """``store.get_entries(ids)`` less the entries ``CRIB_PROJECTS`` (``setting``) hides: the one
    place the read side fetches entries by id for a block (fused hits, a time window's entries,
    pointers from a channel's own ranking)."""
    wanted = project_filter(setting)
    return {i: e for i, e in store.get_entries(list(ids)).items() if readable(e.project, wanted)} if ids else {}


def author() -> dict[str, str]:
    """The audit detail fields naming who made a change (``by``, ``agent``, ``session``, ``project``,
    and ``host`` — the agent host, :func:`host` — when one is known)."""
    user, machine = _user_and_machine()
    fields = {"by": f"{user}@{machine}", "agent": agent(), "session": SESSION, "project": project()}
    through = host()
    if through:
        fields["host"] = through
    return fields


def authored(detail: dict[str, Any]) -> dict[str, Any]:
    """``detail`` of an audit row with who made the change (:func:`author`): every writer of an
    audit row (the write path, maintenance, management) passes its detail through here."""
    return {**detail, **author()}
