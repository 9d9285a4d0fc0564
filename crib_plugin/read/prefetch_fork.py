"""The forked side of the prefetch worker: forking, detaching the child, the child's life, message framing.

The request pipe carries up to two frames from the parent: the pickled embedder factory, then
(optionally) the side-index searches it hands over (:mod:`crib_plugin.store.vector_index_ahead`);
the answer pipe up to three messages: the embedder's identity, the vector, the searches' rankings.

:mod:`crib_plugin.read.prefetch` drives it from the parent (:class:`~crib_plugin.read.prefetch.Worker`,
:class:`~crib_plugin.read.prefetch.PrefetchedEmbedder`); this module holds what runs in the child and the
bookkeeping of finished children (:func:`reap_finished`). Nothing here imports numpy at module level.
"""

from __future__ import annotations

import gc
import os
import pickle
import signal
import warnings
from typing import Any, Callable

from ..core import errors

DEADLINE = 60.0
"""Seconds the parent waits for the child's answer before embedding in-process instead."""

unreaped: list[int] = []


def reap_finished(*, wait: bool = False) -> None:
    """Collect the exit status of workers that were stopped earlier (``wait``: block until all are)."""
    for pid in list(unreaped):
        try:
            done, _ = os.waitpid(pid, 0 if wait else os.WNOHANG)
        except ChildProcessError:  # reaped elsewhere (a SIGCHLD handler, os.wait by the host)
            done = pid
        if done:
            unreaped.remove(pid)


def fork_quietly() -> int:
    """``os.fork()``, without Python 3.12's warning about forking a threaded process (the hook
    runs its work in a thread; the child only embeds and exits, taking no lock another thread
    could hold)."""
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", DeprecationWarning)
        return os.fork()


def detach() -> None:
    """Cut the child loose from the parent's standard streams and bound its life.

    A host reading the parent's stdout (Claude Code, ``subprocess.run``) waits for every holder
    of that pipe to close it: a worker stuck on a hanging Ollama must not keep the prompt waiting
    after the parent has given up and exited. ``alarm`` ends the child even then.
    """
    devnull = os.open(os.devnull, os.O_RDWR)
    for fd in (0, 1, 2):
        os.dup2(devnull, fd)
    os.close(devnull)
    signal.alarm(int(DEADLINE) + 1)


def child_main(request_fd: int, answer_fd: int, text: str) -> None:
    """The child's life: import numpy while the parent loads the rest, then embed on request."""
    gc.disable()  # a short life: collecting would only copy the parent's pages (copy-on-write)
    os.environ.setdefault("OPENBLAS_NUM_THREADS", "1")  # one short query: a BLAS pool only costs
    try:
        import numpy  # deferred: in the forked worker only, overlapping the parent (530 ms)  # noqa: F401 - speculative: every built-in embedder needs it
    except Exception:
        pass
    request = read_frame(request_fd)
    if request is None:
        return  # cancelled: the parent does not need a vector
    try:
        factory = pickle.loads(request)
    except Exception:  # the factory's module does not import here: the parent embeds itself
        _send(answer_fd, {"fallback": True})
        return
    blob = _embed_in_child(factory, text, lambda message: _send(answer_fd, message))
    plans = read_frame(request_fd) if blob is not None else None
    if plans is not None:  # the parent hands over its side-index search (closing the pipe: none)
        _send(answer_fd, {"searched": _search_in_child(plans, blob)})  # type: ignore[arg-type]  # blob is set


def _search_in_child(request: bytes, blob: bytes) -> dict[str, Any]:
    """The planned side-index searches for the prompt's vector ({} when they cannot run here:
    the parent then searches itself)."""
    try:
        # Each plan names the function that runs it, by reference (as the embedder's factory
        # travels): unpickling imports its module, here and only in a worker that has a search.
        plans = pickle.loads(request)
        out: dict[str, Any] = {}
        for planned in plans:
            out.update(planned["run"]([planned], blob))
        return out
    except Exception:
        return {}


def _embed_in_child(factory: Callable[[], Any], text: str, send: Callable[[dict[str, Any]], None]) -> bytes | None:
    """The child's main job, as two messages: the embedder's identity, then the vector (returned).

    The identity goes first because the parent may need only that (the vector channel skips a
    CJK prompt for an English-only model without waiting for its embedding). Errors are sent
    with the step that raised them (``make`` or ``embed``), so the parent raises each where the
    in-process embedder would have: an embedder that cannot embed still has an identity.
    """
    try:
        embedder = factory()
        send({
            "name": str(embedder.name),
            "model": str(embedder.model),
            "dim": int(embedder.dim),
            "multilingual": bool(getattr(embedder, "multilingual", True)),
        })
    except errors.CribError as exc:
        send({"make_error": (type(exc).__name__, str(exc))})
        return None
    except BaseException:  # a bug: let the parent run the real embedder and meet it there
        send({"fallback": True})
        return None
    try:
        # deferred: the store package (apsw and the SQLite modules) would be imported before the fork by
        # every process that imports the prefetch module; the worker needs only this function, after it
        from ..store.base_vectors import to_blob

        blob = to_blob(embedder.embed_query(text))
        send({"blob": blob})
        return blob
    except errors.CribError as exc:
        send({"embed_error": (type(exc).__name__, str(exc))})
    except BaseException:
        send({"fallback": True})
    return None


def _send(fd: int, message: dict[str, Any]) -> None:
    """One message: 4-byte little-endian length, then the pickle."""
    write_frame(fd, pickle.dumps(message, protocol=pickle.HIGHEST_PROTOCOL))


def write_frame(fd: int, data: bytes) -> None:
    """``data`` as one frame: its 4-byte little-endian length, then the bytes (both pipes)."""
    write_all(fd, len(data).to_bytes(4, "little") + data)


def read_frame(fd: int) -> bytes | None:
    """The next frame on a blocking descriptor; None at end of file (the other side closed it)."""
    header = _read_exactly(fd, 4)
    return _read_exactly(fd, int.from_bytes(header, "little")) if header is not None else None


def _read_exactly(fd: int, size: int) -> bytes | None:
    data = b""
    while len(data) < size:
        chunk = os.read(fd, size - len(data))
        if not chunk:
            return None
        data += chunk
    return data


def write_all(fd: int, data: bytes) -> None:
    view = memoryview(data)
    while view:
        view = view[os.write(fd, view):]
