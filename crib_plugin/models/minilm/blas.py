"""Keep OpenBLAS single-threaded while MiniLM batches run on their own threads.

Split from :mod:`crib_plugin.models.minilm` (the embedder, which uses :data:`BLAS_THREADS`).
"""

from __future__ import annotations

import contextlib
import ctypes
import sys
import threading
from collections.abc import Callable, Iterator
from pathlib import Path

import numpy as np


class _BlasThreads:
    """Runs the forward pass with single-threaded OpenBLAS, restoring the old setting after.

    Why: OpenBLAS splits each matrix multiply across all cores and then waits for every
    thread. When another process keeps a core busy (a build, a test run, the agent itself),
    each multiply stalls for a scheduler time slice: measured here, a 3-token query went from
    15 ms to 650 ms and bulk embedding ran 2x slower. Single-threaded BLAS plus one Python
    worker per batch (numpy releases the GIL) uses the cores just as well when they are free
    and degrades gently when they are not.

    The setting is process-wide, so nested/concurrent users are reference-counted. Where the
    BLAS is not OpenBLAS (Accelerate, MKL) or cannot be found, this is a no-op.
    """

    def __init__(self) -> None:
        self._lock = threading.Lock()
        self._depth = 0
        self._saved = 0
        self._funcs: tuple[Callable[[], int], Callable[[int], None]] | None | bool = False

    @contextlib.contextmanager
    def single(self) -> Iterator[None]:
        """Within the block, OpenBLAS uses one thread."""
        with self._lock:
            funcs = self._resolve()
            if funcs and self._depth == 0:
                self._saved = int(funcs[0]())
                funcs[1](1)
            self._depth += 1
        try:
            yield
        finally:
            with self._lock:
                self._depth -= 1
                if funcs and self._depth == 0 and self._saved > 1:
                    funcs[1](self._saved)

    def _resolve(self) -> tuple[Callable[[], int], Callable[[int], None]] | None:
        """Find OpenBLAS's get/set_num_threads in the loaded libraries, once."""
        if self._funcs is False:
            self._funcs = _find_openblas()
        return self._funcs or None  # type: ignore[return-value]


def _find_openblas() -> tuple[Callable[[], int], Callable[[int], None]] | None:
    """``(get_num_threads, set_num_threads)`` of the OpenBLAS numpy loaded, or None."""
    for path in _loaded_openblas_paths():
        try:
            lib = ctypes.CDLL(path)
        except OSError:
            continue
        for prefix in ("scipy_openblas", "openblas"):
            for suffix in ("64_", ""):
                getter = getattr(lib, f"{prefix}_get_num_threads{suffix}", None)
                setter = getattr(lib, f"{prefix}_set_num_threads{suffix}", None)
                if getter is not None and setter is not None:
                    getter.restype = ctypes.c_int
                    setter.argtypes = [ctypes.c_int]
                    setter.restype = None
                    return getter, setter
    return None


def _loaded_openblas_paths() -> list[str]:
    """Paths of OpenBLAS libraries mapped into this process (Linux), else those bundled next
    to numpy (other platforms' wheels)."""
    paths: list[str] = []
    if sys.platform.startswith("linux"):
        with (
            contextlib.suppress(OSError),
            open("/proc/self/maps", encoding="utf-8", errors="replace") as maps,
        ):
            for line in maps:
                path = line.rstrip("\n").split(maxsplit=5)[-1]
                if "openblas" in path.lower() and path.startswith("/") and path not in paths:
                    paths.append(path)
        return paths
    numpy_dir = Path(np.__file__).parent
    for folder in (numpy_dir.parent / "numpy.libs", numpy_dir / ".libs", numpy_dir / ".dylibs"):
        if folder.is_dir():
            paths.extend(str(p) for p in sorted(folder.iterdir()) if "openblas" in p.name.lower())
    return paths


BLAS_THREADS = _BlasThreads()
