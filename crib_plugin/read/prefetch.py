"""The prompt's embedding, computed in a forked worker while the rest of the read path runs.

Why: every per-prompt ``crib retrieve`` (and the Claude Code prompt hook) is a fresh process.
Its largest single piece of work is the query embedding — importing numpy (~100 ms here),
mapping the model and running it (~40 ms) — and nothing else on the read path needs it before
the vector channel asks: the query parser, the full-text and fact channels and the template
engine are all independent of it. On a machine with two or more cores, :func:`fork_for` forks a
worker first thing — right after the prompt and the settings are read, before crib's own modules,
the plugins or the store are loaded. The child starts importing numpy at once; the parent loads
the rest, opens the store and sends the child the store's embedder factory (:func:`attach`, by
pickle: a reference to its module and name). The child answers with two messages, the embedder's
identity and then the prompt's vector, and exits; meanwhile the parent runs the other channels,
compiles the template and reads ahead what comes after fusion. The parent never imports numpy.

The parent sees the child through :class:`PrefetchedEmbedder`, which stands in for the embedder
(``Memory.embedder()``): it has the embedder's identity (name, model, dimension) and returns the
prefetched vector — as little-endian float32 bytes, which is what sqlite-vec reads — for the
prompt it was started with. Any other text, or a child that died or failed in an unexpected way,
falls back to the real embedder in this process: slower, never different. A child that misses its
deadline (``give_up_at``: a hook's budget; else :data:`DEADLINE`) is killed and the embedder is
reported unavailable, so the other channels still answer in time. An embedder error the
child reports (weights cannot be fetched, Ollama down, unknown model) is raised in the parent as
the same :mod:`~crib_plugin.core.errors` class with the same message, so the vector channel reports it
exactly as it would have without the worker.

``CRIB_PARALLEL`` (:mod:`crib_plugin.core.config`): ``auto`` (the default: fork when ``os.fork`` exists
and two or more CPUs are available to this process), ``1`` (whenever ``os.fork`` exists) or ``0``.
On a store with a side index the worker also runs the k-NN search (:func:`search_ahead`).

Fork safety: the child never touches a SQLite connection, and its standard streams point at
``/dev/null`` (a host waiting for the parent's output must not wait for the child); it leaves
through ``os._exit``, so no buffer is flushed twice and no ``atexit`` handler runs in it, and an
``alarm`` bounds its life should the parent be gone.
"""

from __future__ import annotations

import contextlib
import os
import pickle
import select
import signal
import sys
import time
from typing import TYPE_CHECKING, Any, Callable, Sequence

from ..core import errors
from .prefetch_fork import DEADLINE, child_main, detach, fork_quietly, reap_finished, unreaped, write_frame  # noqa: F401  (unreaped: tests)

if TYPE_CHECKING:  # pragma: no cover
    from ..core.config import Settings
    from ..plugins.contracts import MemoryLike  # the protocol: no import of the facade above

__all__ = ["PrefetchedEmbedder", "Worker", "attach", "enabled", "fork_for", "reap_finished", "search_ahead", "start", "DEADLINE"]


PIPE_BUFFER = 60_000
"""Largest search request written to the worker (a pipe buffers 64 KB; the child reads it after embedding)."""


def enabled(mode: str) -> bool:
    """Whether this process may fork a prefetch worker: ``Settings.parallel`` and the machine."""
    if mode == "off" or not hasattr(os, "fork"):
        return False
    return mode == "on" or _cpus() >= 2


def _cpus() -> int:
    try:
        return len(os.sched_getaffinity(0))  # what this process may use, not what the box has
    except (AttributeError, OSError):
        return os.cpu_count() or 1


def fork_for(settings: "Settings", text: str) -> "Worker | None":
    """Fork the worker for ``text`` as early as possible — before crib's own modules, the plugin
    manager or the store are loaded — so its numpy import overlaps all of that. None when
    parallelism is off or there is no prompt. Which channels need the embedding is asked of the
    channels later (``needs_embedding``, :meth:`Memory.prefetch`), once the plugins are loaded:
    when none of the selected ones does, the worker is cancelled there."""
    text = text.strip()  # what the query parser keeps, hence what the vector channel embeds
    if not text or not enabled(settings.parallel):
        return None
    return Worker.fork(text)


def attach(worker: "Worker", memory: "MemoryLike", *, give_up_at: float | None = None) -> "PrefetchedEmbedder | None":
    """Tell ``worker`` which embedder to run (``memory``'s) and return its stand-in.

    The factory travels by pickle, that is by reference to its module and name; a factory that
    cannot (a lambda, a closure) cancels the worker, and the embedder runs in-process as usual.
    ``give_up_at`` (a ``time.perf_counter`` value) is when the vector channel stops waiting and
    reports the embedder as unavailable, so the other channels still answer within a hook's budget;
    by default :data:`DEADLINE` seconds after the parent starts waiting.
    """
    name = memory.embedder_name()
    factory = memory.registry.embedders.get(name.lower())
    if factory is None:  # unknown embedder: the in-process path reports it
        worker.cancel()
        return None
    return worker.request(factory, lambda: memory.registry.make("embedders", name), give_up_at=give_up_at)


def search_ahead(store: Any, embedder: "PrefetchedEmbedder", tables: Sequence[str]) -> None:
    """Hand ``tables``' side-index searches to the worker still embedding the prompt, so this
    process never imports numpy for them (:mod:`crib_plugin.store.vector_index_ahead`): the
    store's next ``vector_search`` of each takes the worker's ranking when it still holds."""
    plans = [planned for table in tables if (planned := store.plan_search_ahead(table)) is not None]
    if plans and embedder.request_search(plans):
        for planned in plans:
            store.search_ahead(planned["table"], planned, lambda vector, table=planned["table"]: embedder.search_result(table, vector))


def start(memory: "MemoryLike", text: str, *, give_up_at: float | None = None) -> "PrefetchedEmbedder | None":
    """:func:`fork_for` and :func:`attach` in one step, for callers that already hold a Memory."""
    worker = fork_for(memory.settings, text)
    return attach(worker, memory, give_up_at=give_up_at) if worker is not None else None


class Worker:
    """A forked child that starts importing numpy at once, then embeds its prompt on request.

    Two pipes: the request (parent → child: the pickled embedder factory, then EOF; EOF alone
    means "not needed") and the answer (child → parent: length-prefixed pickled messages, the
    embedder's identity first, then the vector).
    """

    def __init__(self, pid: int, request_fd: int, answer_fd: int, text: str) -> None:
        self.pid = pid
        self.text = text
        self._request_fd: int | None = request_fd
        self._search_fd: int | None = None  # the request pipe after the factory went (send_search)
        self._answer_fd: int | None = answer_fd
        self._buffer = b""

    @classmethod
    def fork(cls, text: str) -> "Worker":
        reap_finished()  # earlier workers of a long-lived host
        request_r, request_w = os.pipe()
        answer_r, answer_w = os.pipe()
        for stream in (sys.stdout, sys.stderr):
            try:
                stream.flush()
            except (AttributeError, OSError, ValueError):
                pass
        pid = fork_quietly()
        if pid == 0:  # the child: never returns, never runs any of the parent's cleanup
            try:
                os.close(request_w)
                os.close(answer_r)
                detach()
                child_main(request_r, answer_w, text)
            finally:
                os._exit(0)
        os.close(request_r)
        os.close(answer_w)
        return cls(pid, request_w, answer_r, text)

    def request(
        self, factory: Callable[[], Any], make_real: Callable[[], Any], *, give_up_at: float | None = None
    ) -> "PrefetchedEmbedder | None":
        """Send the factory; the returned stand-in answers from the child. None if it cannot go."""
        fd, self._request_fd = self._request_fd, None
        if fd is None:
            return None
        try:
            data = pickle.dumps(factory, protocol=pickle.HIGHEST_PROTOCOL)
            write_frame(fd, data)  # a reference to a function: far below the pipe's buffer
        except Exception:
            os.close(fd)
            self.cancel()
            return None
        self._search_fd = fd  # kept open for the one search the parent may hand over (send_search)
        return PrefetchedEmbedder(self, make_real, give_up_at=give_up_at)

    def send_search(self, plans: list[dict[str, Any]]) -> bool:
        """Hand the child the side-index searches to run once it has the vector (the request
        pipe's second and last frame); False when it cannot go (then the parent searches)."""
        fd, self._search_fd = self._search_fd, None
        if fd is None:
            return False
        try:
            data = pickle.dumps(plans, protocol=pickle.HIGHEST_PROTOCOL)
            if len(data) > PIPE_BUFFER:  # a long tail: writing would wait for the child to finish embedding
                return False
            write_frame(fd, data)
            return True
        except Exception:
            return False
        finally:
            os.close(fd)

    def read_message(self, deadline: float) -> dict[str, Any] | None:
        """The child's next message; None when it died or closed the pipe. TimeoutError at
        ``deadline`` (a ``time.perf_counter`` value)."""
        header = self._read_exactly(4, deadline)
        if header is None:
            return None
        body = self._read_exactly(int.from_bytes(header, "little"), deadline)
        try:
            message = pickle.loads(body) if body is not None else None
        except Exception:
            return None
        return message if isinstance(message, dict) else None

    def _read_exactly(self, size: int, deadline: float) -> bytes | None:
        """``size`` bytes; None when the child is gone. Raises TimeoutError at ``deadline``."""
        while len(self._buffer) < size:
            fd = self._answer_fd
            if fd is None:
                return None
            left = deadline - time.perf_counter()
            if left <= 0:
                raise TimeoutError
            try:
                ready, _, _ = select.select([fd], [], [], left)
                if not ready:
                    continue
                chunk = os.read(fd, 1 << 16)
            except (OSError, ValueError):  # ValueError: a descriptor beyond select's FD_SETSIZE
                return None
            if not chunk:
                return None
            self._buffer += chunk
        data, self._buffer = self._buffer[:size], self._buffer[size:]
        return data

    def cancel(self) -> None:
        """Close both pipes and stop the child, without waiting for it.

        A child that has not finished is killed. Either way it is reaped later, by
        :func:`reap_finished` (at the next fork, or when the caller asks): waiting here for the
        kernel to tear down a process that mapped numpy and the model would put a few
        milliseconds back on the prompt's path. A process that exits first leaves its zombies to
        init.
        """
        for name in ("_request_fd", "_search_fd", "_answer_fd"):
            fd = getattr(self, name)
            setattr(self, name, None)
            if fd is not None:
                try:
                    os.close(fd)
                except OSError:
                    pass
        if self.pid <= 0:
            return
        pid, self.pid = self.pid, 0
        try:
            done, _ = os.waitpid(pid, os.WNOHANG)
            if done == 0:  # still running: not needed, too slow, or on its way out
                os.kill(pid, signal.SIGKILL)
                unreaped.append(pid)
        except (ChildProcessError, ProcessLookupError, OSError):
            pass


class PrefetchedEmbedder:
    """Stands in for the store's embedder in the parent, answering from the worker's result."""

    def __init__(self, worker: Worker, make_real: Callable[[], Any], *, give_up_at: float | None = None) -> None:
        self.worker = worker
        self.give_up_at = give_up_at
        self.text = worker.text
        self._make_real = make_real
        self._real: Any = None
        self._answer: dict[str, Any] = {}  # the worker's messages, merged as they arrive
        self._messages = 0
        self._search_sent = False  # a side-index search was handed over (request_search)
        self._searched: dict[str, Any] | None = None  # its rankings by table, once read
        self.worker_pid = worker.pid  # kept after the worker is reaped (its own pid is cleared)

    # -- the worker's answer ---------------------------------------------------------------

    def answer(self, *, vector: bool = True) -> dict[str, Any]:
        """What the worker said: its identity, and (``vector=True``) the vector too.

        Blocks until those messages arrive, at most until ``give_up_at`` (by default
        :data:`DEADLINE` seconds). A worker that dies reads as ``fallback`` (the real embedder
        runs here); one that misses the deadline reads as an unavailable embedder — embedding
        here instead would only take longer still.
        """
        wanted = 2 if vector else 1
        deadline = self.give_up_at if self.give_up_at is not None else time.perf_counter() + DEADLINE
        while self._messages < wanted and "fallback" not in self._answer and "make_error" not in self._answer:
            try:
                message = self.worker.read_message(deadline)
            except TimeoutError:
                step = "embed" if "name" in self._answer else "make"
                self._answer[f"{step}_error"] = ("ModelUnavailable", "the embedder did not answer in time (prefetch worker)")
                self._messages = 3  # nothing more is read from this worker
                break
            self._messages += 1
            self._answer.update(message if message is not None else {"fallback": True})
        if self._messages >= (3 if self._search_sent else 2) or "fallback" in self._answer or "make_error" in self._answer:
            self.close()  # nothing more will come
        return self._answer

    def request_search(self, plans: list[dict[str, Any]]) -> bool:
        """Hand the worker side-index searches (:func:`crib_plugin.store.vector_index_ahead.plan`)
        to run once it has the vector; False when it cannot take them (the store searches itself)."""
        if not self.pending or self._search_sent or not plans:
            return False
        self._search_sent = self.worker.send_search(plans)
        return self._search_sent

    def search_result(self, table: str, vector: bytes) -> dict[str, Any] | None:
        """The worker's search of ``table`` for ``vector`` (the prompt's): its ranking and candidate
        count; None when it did not answer in time or could not search (the store searches itself)."""
        if not self._search_sent:
            return None
        if self._searched is None:
            answer = self.answer()
            message: dict[str, Any] | None = None
            if self._messages == 2 and "blob" in answer:
                self._messages = 3
                with contextlib.suppress(TimeoutError):
                    message = self.worker.read_message(self.give_up_at if self.give_up_at is not None else time.perf_counter() + DEADLINE)
            searched = (message or {}).get("searched")
            self._searched = searched if isinstance(searched, dict) else {}
            self.close()
        if vector != self._answer.get("blob"):
            return None
        found = self._searched.get(table)
        return found if isinstance(found, dict) else None

    def close(self) -> None:
        """Stop waiting: close the pipes and reap the worker."""
        self.worker.cancel()

    def _value(self, field: str) -> Any:
        answer = self.answer(vector=False)
        _raise(answer.get("make_error"))
        if "fallback" in answer or field not in answer:
            return getattr(self.real(), field)
        return answer[field]

    def real(self) -> Any:
        """The embedder itself, created in this process (only when the worker cannot answer)."""
        if self._real is None:
            self._real = self._make_real()
        return self._real

    @property
    def pending(self) -> bool:
        """True while the vector has not been read (the parent has time on its hands)."""
        return self._messages < 2 and not ({"fallback", "make_error"} & self._answer.keys())

    @property
    def fell_back(self) -> bool:
        """Whether the real embedder had to be created in this process after all."""
        return self._real is not None

    @property
    def prefetched(self) -> bool:
        """Whether the vector came from the worker (False once the real embedder had to run)."""
        return "blob" in self._answer and self._real is None

    # -- the Embedder protocol -------------------------------------------------------------

    @property
    def name(self) -> str:
        return self._value("name")

    @property
    def model(self) -> str:
        return self._value("model")

    @property
    def dim(self) -> int:
        return self._value("dim")

    @property
    def multilingual(self) -> bool:
        return self._value("multilingual")

    def embed_query(self, text: str) -> Any:
        """The prefetched vector (float32 bytes) for the prompt; any other text embeds in-process."""
        if text == self.text:
            answer = self.answer()
            _raise(answer.get("make_error"))
            _raise(answer.get("embed_error"))
            if "fallback" not in answer and isinstance(answer.get("blob"), bytes):
                return answer["blob"]
        return self.real().embed_query(text)

    def embed_documents(self, texts: Sequence[str]) -> Any:
        return self.real().embed_documents(texts)


def _raise(error: tuple[str, str] | None) -> None:
    """Re-raise an error the worker reported, as the same crib exception class."""
    if error is None:
        return
    kind, message = error
    cls = getattr(errors, kind, None)
    if not (isinstance(cls, type) and issubclass(cls, errors.CribError)):
        cls = errors.ModelError
    raise cls(message)
