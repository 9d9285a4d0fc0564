"""A hard deadline for the Claude Code hooks: the work runs in a forked child, the parent only waits.

Why a child process and not a thread: a worker thread busy in C code that holds the GIL — a regex
over a 1 MB line, ``json.loads`` of a huge document, a tokenizer — keeps the waiting main thread
from ever waking up, so ``Thread.join(timeout)`` returned after 28 s at 32k characters and never
for a 1 MB line. A separate process shares no GIL: the parent polls a pipe and, at the deadline,
kills the child's whole process group (the child and its prefetch worker), logs one line, prints
nothing and exits 0.

The deadline counts from the **start of the process** (read from ``/proc`` where it exists), so
Python's own start-up is inside ``CRIB_HOOK_TIMEOUT``, not on top of it: the hook's wall time is
the budget plus the time to exit (a few milliseconds).

The deadline is also enforced on the hook process as a whole, from outside whatever it is doing:
:func:`arm_exit` sets a ``SIGALRM`` timer for the moment the process is ``CRIB_HOOK_TIMEOUT`` old,
whose handler kills the child's group and leaves with ``os._exit(0)``, nothing printed. So a slow
step in the parent itself — reading the settings, saving the session record on a loaded disk,
logging the timeout, a start-up slower than the budget — is cut at the deadline too, not only
the child's work. The one line of the answer is written with ``SIGALRM`` blocked, so it is
never cut in half; the session record is saved after it (an answer cut before its record is
saved may be injected again later, never lost or half-printed).

The child reads stdin itself (bounded, :data:`crib_plugin.core.limits.MAX_HOOK_STDIN_BYTES`), so a
writer that never closes the pipe cannot hold the parent either. It answers with one JSON message
— the line to print and the session record to keep — and the parent saves that record only once
it is printing the answer: a timed-out answer is never remembered as injected.
"""

from __future__ import annotations

import json
import os
import select
import signal
import sys
import threading
import time
from collections.abc import Callable
from typing import IO, Any, TypeVar

T = TypeVar("T")

EXIT_MARGIN = 0.05  # seconds kept back from the budget for killing the child and exiting
MAX_STARTUP = 1.5  # seconds of process age process_age() counts by default at most
LONG_LIVED = 60.0  # a process older than any hook may run (CRIB_HOOK_TIMEOUT's cap) calling run_hook
# (a test runner, a host that embeds crib) is not a hook that started late: its budget counts from now


ANSWER_MARGIN = 0.15  # seconds a stage that waits on a model leaves for rendering and answering

_hard_deadline: float | None = None  # time.monotonic() at which this hook's child is killed


def remaining() -> float | None:
    """Seconds left before the running hook's hard deadline; ``None`` outside a hook (a CLI
    command, an agent loop), where nothing kills the process."""
    return None if _hard_deadline is None else _hard_deadline - time.monotonic()


def capped(seconds: float, margin: float = ANSWER_MARGIN) -> float:
    """``seconds``, or less when the running hook's deadline comes sooner: a stage that waits on a
    model (the judge, a model reranker) gives up in time for the offline answer to be printed,
    instead of the whole hook being killed with nothing printed."""
    left = remaining()
    return seconds if left is None else max(0.0, min(seconds, left - margin))


class Overrun(TimeoutError):
    """:func:`call_within`'s ``fn`` did not return in time (a ``TimeoutError``, so callers that
    catch that keep working)."""


def call_within(seconds: float, fn: Callable[[], T], *, name: str = "crib-call", what: str = "an answer") -> T:
    """``fn()`` run in a daemon thread and abandoned when it has not returned within ``seconds``
    (:class:`Overrun` "no {what} within …"): a model call that hangs must not hold the prompt, a
    hook that hangs must not hold the agent. The one thread-with-a-deadline runner: the judge, the
    model reranker, the write path's model calls and the thread-mode hook runner all use it. Its
    exception, if any (any ``BaseException``), is raised here, in the caller's thread."""
    box: dict[str, Any] = {}

    def run() -> None:
        try:
            box["value"] = fn()
        except BaseException as exc:  # re-raised in the caller's thread
            box["error"] = exc

    worker = threading.Thread(target=run, name=name, daemon=True)
    worker.start()
    worker.join(max(0.0, seconds))
    if worker.is_alive():
        raise Overrun(f"no {what} within {seconds:g}s")
    if "error" in box:
        raise box["error"]
    return box["value"]


def supported() -> bool:
    """Whether the hard deadline can be used here (POSIX ``fork``)."""
    return hasattr(os, "fork") and hasattr(os, "killpg")


def process_age(cap: float | None = MAX_STARTUP) -> float:
    """Seconds since this process started (0.0 when the platform does not say; at most ``cap``)."""
    try:
        with open("/proc/self/stat", "rb") as fh:
            fields = fh.read().rsplit(b")", 1)[1].split()
        start_ticks = int(fields[19])  # field 22 of stat(5); fields[0] is field 3
        with open("/proc/uptime", "rb") as fh:
            uptime = float(fh.read().split()[0])
        age = max(0.0, uptime - start_ticks / os.sysconf("SC_CLK_TCK"))
        return age if cap is None else min(cap, age)
    except (OSError, ValueError, IndexError):
        return 0.0


Note = Callable[[dict[str, Any]], None]


def hook_age() -> float:
    """Seconds of this hook process's budget already spent: its whole age (start-up included), or
    0.0 for a process older than :data:`LONG_LIVED`, which is not a hook started late."""
    age = process_age(cap=None)
    return 0.0 if age > LONG_LIVED else age

_doomed_group: int | None = None  # the forked child's process group, killed when the alarm fires


def _on_alarm(_signum: int, _frame: Any) -> None:
    """The hook's budget is spent: kill the child's group, leave at once with status 0, print nothing."""
    if _doomed_group is not None:
        _kill(_doomed_group)
    os._exit(0)


def arm_exit(timeout: float) -> bool:
    """Leave this process (status 0, nothing printed) when it is ``timeout`` seconds old, whatever
    it is doing then: a ``SIGALRM`` timer (re-arming replaces the previous one). A process already
    that old leaves now. Only for a process that is itself the hook, from its main thread;
    returns False (and does nothing) where the timer cannot be used, or in a test runner that runs
    a hook in its own process (``sys._called_from_test``): it is not the hook, and is far older
    than any budget."""
    if not hasattr(signal, "setitimer") or threading.current_thread() is not threading.main_thread() \
            or hasattr(sys, "_called_from_test"):
        return False
    left = timeout - hook_age()
    if left <= 0:
        _on_alarm(signal.SIGALRM, None)
    signal.signal(signal.SIGALRM, _on_alarm)
    signal.setitimer(signal.ITIMER_REAL, left)
    return True


def budget_from_env(var: str, default: float, maximum: float) -> float:
    """Seconds the environment variable ``var`` gives (``default`` when unset, malformed or not
    positive; at most ``maximum``): a hook's budget before its settings files are read."""
    try:
        value = float(os.environ.get(var, "") or default)
    except ValueError:
        return default
    return min(value, maximum) if value > 0 else default  # NaN too


def disarm() -> None:
    """Cancel :func:`arm_exit`'s timer (a process that goes on after the hook, such as a test runner)."""
    if hasattr(signal, "setitimer") and threading.current_thread() is threading.main_thread():
        signal.setitimer(signal.ITIMER_REAL, 0)


def write_whole(stdout: IO[str], line: str) -> None:
    """``line`` and a newline to ``stdout``, with ``SIGALRM`` held back until it is written: an
    answer is printed whole or not at all. A closed or broken stdout is not an error (a hook fails
    open: the host shows its own text)."""
    blocked = hasattr(signal, "pthread_sigmask")
    if blocked:
        signal.pthread_sigmask(signal.SIG_BLOCK, {signal.SIGALRM})
    try:
        stdout.write(line + "\n")
        stdout.flush()
    except (OSError, ValueError):
        pass
    finally:
        if blocked:
            signal.pthread_sigmask(signal.SIG_UNBLOCK, {signal.SIGALRM})


def run_in_child(
    answer: Callable[[Note], tuple[str, Any] | None],
    commit: Callable[[Any], None],
    *,
    stdout: IO[str],
    timeout: float,
    on_timeout: Callable[[list[dict[str, Any]]], None],
) -> int:
    """Run ``answer`` in a forked child within ``timeout`` seconds of this process's start.

    ``answer(note)`` returns ``(line, record)`` or None; ``line`` is printed by the parent and
    ``record`` (JSON-ready) handed to ``commit`` first. ``note`` sends the parent a JSON object
    early (e.g. which database the hook resolved, so a timeout is logged beside it). At the
    deadline the child's process group is killed, ``on_timeout(notes so far)`` runs and nothing is
    printed. ``line`` is printed before ``record`` is committed (see the module docstring). Always
    returns 0; never raises.
    """
    global _hard_deadline, _doomed_group
    deadline = time.monotonic() + max(0.05, timeout - hook_age() - EXIT_MARGIN)
    _hard_deadline = deadline  # the child inherits it (remaining(), capped())
    for stream in (stdout, sys.stderr):
        try:
            stream.flush()  # nothing buffered may be written twice (once by each process)
        except (OSError, ValueError):
            pass
    read_end, write_end = os.pipe()
    pid = os.fork()
    if pid == 0:  # the child: do the work, send one message, leave without clean-up
        os.close(read_end)
        _child(answer, write_end)
    os.close(write_end)
    _hard_deadline = None  # the parent only waits
    _doomed_group = pid  # the alarm (arm_exit), if it fires, kills it
    try:
        os.setpgid(pid, pid)  # also here: the child may not have done it yet when the deadline comes
    except OSError:
        pass
    data, finished = _read_until(read_end, deadline)
    messages = _messages(data)
    if not finished:
        _kill(pid)
        on_timeout([m for m in messages if "note" in m])
        return 0
    _reap(pid)
    _doomed_group = None
    message = next((m for m in messages if isinstance(m.get("line"), str)), None)
    if message is None:
        return 0
    write_whole(stdout, message["line"])
    try:
        commit(message.get("record"))
    except Exception:  # noqa: BLE001, S110 - the answer is still right; at worst it is repeated later
        pass
    return 0


def _messages(data: bytes) -> list[dict[str, Any]]:
    """The complete JSON lines the child sent (a line cut by the deadline is ignored)."""
    found: list[dict[str, Any]] = []
    for line in data.split(b"\n"):
        try:
            message = json.loads(line.decode("utf-8"))
        except ValueError:
            continue
        if isinstance(message, dict):
            found.append(message)
    return found


def _send(fd: int, message: dict[str, Any]) -> None:
    """One JSON line to the parent (``json.dumps`` escapes newlines inside strings)."""
    view = memoryview(json.dumps(message, ensure_ascii=False).encode("utf-8") + b"\n")
    while view:
        view = view[os.write(fd, view):]


def _child(answer: Callable[[Note], tuple[str, Any] | None], write_end: int) -> None:
    """Body of the forked child: its own process group, stdout silenced, one message, ``os._exit``."""
    code = 0
    try:
        os.setpgid(0, 0)  # the parent kills the whole group: this child and its prefetch worker
        devnull = os.open(os.devnull, os.O_WRONLY)
        os.dup2(devnull, 1)  # a stray print in the child must never become context
        result = answer(lambda note: _send(write_end, {"note": note}))
        if result is not None:
            line, record = result
            _send(write_end, {"line": line, "record": record})
    except BaseException:  # noqa: BLE001 - the child reports failures through `answer`'s own log
        code = 0
    finally:
        os._exit(code)


def _read_until(fd: int, deadline: float) -> tuple[bytes, bool]:
    """What was written to ``fd``, and whether EOF came before the deadline."""
    chunks: list[bytes] = []
    while True:
        left = deadline - time.monotonic()
        if left <= 0:
            return b"".join(chunks), False
        try:
            ready, _, _ = select.select([fd], [], [], left)
        except InterruptedError:
            continue
        if not ready:
            return b"".join(chunks), False
        chunk = os.read(fd, 65536)
        if not chunk:
            return b"".join(chunks), True
        chunks.append(chunk)


def _kill(pid: int) -> None:
    for target in (lambda: os.killpg(pid, signal.SIGKILL), lambda: os.kill(pid, signal.SIGKILL)):
        try:
            target()
            return
        except OSError:
            continue


def _reap(pid: int) -> None:
    try:
        os.waitpid(pid, os.WNOHANG)
    except OSError:
        pass

