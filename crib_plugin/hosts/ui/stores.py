"""The stores the viewer shows, kept open for the server's life (one ``ManagedMemory`` per scope).

The server runs every view on its event loop thread, one at a time, so each store's connection is
used by one thread only. A scope whose store does not exist yet is shown as such, never created.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

from ...core.errors import InputError
from ...memory import Memory
from ...read.ops import MemoryOps
from ...scopes import SCOPES, scope_path
from ..claude.state import sessions_dir


class ManagedMemory(MemoryOps, Memory):
    """A ``Memory`` with the management operations (:class:`~crib_plugin.read.ops.MemoryOps`)."""


class Stores:
    """The project and global stores, opened on first use and closed by :meth:`close`."""

    def __init__(self) -> None:
        self._open: dict[str, ManagedMemory] = {}

    @staticmethod
    def check(scope: str) -> str:
        if scope not in SCOPES:
            raise InputError(f"unknown scope {scope!r} (use project or global)")
        return scope

    def exists(self, scope: str) -> bool:
        path = scope_path(self.check(scope))
        return "://" in str(path) or Path(path).exists()

    def get(self, scope: str) -> ManagedMemory:
        """The open store of ``scope``; InputError when it does not exist yet."""
        if scope not in self._open:
            if not self.exists(scope):
                raise InputError(f"no {scope} store yet ({scope_path(scope)})")
            self._open[scope] = ManagedMemory(scope_path(scope), create=False)
        return self._open[scope]

    def sessions_folder(self) -> Path:
        return sessions_dir(scope_path("project"))

    def where(self) -> list[dict[str, Any]]:
        return [{"scope": s, "path": str(scope_path(s)), "exists": self.exists(s)} for s in SCOPES]

    def close(self) -> None:
        for memory in self._open.values():
            memory.close()
        self._open.clear()
