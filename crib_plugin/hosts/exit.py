"""How a long-lived host process (``crib mcp``) leaves on SIGINT/SIGTERM: cleanly, with status 0."""

from __future__ import annotations

import contextlib
import os
import sys
import threading
from typing import Any


def leave_after(lock: threading.Lock, signum: int, frame: Any) -> None:
    """Let a running tool call finish its write (``lock`` held, at most 5 s), then exit with 0.

    Exits at once (``os._exit``) rather than unwinding: the MCP SDK reads stdin in a worker thread
    that an exception cannot stop, so a raised ``KeyboardInterrupt`` left the server waiting for
    input (and SIGINT is ignored outright in a process started in the background). Every store write
    is one transaction, so nothing is left half-written."""
    lock.acquire(timeout=5)
    for stream in (sys.stdout, sys.stderr):
        with contextlib.suppress(Exception):  # a closed pipe: nothing left to flush
            stream.flush()
    os._exit(0)
