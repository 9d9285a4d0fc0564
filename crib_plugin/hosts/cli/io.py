"""Standard input and the fail-open log, for every entry point (a leaf: stdlib plus config).

``log_failure`` lives in :mod:`crib_plugin.core.faillog` (so lower layers need not import the CLI).

:func:`read_stdin` never raises (a closed or missing stdin reads as ""); :func:`log_failure`
appends one line to ``crib.log`` beside the database (``CRIB_ERROR_LOG``), never to stdout, and
never fails either.
"""

from __future__ import annotations

import sys

from ...core.errors import InputError
from ...core.faillog import log_failure  # noqa: F401 - re-exported: every entry point logs through here
from ...core.limits import MAX_ENTRY_CHARS, MAX_HOOK_STDIN_BYTES, decode_input


def read_stdin() -> str:
    """A prompt from stdin: at most ``MAX_HOOK_STDIN_BYTES``, invalid UTF-8 replaced (never an error)."""
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
