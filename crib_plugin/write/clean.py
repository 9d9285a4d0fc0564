"""The write path's first step: turn raw agent text into clean entry fields.

- ``type=WORD`` at the start picks the entry type (note, decision, correction, error, preference, or a
  type a plugin registered — see :mod:`crib_plugin.core.entry_types`);
- injected memory blocks are stripped, so recalled memory is never stored again as new memory;
- secrets (API keys, tokens, passwords, private keys, …) are redacted before anything is stored
  (:mod:`crib_plugin.text.redact`);
- a recall cue (metadata ``when``, :mod:`crib_plugin.core.cues`) is put on one line, bounded and redacted.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from typing import Any, Iterable

from ..core.cues import CUE_KEY, MAX_CUE_CHARS
from ..core.entry_types import check_name
from ..core.errors import InputError
from ..core.limits import check_entry, check_metadata
from ..core.records import ENTRY_TYPES
from ..text.redact import redact
from ..text.scrub import strip_memory_blocks

_TYPE_PREFIX = re.compile(r"^\s*type=([A-Za-z][A-Za-z0-9_-]*)\s*", re.IGNORECASE)


@dataclass
class ParsedWrite:
    type: str
    content: str


def redact_secrets(text: str) -> str:
    """Replace credentials with ``[REDACTED:KIND]``, keeping the words around them
    (:func:`crib_plugin.text.redact.redact`: crib's rules plus detect-secrets' plugins)."""
    return redact(text)


def validate_type(value: str, known: Iterable[str] | None = None) -> str:
    """``value`` normalised if it names a known type (``known``: a registry's names; default the
    built-ins); InputError otherwise."""
    return check_name(value, ENTRY_TYPES if known is None else known)


def clean_content(text: str) -> str:
    """Strip injected memory blocks and secrets; trim. May return ``""``."""
    return redact_secrets(strip_memory_blocks(text)).strip()


def parse_write(text: str, type: str | None = None, known: Iterable[str] | None = None) -> ParsedWrite:
    """Split an optional ``type=`` prefix from ``text`` and clean the rest.

    An explicit ``type`` argument wins over the prefix. Raises InputError for empty content or
    an unknown type.
    """
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


def clean_cue(value: Any) -> str | None:
    """A cue as it is stored: text on one line, secrets redacted, at most :data:`MAX_CUE_CHARS`;
    ``None`` for an empty one. Anything else is an ``InputError`` (nothing is stored)."""
    if value is None:
        return None
    if not isinstance(value, str):
        raise InputError(f"'{CUE_KEY}' must be text: the situations in which this memory matters")
    text = " ".join(value.split())
    if len(text) > MAX_CUE_CHARS:
        raise InputError(f"'{CUE_KEY}' of {len(text):,} characters exceeds the {MAX_CUE_CHARS}-character limit (one line of situations)")
    if not text:
        return None
    return redact_secrets(text)  # the write path's rules: a cue is stored text like any other


def with_clean_cue(metadata: dict[str, Any]) -> dict[str, Any]:
    """``metadata`` validated (:func:`crib_plugin.core.limits.check_metadata`) with its cue cleaned;
    the cue key is dropped when the cue is empty. The caller's dict is not changed."""
    check_metadata(metadata)
    if CUE_KEY not in metadata:
        return metadata
    cleaned = dict(metadata)
    cue = clean_cue(cleaned.pop(CUE_KEY))
    if cue:
        cleaned[CUE_KEY] = cue
    return cleaned
