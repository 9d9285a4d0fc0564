"""Helpers shared by the benchmark scripts (run as ``python bench/<script>.py``)."""

from __future__ import annotations


def children_cpu() -> float:
    """User + system CPU seconds used so far by finished child processes (0 where unsupported)."""
    try:
        import resource
    except ImportError:  # pragma: no cover - Windows
        return 0.0
    usage = resource.getrusage(resource.RUSAGE_CHILDREN)
    return usage.ru_utime + usage.ru_stime
