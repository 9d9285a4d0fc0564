"""The fail-open log shared by every layer (a leaf: stdlib plus config and timeutil).

:func:`log_failure` appends one line to ``crib.log`` beside the database (``CRIB_ERROR_LOG``),
never to stdout, and never fails. It lives below the entry points so that lower layers (``scoped``,
the hook handlers, ``display``, ``mcp_server``) can log without importing the CLI.
"""

from __future__ import annotations

from pathlib import Path

from .config import DEFAULT_DB, setting_value
from .timeutil import now_iso


def log_failure(context: str, exc: BaseException) -> None:
    """Record a fail-open failure in ``crib.log`` beside the database (never stdout)."""
    log_note(context, f"{type(exc).__name__}: {exc}")


def log_note(context: str, text: str) -> None:
    """Append one line ``context: text`` to ``crib.log`` beside the database (never stdout)."""
    try:
        path = Path(setting_value("error_log") or Path(setting_value("db", DEFAULT_DB)).parent / "crib.log")
        path.parent.mkdir(parents=True, exist_ok=True)
        with path.open("a", encoding="utf-8") as fh:
            fh.write(f"{now_iso()} {context}: {text}\n")
    except Exception:  # logging must not fail either
        pass
