"""``crib setup HOST``: wire crib into an agent host for the current user, through the host's own
mechanism (Codex: hooks + MCP server in ``~/.codex``; Gemini: an extension; opencode: a plugin file
+ an ``mcp`` entry; Claude Code: user hooks + MCP server), and ``--undo`` it.

Each host is one module with ``apply(home, undo) -> Changes`` and ``wired(home) -> bool``; ``home``
is the user's home directory (``HOME``; each host's own variable — ``CODEX_HOME``,
``XDG_CONFIG_HOME``, ``GEMINI_CLI_HOME``, ``CLAUDE_CONFIG_DIR`` — is honoured as that host does).
Set-up is idempotent (a second run changes nothing), keeps the user's other settings, and every
command it installs runs this crib (``python -m crib_plugin``), so no PATH is needed.
"""

from __future__ import annotations

import importlib
from pathlib import Path
from types import ModuleType

from .files import Changes

HOSTS = ("claude", "codex", "gemini", "opencode")


def module(host: str) -> ModuleType:
    if host not in HOSTS:
        raise ValueError(f"unknown host {host!r}: one of {', '.join(HOSTS)}")
    return importlib.import_module(f"{__name__}.{host}")  # deferred: each host's set-up on its own


def setup(host: str, home: Path | None = None, undo: bool = False) -> Changes:
    """Wire (or unwire) crib in ``host`` for the user whose home is ``home`` (default ``~``)."""
    return module(host).apply(home or Path.home(), undo)  # type: ignore[no-any-return]


def wired(host: str, home: Path | None = None) -> bool:
    try:
        return bool(module(host).wired(home or Path.home()))
    except Exception:
        return False


__all__ = ["HOSTS", "Changes", "setup", "wired"]
