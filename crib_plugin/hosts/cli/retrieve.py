"""``crib retrieve``, shared by the click command and the per-prompt fast path (:mod:`.hotpath`).

It is a host of the ``on_prompt`` hook point like any agent loop: plugins' blocks first, crib's
own retrieval last.
"""

from __future__ import annotations

import json
import sys

from ...core.config import load_settings
from ...core.limits import bound_prompt
from ...core.notices import drain
from ...output.explain import explain_text
from ...output.render import FORMATS
from ...plugins.session import Session
from ...read.prefetch import fork_for
from ..scoped import open_reading
from .io import log_failure, read_stdin


def prompt_from_input(raw: str) -> str:
    """Plain text, or Claude Code's hook JSON with a ``prompt`` field; bounded (:func:`bound_prompt`)."""
    text = raw.strip()
    if text.startswith("{"):
        try:
            data = json.loads(text)
        except ValueError:  # not JSON (or a number of thousands of digits): the text is the prompt
            return bound_prompt(text)
        except RecursionError:  # nested past Python's limit: not a hook's JSON
            return ""
        if isinstance(data, dict) and isinstance(data.get("prompt"), str):
            return bound_prompt(data["prompt"].strip())
    return bound_prompt(text)


def retrieve_stdin() -> None:
    """``crib retrieve`` as the console script runs it (:mod:`.hotpath`): the prompt on stdin; a notice
    a lower layer queued (an upgraded store) goes to stderr, as the click application prints it."""
    run_retrieve(read_stdin())
    for line in drain():
        sys.stderr.write(line + "\n")


def run_retrieve(raw: str, *, fmt: str = "memory", budget: int | None = None, explain: bool = False) -> None:
    """``crib retrieve``: print the relevant block for ``raw``, or nothing. Never raises.

    A missing database prints nothing and creates nothing; any failure prints one line on stderr
    and is logged, stdout stays empty.
    """
    try:
        text = prompt_from_input(raw)
        if not text:
            return
        settings = load_settings()
        opened = open_reading(settings)  # the project store, else the global one, else nothing
        if opened is None:
            return
        worker = fork_for(settings, text)  # first: its numpy import overlaps everything below
        try:
            memory, scope = opened
            with memory:
                session = Session(memory, budget=budget, template=FORMATS[fmt], worker=worker, scope=scope)
                blocks = memory.pm.hook.on_prompt(prompt=text, session=session)  # crib's own comes last
                if session.error is not None:
                    raise session.error
                block = "\n".join(b for b in blocks if isinstance(b, str) and b.strip())
                for note in memory.warnings:
                    print(f"crib: warning: {note}", file=sys.stderr)
                for result in session.retrieval.channels if session.retrieval is not None else []:
                    if not result.ran:  # a failing model is said, not swallowed
                        print(f"crib: channel {result.channel} did not run: {result.note}", file=sys.stderr)
                if explain and session.retrieval is not None:
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
