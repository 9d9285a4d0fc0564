"""The kinds of memory crib stores — defined once, here.

Every place that explains or uses the types reads this table: ``crib write --help``, the MCP
``remember`` tool's description, the Claude Code skill (``skills/crib-memory/SKILL.md``, whose type
table is checked against this one by ``tests/test_entry_types.py``), validation on the write path,
and SessionStart, which re-injects the *standing* types after a session starts, resumes, is cleared
or compacted.

A plugin adds its own types through the ``register_types`` hook (see
:func:`crib_plugin.plugins.hookspecs.register_types`); the built-ins are registered ``trylast`` from
:mod:`crib_plugin.plugins.default_plugins.hooks`, so a plugin may also redefine a built-in's meaning.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from typing import Iterable, Mapping

from .errors import ConfigError, InputError

_NAME = re.compile(r"^[a-z][a-z0-9_-]{0,31}$")


@dataclass(frozen=True)
class EntryType:
    """One kind of memory: its name, what it means in one line, and whether it is standing.

    ``standing`` types are re-injected at every SessionStart (a preference holds until changed; a
    decision or correction should not be forgotten after ``/compact``); the others come back only
    when a prompt makes them relevant.
    """

    name: str
    meaning: str
    standing: bool = False

    def __post_init__(self) -> None:
        if not isinstance(self.name, str) or not _NAME.match(self.name):
            raise ConfigError(f"entry type name {self.name!r} must be lowercase letters, digits, '-' or '_' (at most 32)")
        if not isinstance(self.meaning, str) or not self.meaning.strip() or "\n" in self.meaning.strip():
            raise ConfigError(f"entry type {self.name!r} needs a one-line meaning")


BUILTIN_TYPES: tuple[EntryType, ...] = (
    EntryType("note", "a durable fact about the project or its environment worth knowing next time"),
    EntryType("decision", "a choice that was made, with the reason it was made", standing=True),
    EntryType("error", "an error that was hit, what caused it and the fix that worked"),
    EntryType("correction", "an earlier belief or memory that turned out wrong, and what is true instead", standing=True),
    EntryType("preference", "how the user wants things done (style, tools, workflow); holds until they change it", standing=True),
)
"""crib's own types, in the order they are explained. ``note`` is the default."""

DEFAULT_TYPE = "note"


def builtin_names() -> tuple[str, ...]:
    """The names of crib's own types (``note``, ``decision``, ``error``, ``correction``, ``preference``)."""
    return tuple(t.name for t in BUILTIN_TYPES)


def as_table(types: Mapping[str, EntryType] | None = None) -> dict[str, EntryType]:
    """``types`` (a registry's), or the built-ins when none are given, keyed by name."""
    if types:
        return dict(types)
    return {t.name: t for t in BUILTIN_TYPES}


def standing_names(types: Mapping[str, EntryType] | None = None) -> tuple[str, ...]:
    """Names of the types SessionStart re-injects."""
    return tuple(name for name, t in as_table(types).items() if t.standing)


def describe(types: Mapping[str, EntryType] | None = None, *, bullet: str = "- ") -> str:
    """One line per type, ``name: meaning`` — the text the CLI help and the MCP tool show."""
    return "\n".join(f"{bullet}{t.name}: {t.meaning}" for t in as_table(types).values())


def check_name(value: str, known: Iterable[str]) -> str:
    """``value`` normalised (trimmed, lowercase) if it names a known type; ``InputError`` otherwise."""
    name = value.strip().lower() if isinstance(value, str) else ""
    names = list(known)
    if name not in names:
        raise InputError(f"unknown entry type {value!r} (use one of: {', '.join(names)})")
    return name
