"""Settings read from the environment, in one place, so every entry point agrees.

Environment variables (all optional):

``CRIB_DB``               project database path (default ``.state/crib/crib.db`` at the git repository's
                          root, else under the current directory; see :mod:`crib_plugin.scopes`)
``CRIB_GLOBAL_DB``        the global (per-user) store; default ``crib.db`` in the user data directory
``CRIB_PROGRESS``         ``0`` silences the progress bars/lines of import, reindex, calibrate, downloads
``CRIB_EMBEDDER``         ``minilm`` (offline default), ``ollama``, or a plugin's embedder name
``CRIB_EMBEDDING_MODEL``  model for the Ollama embedder (default ``nomic-embed-text``)
``CRIB_CHANNEL``          comma list of channels to run (``triples``, ``fts``, ``vector``); default all
``CRIB_BUDGET``           characters the injected block may use (default 8000)
``CRIB_TEMPLATES``        a directory whose templates override the packaged ones by file name
``CRIB_LOG``              path of an opt-in JSONL retrieval log
``CRIB_CACHE_DIR``        small derived files (plugin entry points, compiled templates); default
                          ``$XDG_CACHE_HOME/crib`` or ``~/.cache/crib``
``CRIB_PARALLEL``         ``auto`` (default), ``1`` or ``0``: embed the prompt in a forked worker
                          while a cold ``crib retrieve`` does the rest (:mod:`crib_plugin.prefetch`)
``CRIB_REDACT``           ``1`` (default) or ``0``: redact secrets before storage and at render
                          (:mod:`crib_plugin.redact`)
``CRIB_NOW``              an ISO 8601 moment used as "now" (time expressions, write times): reproducible
                          time-relative evaluations and tests (``--now`` on retrieve/search/eval sets it)
"""

from __future__ import annotations

import os
from dataclasses import dataclass
from pathlib import Path
from typing import Mapping

from .errors import ConfigError

DEFAULT_DB = Path(".state") / "crib" / "crib.db"
DEFAULT_BUDGET = 8000

# Accepted spellings for CRIB_CHANNEL, mapped to the channel names crib registers.
CHANNEL_ALIASES = {
    "triples": "facts",
    "triple": "facts",
    "facts": "facts",
    "fact": "facts",
    "fts": "fts",
    "fulltext": "fts",
    "text": "fts",
    "vector": "vector",
    "vectors": "vector",
    "vec": "vector",
}

# Accepted spellings for CRIB_PARALLEL.
PARALLEL_MODES = {
    "auto": "auto",
    "1": "on", "on": "on", "true": "on", "yes": "on",
    "0": "off", "off": "off", "false": "off", "no": "off",
}


def _env(name: str, environ: Mapping[str, str] | None = None) -> str | None:
    value = (environ if environ is not None else os.environ).get(name)
    return value.strip() if value and value.strip() else None


def db_path(environ: dict[str, str] | None = None) -> Path:
    """The project database: ``CRIB_DB``, else ``.state/crib/crib.db`` at the repository root
    (or under the current directory outside git) — :func:`crib_plugin.scopes.project_db`."""
    from .scopes import project_db

    return project_db(environ=environ)


def global_db_override(environ: Mapping[str, str] | None = None) -> Path | None:
    """``CRIB_GLOBAL_DB``: the global store's file, when set (:func:`crib_plugin.scopes.global_db`)."""
    value = _env("CRIB_GLOBAL_DB", environ)
    return Path(value).expanduser() if value else None


def progress_enabled(environ: Mapping[str, str] | None = None) -> bool:
    """``CRIB_PROGRESS`` (default on): ``0``/``off``/``false``/``no`` silences progress bars and lines."""
    value = (_env("CRIB_PROGRESS", environ) or "1").lower()
    return value not in ("0", "off", "false", "no")


def user_cache_root() -> Path:
    """``$XDG_CACHE_HOME/crib``, else ``~/.cache/crib``: where crib keeps what it can rebuild."""
    xdg = _env("XDG_CACHE_HOME")
    return (Path(xdg).expanduser() if xdg else Path.home() / ".cache") / "crib"


def cache_dir() -> Path:
    """Small derived files — the plugin entry-point list, compiled templates: ``$CRIB_CACHE_DIR``,
    else :func:`user_cache_root`. (The model weights have their own ``$CRIB_MODEL_DIR``.)"""
    value = _env("CRIB_CACHE_DIR")
    return Path(value).expanduser() if value else user_cache_root()


def parse_channels(value: str | None) -> list[str] | None:
    """Turn ``CRIB_CHANNEL`` into channel names; ``None`` means "every registered channel"."""
    if not value:
        return None
    names: list[str] = []
    for part in value.replace(" ", ",").split(","):
        part = part.strip().lower()
        if not part:
            continue
        names.append(CHANNEL_ALIASES.get(part, part))
    return names or None


@dataclass
class Settings:
    """Runtime settings for one process; built from the environment by :func:`load_settings`."""

    db: Path = DEFAULT_DB
    embedder: str | None = None  # None → whatever the store recorded, else "minilm"
    channels: list[str] | None = None
    budget: int = DEFAULT_BUDGET
    templates: Path | None = None
    log_path: Path | None = None
    parallel: str = "auto"  # "auto" | "on" | "off"


def load_settings(environ: dict[str, str] | None = None) -> Settings:
    """Read every ``CRIB_*`` variable once; raise :class:`ConfigError` on malformed values."""
    budget_raw = _env("CRIB_BUDGET", environ)
    try:
        budget = int(budget_raw) if budget_raw else DEFAULT_BUDGET
    except ValueError as exc:
        raise ConfigError(f"CRIB_BUDGET must be an integer, got {budget_raw!r}") from exc
    if budget < 200:
        raise ConfigError(f"CRIB_BUDGET must be at least 200 characters, got {budget}")
    templates = _env("CRIB_TEMPLATES", environ)
    log_path = _env("CRIB_LOG", environ)
    embedder = _env("CRIB_EMBEDDER", environ)
    parallel_raw = (_env("CRIB_PARALLEL", environ) or "auto").lower()
    if parallel_raw not in PARALLEL_MODES:
        raise ConfigError(f"CRIB_PARALLEL must be auto, 1 or 0, got {parallel_raw!r}")
    return Settings(
        db=db_path(environ),
        embedder=embedder.lower() if embedder else None,
        channels=parse_channels(_env("CRIB_CHANNEL", environ)),
        budget=budget,
        templates=Path(templates).expanduser() if templates else None,
        log_path=Path(log_path).expanduser() if log_path else None,
        parallel=PARALLEL_MODES[parallel_raw],
    )


def _seconds(name: str, default: float, environ: dict[str, str] | None = None) -> float:
    """A positive number of seconds from ``name``, else ``default``; ConfigError when malformed."""
    raw = _env(name, environ)
    if raw is None:
        return default
    try:
        value = float(raw)
    except ValueError:
        raise ConfigError(f"{name} must be a number of seconds, got {raw!r}") from None
    if not value > 0:
        raise ConfigError(f"{name} must be positive, got {raw!r}")
    return value


def busy_timeout(environ: dict[str, str] | None = None) -> float:
    """``CRIB_BUSY_TIMEOUT``: seconds a writer waits for another's write lock (default 30)."""
    return _seconds("CRIB_BUSY_TIMEOUT", 30.0, environ)


def extract_budget(environ: dict[str, str] | None = None) -> float:
    """``CRIB_EXTRACT_BUDGET``: seconds a write waits for fact extraction before queueing it (default 5)."""
    return _seconds("CRIB_EXTRACT_BUDGET", 5.0, environ)


def embed_budget(environ: dict[str, str] | None = None) -> float:
    """``CRIB_EMBED_BUDGET``: seconds a write waits for its embedding before queueing it (default 10)."""
    return _seconds("CRIB_EMBED_BUDGET", 10.0, environ)


def redact_enabled(environ: dict[str, str] | None = None) -> bool:
    """``CRIB_REDACT``: secrets are redacted unless it is ``0``/``off``/``false``/``no``."""
    value = _env("CRIB_REDACT", environ)
    if value is None:
        return True
    mode = PARALLEL_MODES.get(value.lower())
    if mode is None:
        raise ConfigError(f"CRIB_REDACT must be 1 or 0, got {value!r}")
    return mode != "off"


def fixed_now(environ: dict[str, str] | None = None) -> str | None:
    """``CRIB_NOW``: an ISO 8601 moment that stands in for "now" (time expressions in prompts,
    default write times), so time-relative evaluations and tests are reproducible; ``None`` when
    unset. Raises :class:`ConfigError` when it is not an ISO date."""
    value = _env("CRIB_NOW", environ)
    if value is None:
        return None
    from .errors import InputError
    from .timeutil import parse_iso

    try:
        parse_iso(value)
    except InputError as exc:
        raise ConfigError(f"CRIB_NOW must be an ISO 8601 date or time, got {value!r}") from exc
    return value
