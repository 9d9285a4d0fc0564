"""The write path's first step: turn raw agent text into clean entry fields.

- ``type=WORD`` at the start picks the entry type (note, decision, correction, error);
- injected memory blocks are stripped, so recalled memory is never stored again as new memory;
- obvious secrets (API keys, tokens, private keys) are redacted before anything is stored.
"""

from __future__ import annotations

import re
from dataclasses import dataclass

from .errors import InputError
from .records import ENTRY_TYPES

_TYPE_PREFIX = re.compile(r"^\s*type=([A-Za-z_-]+)\s*", re.IGNORECASE)

# Conservative patterns: a false positive costs a few characters, a false negative leaks a key.
_SECRETS = [
    # Each BEGIN scans no further than the next BEGIN: unclosed BEGINs were quadratic (5.8 s at 100k).
    re.compile(r"-----BEGIN [A-Z ]*PRIVATE KEY-----(?:(?!-----BEGIN )[\s\S])*?-----END [A-Z ]*PRIVATE KEY-----"),
    re.compile(r"\b(sk-[A-Za-z0-9_-]{20,})"),  # OpenAI / Anthropic style keys
    re.compile(r"\b(gh[pousr]_[A-Za-z0-9]{30,})"),  # GitHub tokens
    re.compile(r"\b(AKIA[0-9A-Z]{16})\b"),  # AWS access key id
    re.compile(r"\b(xox[abprs]-[A-Za-z0-9-]{10,})"),  # Slack tokens
    re.compile(r"(?i)\b((?:api[_-]?key|secret|token|password|passwd)\s*[=:]\s*)(['\"]?)([^\s'\"]{8,})\2"),
]


@dataclass
class ParsedWrite:
    type: str
    content: str


def redact_secrets(text: str) -> str:
    """Replace credentials with ``[REDACTED]``, keeping the words around them."""
    for pattern in _SECRETS:
        if pattern.groups >= 3:
            text = pattern.sub(lambda m: f"{m.group(1)}{m.group(2)}[REDACTED]{m.group(2)}", text)
        else:
            text = pattern.sub("[REDACTED]", text)
    return text


def validate_type(value: str) -> str:
    value = value.strip().lower()
    if value not in ENTRY_TYPES:
        raise InputError(f"unknown entry type {value!r} (use one of: {', '.join(ENTRY_TYPES)})")
    return value


def clean_content(text: str) -> str:
    """Strip injected memory blocks and secrets; trim. May return ``""``."""
    from .scrub import strip_memory_blocks

    return redact_secrets(strip_memory_blocks(text)).strip()


def parse_write(text: str, type: str | None = None) -> ParsedWrite:
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
    entry_type = validate_type(type or prefix_type or "note")
    content = clean_content(text)
    if not content:
        raise InputError("nothing to write: the text is empty (after removing memory blocks)")
    return ParsedWrite(type=entry_type, content=content)
