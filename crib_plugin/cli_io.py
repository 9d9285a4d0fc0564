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
    """A prompt from stdin: at most ``MAX_HOOK_STDIN_BYTES``, invalid UTF-8 replaced (never an error)."""
    from .limits import MAX_HOOK_STDIN_BYTES

    if sys.stdin is None or sys.stdin.closed:
        return ""
    try:
        source = getattr(sys.stdin, "buffer", None)
        if source is None:
            return sys.stdin.read(MAX_HOOK_STDIN_BYTES)
        return source.read(MAX_HOOK_STDIN_BYTES).decode("utf-8", "replace")
    except (OSError, ValueError):
        return ""


def read_stdin_text() -> str:
    """Text to store, from stdin: strict UTF-8 (InputError naming the bad byte), and no more than
    the longest entry could need (InputError past it, before reading gigabytes)."""
    from .errors import InputError
    from .limits import MAX_ENTRY_CHARS, decode_input

    if sys.stdin is None or sys.stdin.closed:
        return ""
    source = getattr(sys.stdin, "buffer", None)
    if source is None:
        return sys.stdin.read()
    cap = 4 * MAX_ENTRY_CHARS + 1  # UTF-8 needs at most 4 bytes a character
    data = source.read(cap)
    if len(data) >= cap:
        raise InputError(f"input exceeds the {MAX_ENTRY_CHARS:,}-character entry limit; split it into smaller memories")
    return decode_input(data, "stdin")
