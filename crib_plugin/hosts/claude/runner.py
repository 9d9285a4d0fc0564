"""Running a hook: stdin → handler → JSON on stdout, within ``CRIB_HOOK_TIMEOUT`` (a forked child with a
hard deadline, else a worker thread); always exit 0, failures only logged."""

from __future__ import annotations

import os
import sys
import time
from pathlib import Path
from typing import IO, Any, Callable

from ...core import deadline
from ...core.config import specs
from ...core.errors import StoreMissing
from ...core.faillog import log_failure
from ...core.limits import MAX_HOOK_STDIN_BYTES
from .input import (
    DEFAULT_TIMEOUT,
    MAX_TIMEOUT,
    SESSION_START,
    USER_PROMPT_SUBMIT,
    HookError,
    HookInput,
    hook_timeout,
    parse_hook_input,
    resolve_db,
)
from .output import HookResult
from .prompt import user_prompt_submit
from .start import session_start
from .state import SessionState, int_set

HANDLERS: dict[str, Callable[[HookInput, Path], HookResult | None]] = {
    USER_PROMPT_SUBMIT: user_prompt_submit,
    SESSION_START: session_start,
}


def _read(stream: IO[str] | None) -> str:
    """At most ``MAX_HOOK_STDIN_BYTES`` of stdin, invalid UTF-8 replaced (never an error)."""
    if stream is None or stream.closed:
        return ""
    try:
        source = getattr(stream, "buffer", None)
        if source is None:
            return stream.read(MAX_HOOK_STDIN_BYTES)
        return source.read(MAX_HOOK_STDIN_BYTES).decode("utf-8", "replace")
    except (OSError, ValueError):
        return ""


def _log(event: str, exc: BaseException) -> None:
    if isinstance(exc, StoreMissing):  # a server store nobody wrote to yet, like a missing file: not a failure
        return
    log_failure(f"hook {event}", exc)


def run_hook(
    event: str,
    *,
    stdin: IO[str] | None = None,
    stdout: IO[str] | None = None,
    own_process: bool = True,
    host: str = "claude",
) -> int:
    """Run one hook within its time budget and print its JSON (or nothing). Always returns 0.

    Reading stdin, opening the database and retrieving all happen in a daemon worker thread; the
    calling thread waits at most ``CRIB_HOOK_TIMEOUT`` seconds. On timeout nothing is printed, one
    line is logged and — when this process is the hook (``own_process``) — it leaves at once with
    ``os._exit(0)``, since a worker blocked in a socket read cannot be interrupted. A hook process
    also arms :func:`crib_plugin.core.deadline.arm_exit` first: whatever runs when the budget is
    spent — in the child or in this process — the process leaves then, status 0, nothing printed. The session
    record is saved only when the answer is printed. Where ``fork`` exists and this process is the
    hook, :func:`_run_forked` runs the work in a killable child (:mod:`crib_plugin.core.deadline`).
    ``host``: the agent host (:mod:`crib_plugin.hosts.agents`) whose JSON comes in and goes out."""
    stdin = sys.stdin if stdin is None else stdin
    stdout = sys.stdout if stdout is None else stdout
    started = time.perf_counter()
    if own_process:  # the budget, from outside the work: until the settings say otherwise, the environment's
        deadline.arm_exit(_first_timeout())
    try:
        timeout = hook_timeout()
    except Exception as exc:  # a malformed setting: log it (naming the variable), print nothing
        _log(event, exc)
        return 0
    if own_process:
        deadline.arm_exit(timeout)

    if own_process and deadline.supported():  # a hard deadline: the work runs in a killable child
        _leave(stdout, _run_forked(event, stdin, stdout, timeout, started, host))
        return 0

    def work() -> "HookResult | None":
        hook = parse_hook_input(_read(stdin), event, host)
        hook.started, hook.timeout = started, timeout
        db = resolve_db(hook)
        if own_process:  # one-shot process: make every component (and the log) agree on the db
            os.environ["CRIB_DB"] = str(db)
        return _answer(hook, db)

    try:
        result = deadline.call_within(timeout, work, name=f"crib-hook-{event}", what="hook answer")
    except deadline.Overrun:
        _log(event, TimeoutError(f"gave up after {timeout:g} s (CRIB_HOOK_TIMEOUT); printed nothing"))
        if own_process:
            _hard_exit(stdout)
        return 0
    except BaseException as exc:  # noqa: BLE001 - fail open on anything, even SystemExit
        _log(event, exc)
        return 0
    if result is not None:
        _emit(event, result, stdout)
    if own_process:
        _leave(stdout, 0)
    return 0


def _leave(stdout: IO[str], code: int) -> None:
    """A hook process is done: it leaves now (``os._exit``), so the armed alarm can never find it
    tearing down the interpreter (whose clean-up restores SIGALRM's default: a kill, not exit 0).
    Under a test runner the alarm is cancelled instead and the caller goes on."""
    if hasattr(sys, "_called_from_test"):
        deadline.disarm()
        return
    _hard_exit(stdout)


def _first_timeout() -> float:
    """``CRIB_HOOK_TIMEOUT`` as the environment gives it (else the default), before the settings
    files are read: the alarm that bounds reading them."""
    return deadline.budget_from_env(dict(specs())["hook_timeout"].var, DEFAULT_TIMEOUT, MAX_TIMEOUT)


def _emit(event: str, result: "HookResult", stdout: IO[str]) -> None:
    """Print a finished hook's JSON and save its session record; each failure is logged, never raised."""
    try:
        text = result.output()
    except HookError as exc:
        _log(event, exc)
        return
    try:
        result.commit()
    except Exception as exc:  # the answer is still right; at worst it is repeated later
        _log(event, exc)
    try:
        stdout.write(text + "\n")
        stdout.flush()
    except (OSError, ValueError) as exc:
        _log(event, exc)


def _answer(hook: HookInput, db: Path) -> "HookResult | None":
    """The core's answer to ``hook``, in the JSON shape of the host that sent it."""
    result = HANDLERS[hook.event](hook, db)
    if result is not None:
        result.host = hook.host
    return result


def _run_forked(event: str, stdin: IO[str], stdout: IO[str], timeout: float, started: float, host: str = "claude") -> int:
    """:func:`run_hook` for a hook process: :func:`crib_plugin.core.deadline.run_in_child` does the work
    in a forked child and, at the deadline, kills it and leaves with nothing printed."""
    origin = started - deadline.process_age()  # the budget counts from the process's start

    def answer(note: Callable[[dict[str, Any]], None]) -> tuple[str, Any] | None:
        try:
            hook = parse_hook_input(_read(stdin), event, host)
            hook.started, hook.timeout = origin, timeout
            db = resolve_db(hook)
            os.environ["CRIB_DB"] = str(db)  # one-shot process: every component (and the log) agrees
            note({"db": str(db)})  # so the parent logs a timeout beside this database
            result = _answer(hook, db)
            if result is None:
                return None
            state = result.state
            record = None if state is None or state.path is None else {
                "path": str(state.path), "session_id": state.session_id,
                "entries": sorted(state.entries), "facts": sorted(state.facts), "pointers": sorted(state.pointers),
                "prompts": state.prompts,
            }
            return result.output(), record
        except BaseException as exc:  # noqa: BLE001 - fail open on anything, even SystemExit
            _log(event, exc)
            return None

    def commit(record: Any) -> None:
        if isinstance(record, dict) and isinstance(record.get("path"), str):
            state = SessionState(Path(record["path"]), str(record.get("session_id") or ""),
                                 int_set(record.get("entries")), int_set(record.get("facts")), int_set(record.get("pointers")),
                                 [p for p in record.get("prompts") or [] if isinstance(p, dict)])
            try:
                HookResult(event, "", state).commit()
            except Exception as exc:  # the answer is still right; at worst it is repeated later
                _log(event, exc)

    def on_timeout(notes: list[dict[str, Any]]) -> None:
        db = next((n["note"]["db"] for n in notes if isinstance(n.get("note"), dict) and "db" in n["note"]), None)
        if isinstance(db, str):
            os.environ["CRIB_DB"] = db
        _log(event, TimeoutError(f"gave up after {timeout:g} s (CRIB_HOOK_TIMEOUT); printed nothing"))

    return deadline.run_in_child(answer, commit, stdout=stdout, timeout=timeout, on_timeout=on_timeout)


def _hard_exit(stdout: IO[str]) -> None:
    """Leave now with status 0, without waiting for a stuck worker or interpreter clean-up."""
    for stream in (stdout, sys.stderr):
        try:
            stream.flush()
        except Exception:
            pass
    os._exit(0)
