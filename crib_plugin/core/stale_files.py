"""Removing state files a stream or session left behind (a leaf: standard library only)."""

from __future__ import annotations

import time
from pathlib import Path


def prune_older_than(folder: Path, max_age_seconds: float, *, suffix: str | None = None, now: float | None = None) -> int:
    """Delete the files in ``folder`` (only ``suffix`` ones when given) not modified for
    ``max_age_seconds``; returns how many went. A missing folder or a file that vanished meanwhile
    is not an error."""
    if not folder.is_dir():
        return 0
    cutoff = (time.time() if now is None else now) - max_age_seconds
    removed = 0
    for path in folder.iterdir():
        if suffix is not None and path.suffix != suffix:
            continue
        try:
            if path.stat().st_mtime < cutoff:
                path.unlink()
                removed += 1
        except OSError:
            continue
    return removed
