"""The per-prompt commands, runnable without the CLI framework.

`crib retrieve` and `crib hook user-prompt-submit` run once per user prompt, in a fresh process.
Importing click (and building the command tree) costs ~40 ms there for nothing: ``main`` below
handles exactly those invocations itself and hands every other command line to the click CLI.
Both paths share the functions here, so there is one implementation of each command.
"""

from __future__ import annotations

import gc
import importlib
import os
import sys
from typing import Any, Sequence

from ...core.deadline import arm_exit, budget_from_env

HOOK_BUDGET = ("CRIB_HOOK_TIMEOUT", 2.0, 60.0)
"""The prompt hook's budget variable, default and cap (``hosts/claude/input.py``'s), read before
anything else is imported: under load, importing the hook's modules took 1.4 s of a 2 s budget."""


def main(argv: Sequence[str] | None = None) -> None:
    """Console-script entry point: the per-prompt commands directly, everything else via click.

    The per-prompt commands end with :func:`fast_exit` instead of returning: they have written
    and closed everything, and tearing down the interpreter (freeing every module and object)
    would add ~40 ms to every prompt for nothing.
    """
    args = list(sys.argv[1:] if argv is None else argv)
    host = "claude"
    if len(args) == 4 and args[0] == "hook" and args[2] == "--host":  # another agent host's hook
        args, host = args[:2], args[3]
        if args[1] in STREAM_EVENTS:  # once per streamed chunk (Gemini AfterModel), or per text part
            gc.disable()
            fast_exit(run_entry(ENTRY_POINTS["stream"], args[1], host, sys.stdin, sys.stdout))
        if args[1] == "session-start":
            fast_exit(run_entry(ENTRY_POINTS["user-prompt-submit"], "session-start", host=host))
    per_prompt = args in (["retrieve"], ["hook", "user-prompt-submit"], ["hook", "message-display"])
    if per_prompt and argv is None:
        gc.disable()  # a process of well under a second: collecting cycles would only cost time
    if args == ["retrieve"]:
        run_entry(ENTRY_POINTS["retrieve"])
        fast_exit(0)
    if args == ["hook", "user-prompt-submit"]:
        arm_exit(budget_from_env(*HOOK_BUDGET))  # the budget bounds the imports too (core/deadline.py)
        fast_exit(run_entry(ENTRY_POINTS["user-prompt-submit"], "user-prompt-submit", host=host))
    if args == ["hook", "message-display"]:  # once per streamed batch of every answer
        fast_exit(run_entry(ENTRY_POINTS["message-display"], sys.stdin, sys.stdout))
    if args == ["mcp"]:  # the front answers the MCP handshake before the SDK has loaded (hosts/mcp_front.py)
        run_entry(ENTRY_POINTS["mcp"])
    run_entry(ENTRY_POINTS["cli"], args)


#: What each kind of command line runs (``module:function``): ``crib retrieve`` and the two
#: per-prompt hooks without click, and the click application for everything else. Each process imports only its own: the
#: MessageDisplay hook runs on every streamed batch of every answer and needs none of the others.
ENTRY_POINTS: dict[str, str] = {
    "retrieve": "crib_plugin.hosts.cli.retrieve:retrieve_stdin",
    "user-prompt-submit": "crib_plugin.hosts.claude.runner:run_hook",
    "message-display": "crib_plugin.hosts.display:run_message_display",
    "stream": "crib_plugin.hosts.stream:run_stream_hook",
    "mcp": "crib_plugin.hosts.mcp_front:main",
    "cli": "crib_plugin.hosts.cli.app:main",
}


STREAM_EVENTS = ("after-model", "text-complete")  # other hosts' output filters (hosts/stream.py)


def run_entry(target: str, *args: Any, **kwargs: Any) -> Any:
    """Import the module of ``target`` (``module:function``) and call the function with ``args``."""
    module_name, _, attr = target.partition(":")
    # deferred: the entry-point table: the MessageDisplay hook would otherwise import the click
    # application (23 % of `import numpy`, loaded machine) and the UserPromptSubmit handlers (11 %)
    module = importlib.import_module(module_name)
    return getattr(module, attr)(*args, **kwargs)


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
