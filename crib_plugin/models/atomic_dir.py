"""Atomic publication of a folder and a cross-process lock beside it (used for the model cache).

A folder is built in a temporary sibling (same filesystem) and renamed into place, so a killed
download never leaves half a model behind; a lock file keeps two processes from downloading at once.
Split from :mod:`crib_plugin.models.weights`, which only decides *what* to fetch and verify.
"""

from __future__ import annotations

import contextlib
import os
import shutil
import tempfile
from collections.abc import Iterator
from pathlib import Path
from typing import IO

try:  # the file lock: fcntl on POSIX, msvcrt on Windows
    import fcntl
except ImportError:  # pragma: no cover - Windows
    fcntl = None  # type: ignore[assignment]
    import msvcrt


@contextlib.contextmanager
def staging_dir(target: Path) -> Iterator[Path]:
    """A fresh temporary folder beside ``target`` (same filesystem, so rename is atomic),
    deleted on the way out unless it was published."""
    staging = Path(tempfile.mkdtemp(prefix=f".{target.name}.tmp-", dir=target.parent))
    try:
        # mkdtemp makes the folder private; the published model is plain, world-readable data
        staging.chmod(0o755)
        yield staging
    finally:
        if staging.exists():
            remove_tree(staging)


def publish(staging: Path, target: Path) -> None:
    """Move ``staging`` into place as ``target``; an old ``target`` is moved aside first and then
    deleted, so readers see either the old folder or the complete new one."""
    old = None
    if target.exists():
        old = target.with_name(f".{target.name}.old-{os.getpid()}")
        remove_tree(old)
        os.replace(target, old)
    os.replace(staging, target)
    if old is not None:
        remove_tree(old)


def remove_tree(path: Path) -> None:
    """Delete a file or folder if it exists, ignoring errors (cleanup must not mask the cause)."""
    if path.is_dir() and not path.is_symlink():
        shutil.rmtree(path, ignore_errors=True)
    else:
        with contextlib.suppress(OSError):
            path.unlink()


@contextlib.contextmanager
def exclusive_lock(target: Path) -> Iterator[None]:
    """An exclusive inter-process lock on ``<target>.lock`` (blocking), so one process downloads
    while the others wait and then find the model ready. Without a lockable filesystem the
    atomic rename still keeps the cache consistent, so the lock degrades to a no-op."""
    try:
        target.parent.mkdir(parents=True, exist_ok=True)
        handle = open(target.with_name(f".{target.name}.lock"), "a+b")
    except OSError:
        yield
        return
    try:
        _acquire(handle)
        yield
    finally:
        _release(handle)
        handle.close()


def _acquire(handle: IO[bytes]) -> None:
    """Block until the file lock is held (fcntl on POSIX, msvcrt on Windows)."""
    try:
        if fcntl is not None:
            fcntl.flock(handle.fileno(), fcntl.LOCK_EX)
            return
        handle.seek(0)  # pragma: no cover - Windows
        while True:
            try:
                msvcrt.locking(handle.fileno(), msvcrt.LK_LOCK, 1)  # type: ignore[attr-defined]
                return
            except OSError:
                continue
    except OSError:
        pass  # e.g. a filesystem without locks: rely on atomic renames alone


def _release(handle: IO[bytes]) -> None:
    """Release the lock taken by :func:`_acquire`."""
    try:
        if fcntl is not None:
            fcntl.flock(handle.fileno(), fcntl.LOCK_UN)
            return
        handle.seek(0)  # pragma: no cover - Windows
        with contextlib.suppress(OSError):
            msvcrt.locking(handle.fileno(), msvcrt.LK_UNLCK, 1)  # type: ignore[attr-defined]
    except OSError:
        pass
