"""The write path's first step: turn raw agent text into clean entry fields.

- ``type=WORD`` at the start picks the entry type (note, decision, correction, error, preference, or a
  type a plugin registered — see :mod:`crib_plugin.entry_types`);
- injected memory blocks are stripped, so recalled memory is never stored again as new memory;
- secrets (API keys, tokens, passwords, private keys, …) are redacted before anything is stored
  (:mod:`crib_plugin.redact`).
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from typing import Iterable

from .errors import InputError
from .records import ENTRY_TYPES

_TYPE_PREFIX = re.compile(r"^\s*type=([A-Za-z][A-Za-z0-9_-]*)\s*", re.IGNORECASE)


@dataclass
class ParsedWrite:
    type: str
    content: str


def redact_secrets(text: str) -> str:
    """Replace credentials with ``[REDACTED:KIND]``, keeping the words around them
    (:func:`crib_plugin.redact.redact`: crib's rules plus detect-secrets' plugins)."""
    from .redact import redact

    return redact(text)


def validate_type(value: str, known: Iterable[str] | None = None) -> str:
    """``value`` normalised if it names a known type (``known``: a registry's names; default the
    built-ins); InputError otherwise."""
    from .entry_types import check_name

    return check_name(value, ENTRY_TYPES if known is None else known)


def clean_content(text: str) -> str:
    """Strip injected memory blocks and secrets; trim. May return ``""``."""
    from .scrub import strip_memory_blocks

    return redact_secrets(strip_memory_blocks(text)).strip()


def parse_write(text: str, type: str | None = None, known: Iterable[str] | None = None) -> ParsedWrite:
    """Split an optional ``type=`` prefix from ``text`` and clean the rest.

    An explicit ``type`` argument wins over the prefix. Raises InputError for empty content or
    an unknown type.
    """
    from .limits import check_entry

    check_entry(text.strip() if isinstance(text, str) else text)  # before any regex runs: bounded cost
    match = _TYPE_PREFIX.match(text)
    prefix_type = None
    if match:
        prefix_type = match.group(1)
        text = text[match.end():]
    entry_type = validate_type(type or prefix_type or "note", known)
    content = clean_content(text)
    if not content:
        raise InputError("nothing to write: the text is empty (after removing memory blocks)")
    return ParsedWrite(type=entry_type, content=content)
