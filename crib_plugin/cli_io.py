"""Standard input and the fail-open log, for every entry point (a leaf: stdlib plus config).

:func:`read_stdin` never raises (a closed or missing stdin reads as ""); :func:`log_failure`
appends one line to ``crib.log`` beside the database (``CRIB_ERROR_LOG``), never to stdout, and
never fails either.
"""

from __future__ import annotations

import sys
from pathlib import Path


def log_failure(context: str, exc: BaseException) -> None:
    """Record a fail-open failure in ``crib.log`` beside the database (never stdout)."""
    try:
        from .config import DEFAULT_DB, setting_value
        from .timeutil import now_iso

        path = Path(setting_value("error_log") or Path(setting_value("db", DEFAULT_DB)).parent / "crib.log")
        path.parent.mkdir(parents=True, exist_ok=True)
        with path.open("a", encoding="utf-8") as fh:
            fh.write(f"{now_iso()} {context}: {type(exc).__name__}: {exc}\n")
    except Exception:  # logging must not fail either
        pass


def read_stdin() -> str:
    if sys.stdin is None or sys.stdin.closed:
        return ""
    try:
        return sys.stdin.read()
    except (OSError, ValueError):
        return ""
