"""Per-session state: which entry and fact ids a Claude Code session has already been given.

Kept in ``<database dir>/sessions/<sanitised session_id>.json``, written atomically, pruned after
``CRIB_SESSION_TTL_DAYS`` days."""

from __future__ import annotations

import hashlib
import json
import os
import re
import tempfile
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Mapping

from ...core.config import DEFAULT_DB, get_settings, load_settings
from ...core.dirs import prepare_store_dir
from ...core.stale_files import prune_older_than
from ...core.timeutil import now_iso
from .input import STATE_VERSION

MAX_PROMPTS = 30  # the session journal's bound: `crib ui` shows a session's last 30 prompts
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

        return DEFAULT_DB.parent / "sessions"
    return db.parent / "sessions"


def session_ttl_days(environ: Mapping[str, str] | None = None) -> float:
    """``CRIB_SESSION_TTL_DAYS`` (default 7); ConfigError if malformed."""
    settings = get_settings() if environ is None else load_settings(environ)
    return float(settings.session_ttl_days)


@dataclass
class SessionState:
    """What one Claude Code session has already been given: entry ids and fact ids."""

    path: Path | None
    session_id: str = ""
    entries: set[int] = field(default_factory=set)
    facts: set[int] = field(default_factory=set)
    pointers: set[int] = field(default_factory=set)  # entries given as one-line pointers (crib_plugin.read.pointers)
    prompts: list[dict[str, Any]] = field(default_factory=list)  # the last MAX_PROMPTS prompts' records (output.session_journal)

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
            state.entries = int_set(data.get("entries"))
            state.facts = int_set(data.get("facts"))
            state.pointers = int_set(data.get("pointers"))
            prompts = data.get("prompts")
            state.prompts = [p for p in prompts if isinstance(p, dict)][-MAX_PROMPTS:] if isinstance(prompts, list) else []
        return state

    def reset(self) -> "SessionState":
        """The same session with nothing recorded (after compaction the context holds none of it);
        the prompts' journal is kept: it is a record of what was given, not of what the context holds."""
        return SessionState(self.path, self.session_id, prompts=list(self.prompts))

    def add_prompt(self, record: dict[str, Any] | None) -> None:
        """Journal one prompt's record, keeping the last :data:`MAX_PROMPTS`."""
        if isinstance(record, dict):
            self.prompts = [*self.prompts, record][-MAX_PROMPTS:]

    def save(self) -> None:
        """Write atomically (temporary file in the same folder, then rename); no-op without a path."""
        if self.path is None:
            return

        prepare_store_dir(self.path.parent)  # .state/crib (with its .gitignore), before sessions/
        self.path.parent.mkdir(parents=True, exist_ok=True)
        payload = {
            "version": STATE_VERSION,
            "session_id": self.session_id,
            "entries": sorted(self.entries),
            "facts": sorted(self.facts),
            "pointers": sorted(self.pointers),
            "prompts": self.prompts,
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


def int_set(value: Any) -> set[int]:
    if not isinstance(value, list):
        return set()
    return {int(v) for v in value if isinstance(v, int) and not isinstance(v, bool)}


def prune_sessions(folder: Path, max_age_days: float, *, now: float | None = None) -> int:
    """Delete session records (and stray temporary files) not touched for ``max_age_days``."""
    return prune_older_than(folder, max_age_days * 86400, suffix=".json", now=now)

