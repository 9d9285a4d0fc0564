"""Where the stores live: one per repository (``project``) and one per user (``global``).

The project store sits at the root of the git repository the command runs in — the same file from
any subdirectory and from every worktree of that repository — so a write from ``src/`` and a prompt
from the root see the same memories. Outside git it sits under the current directory, as before.
``CRIB_DB`` still names the project store outright.

The global store lives in the user's data directory (``platformdirs``): preferences every project
inherits. Retrieval reads the project store, then the global one (:mod:`crib_plugin.hosts.scoped`).

The repository root is found by reading ``.git`` files directly, not by running ``git``: this runs
on the per-prompt path, where forking a process costs milliseconds, and it must work where git is
not installed. The answer is what ``git rev-parse --git-common-dir`` gives, one level up: a
worktree's ``.git`` file names its private git directory, whose ``commondir`` names the main one.
"""

from __future__ import annotations

import os
import sys
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any, Mapping

from .core.config import get_settings, global_db_override, load_settings
from .core.errors import InputError
from .core.repo import DB_NAME, repo_root, repo_store  # noqa: F401 - the leaf; importable from here too

if TYPE_CHECKING:  # pragma: no cover
    from .memory import Memory

SCOPES = ("project", "global")


@dataclass(frozen=True)
class Scope:
    """One store in use: its scope name and the SQLite file."""

    name: str  # "project" | "global"
    path: Path

    @property
    def exists(self) -> bool:
        return self.path.exists()


def _env(name: str, environ: Mapping[str, str] | None) -> str | None:
    value = (os.environ if environ is None else environ).get(name)
    return value.strip() if value and value.strip() else None


def project_db(cwd: Path | None = None, environ: Mapping[str, str] | None = None) -> Path:
    """``CRIB_DB`` (environment or config file; unchanged meaning), else :func:`repo_store`."""
    settings = get_settings() if environ is None else load_settings(environ)
    if cwd is None or settings.source("db") != "default":
        return settings.db
    return repo_store(cwd)


def global_db(environ: Mapping[str, str] | None = None) -> Path:
    """``CRIB_GLOBAL_DB``, else ``crib.db`` in the user data directory (``platformdirs``)."""
    return global_db_override(environ) or user_data_dir(environ) / DB_NAME


def user_data_dir(environ: Mapping[str, str] | None = None) -> Path:
    """``platformdirs.user_data_dir("crib")``. On Linux its XDG rule is applied here directly
    (``$XDG_DATA_HOME/crib``, else ``~/.local/share/crib``): every prompt checks for the global
    store, and importing platformdirs would cost it ~4 ms. Elsewhere platformdirs answers."""
    if sys.platform.startswith("linux"):
        xdg = _env("XDG_DATA_HOME", environ)
        base = Path(xdg).expanduser() if xdg and Path(xdg).is_absolute() else Path.home() / ".local" / "share"
        return base / "crib"
    # deferred: platform-specific: off Linux only (on Linux the XDG rule is above); it would cost every
    # prompt 2.5 ms (4 % of `import numpy`) and 7 modules for nothing
    import platformdirs

    return Path(platformdirs.user_data_dir("crib", appauthor=False))


def scope_path(scope: str, cwd: Path | None = None) -> Path:
    """The store file of a scope name; :class:`InputError` for anything but project/global."""
    if scope == "project":
        return project_db(cwd)
    if scope == "global":
        return global_db()
    raise InputError(f"unknown scope {scope!r} (use project or global)")


def stores_in_use(cwd: Path | None = None) -> list[Scope]:
    """Project then global, whether or not their files exist yet (retrieval reads them in this order)."""
    return [Scope("project", project_db(cwd)), Scope("global", global_db())]


def open_scope(scope: str = "project", *, create: bool = True, cwd: Path | None = None, readonly: bool = False) -> "Memory":
    """A :class:`~crib_plugin.memory.Memory` on one scope's store (missing + ``create=False`` →
    StoreError when first used, like ``Memory(create=False)``); ``readonly`` for read commands,
    which never create, migrate or convert a file."""
    # deferred: imported after the prefetch fork, overlapping the prompt's embedding (14 ms)
    from .memory import Memory

    return Memory(scope_path(scope, cwd), create=create and not readonly, readonly=readonly)


def list_scoped(scope: str = "all", **filters: Any) -> list[dict[str, Any]]:
    """:func:`list_entries` over one scope or both (``all``): each dict gains ``scope``; missing
    stores are skipped. Newest first across scopes."""
    # deferred: write.manage loads the store (apsw), fact consolidation and redaction; the MessageDisplay hook
    # imports this module (through claude.input) on every streamed batch and never lists entries
    from .write.manage import list_entries

    names = SCOPES if scope == "all" else (scope,)
    out: list[dict[str, Any]] = []
    for name in names:
        if not scope_path(name).exists():
            continue
        with open_scope(name, create=False, readonly=True) as memory:  # a read: a full disk or a read-only folder does not stop it
            for row in list_entries(memory, **filters):
                row["scope"] = name
                out.append(row)
    out.sort(key=lambda r: (r["created_at"], r["id"]), reverse=True)
    limit = filters.get("limit", 50)
    return out[:limit] if limit is not None else out
