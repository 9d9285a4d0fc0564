"""The per-prompt commands, runnable without the CLI framework.

`crib retrieve` and `crib hook user-prompt-submit` run once per user prompt, in a fresh process.
Importing click (and building the command tree) costs ~40 ms there for nothing: ``main`` below
handles exactly those invocations itself and hands every other command line to the click CLI.
Both paths share the functions here, so there is one implementation of each command.
"""

from __future__ import annotations

import json
import os
import sys
from pathlib import Path
from typing import Sequence


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


def prompt_from_input(raw: str) -> str:
    """Plain text, or Claude Code's hook JSON with a ``prompt`` field."""
    text = raw.strip()
    if text.startswith("{"):
        try:
            data = json.loads(text)
        except json.JSONDecodeError:
            return text
        if isinstance(data, dict) and isinstance(data.get("prompt"), str):
            return data["prompt"].strip()
    return text


def run_retrieve(raw: str, *, fmt: str = "memory", budget: int | None = None, explain: bool = False) -> None:
    """``crib retrieve``: print the relevant block for ``raw``, or nothing. Never raises.

    A missing database prints nothing and creates nothing; any failure prints one line on stderr
    and is logged, stdout stays empty.
    """
    try:
        text = prompt_from_input(raw)
        if not text:
            return
        from .config import load_settings
        from .prefetch import fork_for

        settings = load_settings()
        if not settings.db.exists():
            return
        worker = fork_for(settings, text)  # first: its numpy import overlaps everything below
        try:
            from .memory import Memory
            from .render import FORMATS
            from .session import Session

            with Memory(create=False, settings=settings) as memory:
                session = Session(memory, budget=budget, template=FORMATS[fmt], worker=worker)
                blocks = memory.pm.hook.on_prompt(prompt=text, session=session)  # crib's own comes last
                if session.error is not None:
                    raise session.error
                block = "\n".join(b for b in blocks if isinstance(b, str) and b.strip())
                for note in memory.warnings:
                    print(f"crib: warning: {note}", file=sys.stderr)
                if explain and session.retrieval is not None:
                    from .explain import explain_text

                    print(explain_text(session.retrieval), file=sys.stderr)
        finally:
            if worker is not None:
                worker.cancel()
    except Exception as exc:  # fail open
        log_failure("retrieve", exc)
        print(f"crib: retrieve failed open: {exc}", file=sys.stderr)
        return
    if block:
        sys.stdout.write(block)
        sys.stdout.flush()


def main(argv: Sequence[str] | None = None) -> None:
    """Console-script entry point: the per-prompt commands directly, everything else via click.

    The per-prompt commands end with :func:`fast_exit` instead of returning: they have written
    and closed everything, and tearing down the interpreter (freeing every module and object)
    would add ~40 ms to every prompt for nothing.
    """
    args = list(sys.argv[1:] if argv is None else argv)
    per_prompt = args in (["retrieve"], ["hook", "user-prompt-submit"])
    if per_prompt and argv is None:
        import gc

        gc.disable()  # a process of well under a second: collecting cycles would only cost time
    if args == ["retrieve"]:
        run_retrieve(read_stdin())
        fast_exit(0)
    if args == ["hook", "user-prompt-submit"]:
        from .claude import USER_PROMPT_SUBMIT, run_hook

        fast_exit(run_hook(USER_PROMPT_SUBMIT))
    from .cli import main as cli_main

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
