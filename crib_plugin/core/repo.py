"""The repository a command runs in, found by reading ``.git`` files directly (not by running
``git``: this is on the per-prompt path, and must work where git is not installed), and the
project store's default path at its root. A leaf (``store.dirs`` only), so that ``config`` can
default ``CRIB_DB`` without importing ``scopes``, which opens stores above it.

The answer is what ``git rev-parse --git-common-dir`` gives, one level up: a worktree's ``.git``
file names its private git directory, whose ``commondir`` names the main one.
"""

from __future__ import annotations

import os
from pathlib import Path

from .dirs import STATE_DIR

DB_NAME = "crib.db"


def _read_gitdir(dot_git: Path) -> Path | None:
    """The git directory a ``.git`` file points to (``gitdir: …``), absolute."""
    try:
        text = dot_git.read_text(encoding="utf-8").strip()
    except (OSError, UnicodeDecodeError):
        return None
    if not text.startswith("gitdir:"):
        return None
    target = Path(text[len("gitdir:"):].strip())
    return target if target.is_absolute() else (dot_git.parent / target)


def _common_root(gitdir: Path) -> Path | None:
    """The main repository's work tree for a worktree's (or submodule's) git directory."""
    commondir = gitdir / "commondir"
    if commondir.is_file():  # a linked worktree: .git/worktrees/<name>/commondir → ../..
        try:
            common = Path(commondir.read_text(encoding="utf-8").strip())
        except (OSError, UnicodeDecodeError):
            return None
        common = common if common.is_absolute() else gitdir / common
        common = Path(os.path.normpath(common))
        return common.parent if common.name == ".git" else None
    return None


def repo_root(cwd: Path | None = None) -> Path | None:
    """The root of the main work tree of the repository holding ``cwd``; ``None`` outside git.

    Every worktree of one repository answers the main work tree's root, so they share one store.
    A submodule (whose ``.git`` file points into the parent's ``.git/modules``) is its own root.
    """
    start = Path(os.path.abspath(cwd or Path.cwd()))
    for folder in (start, *start.parents):
        dot_git = folder / ".git"
        if dot_git.is_dir():
            return folder
        if dot_git.is_file():
            gitdir = _read_gitdir(dot_git)
            if gitdir is None:
                return folder
            return _common_root(gitdir) or folder
    return None


def repo_store(cwd: Path | None = None) -> Path:
    """``<repository root or cwd>/.state/crib/crib.db``: the project store when nothing overrides it."""
    base = repo_root(cwd) or Path(os.path.abspath(cwd or Path.cwd()))
    return base / STATE_DIR / DB_NAME
