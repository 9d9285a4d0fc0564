"""Editing a host's own configuration files without losing the user's settings, and undoing it.

Every change crib makes is recognisable as crib's (a hook whose command runs ``crib_plugin hook``,
an MCP server named ``crib``, a file crib wrote, a block between crib's marker lines), so
``--undo`` removes exactly those and leaves everything else as it was. Writes are atomic.
"""

from __future__ import annotations

import json
import os
import shlex
import sys
import tempfile
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from ...core.errors import CribError

MARK = "crib_plugin"  # every command crib installs runs ``python -m crib_plugin``


@dataclass
class Changes:
    """What one ``crib setup`` run changed, one line each (printed for the user)."""

    lines: list[str] = field(default_factory=list)

    def add(self, what: str, path: Path) -> None:
        self.lines.append(f"{what}: {path}")


def crib_argv() -> list[str]:
    """The command that runs this crib: this interpreter with ``-m crib_plugin`` (no PATH needed)."""
    return [sys.executable, "-m", MARK]


def crib_command(*args: str) -> str:
    """:func:`crib_argv` plus ``args`` as one shell command line."""
    return shlex.join([*crib_argv(), *args])


def is_crib(value: Any) -> bool:
    """Whether a hook entry or server definition is one crib installed."""
    return MARK in json.dumps(value)


def read_json(path: Path) -> dict[str, Any]:
    """The JSON object in ``path`` (``{}`` when it does not exist); a ConfigError if it is not one."""
    try:
        text = path.read_text(encoding="utf-8")
    except FileNotFoundError:
        return {}
    try:
        data = json.loads(text) if text.strip() else {}
    except ValueError as exc:
        raise CribError(f"{path} is not valid JSON ({exc}); fix or move it, then run crib setup again") from exc
    if not isinstance(data, dict):
        raise CribError(f"{path} does not hold a JSON object; fix or move it, then run crib setup again")
    return data


def write_text(path: Path, text: str) -> bool:
    """Write ``text`` atomically; False (nothing written) when the file already holds it."""
    try:
        if path.read_text(encoding="utf-8") == text:
            return False
    except OSError:
        pass
    path.parent.mkdir(parents=True, exist_ok=True)
    fd, tmp = tempfile.mkstemp(prefix=f".{path.name}.", dir=str(path.parent))
    with os.fdopen(fd, "w", encoding="utf-8") as fh:
        fh.write(text)
    os.replace(tmp, path)
    return True


def write_json(path: Path, data: dict[str, Any]) -> bool:
    return write_text(path, json.dumps(data, indent=2, ensure_ascii=False) + "\n")


def set_hooks(hooks: dict[str, Any], wanted: dict[str, list[dict[str, Any]]]) -> dict[str, Any]:
    """``hooks`` (a host's ``{"Event": [group, …]}``) with crib's groups replaced by ``wanted``'s;
    other groups kept in order. An empty ``wanted`` removes crib's groups (and emptied events)."""
    out: dict[str, Any] = {}
    for event, groups in hooks.items():
        kept = [g for g in groups if not is_crib(g)] if isinstance(groups, list) else groups
        if kept != []:
            out[event] = kept
    for event, groups in wanted.items():
        out[event] = [*out.get(event, []), *groups]
    return out


def remove_file(path: Path, changes: Changes, what: str) -> None:
    try:
        path.unlink()
    except FileNotFoundError:
        return
    changes.add(f"removed {what}", path)
    try:
        path.parent.rmdir()  # only when crib's file was the last one there
    except OSError:
        pass


def replace_block(text: str, block: str | None, comment: str = "#") -> str:
    """``text`` with crib's marked block (between ``# >>> crib`` and ``# <<< crib``) replaced by
    ``block`` (appended when absent), or removed when ``block`` is None."""
    start, end = f"{comment} >>> crib (crib setup; crib setup --undo removes it)", f"{comment} <<< crib"
    lines = text.splitlines()
    if start in lines and end in lines[lines.index(start):]:
        i = lines.index(start)
        j = i + lines[i:].index(end)
        lines = lines[:i] + lines[j + 1:]
    kept = "\n".join(lines).rstrip("\n")
    if block is None:
        return kept + "\n" if kept else ""
    return (kept + "\n\n" if kept else "") + f"{start}\n{block.rstrip()}\n{end}\n"
