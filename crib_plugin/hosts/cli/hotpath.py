"""The per-prompt commands, runnable without the CLI framework.

`crib retrieve` and `crib hook user-prompt-submit` run once per user prompt, in a fresh process.
Importing click (and building the command tree) costs ~40 ms there for nothing: ``main`` below
handles exactly those invocations itself and hands every other command line to the click CLI.
Both paths share the functions here, so there is one implementation of each command.
"""

from __future__ import annotations

import gc
import os
import sys
from typing import Sequence

# Moved to leaf modules (so cli, claude and this module no longer import each other); the old
# names stay importable from here.
from .io import log_failure, read_stdin, read_stdin_text  # noqa: F401
from .retrieve import prompt_from_input, run_retrieve  # noqa: F401


def main(argv: Sequence[str] | None = None) -> None:
    """Console-script entry point: the per-prompt commands directly, everything else via click.

    The per-prompt commands end with :func:`fast_exit` instead of returning: they have written
    and closed everything, and tearing down the interpreter (freeing every module and object)
    would add ~40 ms to every prompt for nothing.
    """
    args = list(sys.argv[1:] if argv is None else argv)
    per_prompt = args in (["retrieve"], ["hook", "user-prompt-submit"], ["hook", "message-display"])
    if per_prompt and argv is None:
        gc.disable()  # a process of well under a second: collecting cycles would only cost time
    if args == ["retrieve"]:
        run_retrieve(read_stdin())
        fast_exit(0)
    if args == ["hook", "user-prompt-submit"]:
        # deferred: the MessageDisplay hook would import it up front (27 ms)
        from ..claude import USER_PROMPT_SUBMIT, run_hook

        fast_exit(run_hook(USER_PROMPT_SUBMIT))
    if args == ["hook", "message-display"]:  # once per streamed batch of every answer
        # deferred: the UserPromptSubmit hook would import it up front (52 ms)
        from ..display import run_message_display

        fast_exit(run_message_display(sys.stdin, sys.stdout))
    # deferred: the MessageDisplay hook would import it up front (442 ms)
    from .app import main as cli_main

    cli_main(args)


def fast_exit(code: int) -> None:
    """Flush stdout and stderr, then leave without interpreter teardown (``os._exit``).

    Only for a finished per-prompt command: the store is closed, logs are written with ``with``
    blocks, and no ``atexit`` handler of crib's needs to run. A test calling :func:`main` in
    process gets a plain ``SystemExit`` instead (``sys._called_from_test``).
    """
    for stream in (sys.stdout, sys.stderr):
        try:
            stream.flush()
        except (OSError, ValueError):  # a closed pipe: nothing more can be said
            pass
    if hasattr(sys, "_called_from_test"):
        sys.exit(code)
    os._exit(code)
