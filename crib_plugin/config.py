"""Settings read from the environment, in one place, so every entry point agrees.

Environment variables (all optional):

``CRIB_DB``               database path (default ``.state/crib/crib.db`` under the current directory)
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
``CRIB_NOW``              an ISO 8601 moment used as "now" (time expressions, write times): reproducible
                          time-relative evaluations and tests (``--now`` on retrieve/search/eval sets it)
"""

from __future__ import annotations

import os
from dataclasses import dataclass
from pathlib import Path

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


def _env(name: str, environ: dict[str, str] | None = None) -> str | None:
    value = (environ if environ is not None else os.environ).get(name)
    return value.strip() if value and value.strip() else None


def db_path(environ: dict[str, str] | None = None) -> Path:
    """The database file: ``CRIB_DB`` or ``.state/crib/crib.db`` under the current directory."""
    value = _env("CRIB_DB", environ)
    return Path(value).expanduser() if value else DEFAULT_DB


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
