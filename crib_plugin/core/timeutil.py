"""Timestamps: crib stores every time as ISO 8601 UTC text, ``YYYY-MM-DDTHH:MM:SSZ``.

Text sorts chronologically in that form, so SQL can order and compare it directly.
"""

from __future__ import annotations

from datetime import datetime, timezone

from .config import fixed_now
from .isotime import ISO_FORMAT, parse_iso, to_iso  # noqa: F401 - the leaf; importable from here too


def now_iso() -> str:
    """The current time in crib's canonical form (``CRIB_NOW`` when set: see :func:`config.fixed_now`)."""
    fixed = fixed_now()
    if fixed is not None:
        return to_iso(parse_iso(fixed))
    return datetime.now(timezone.utc).strftime(ISO_FORMAT)


def normalise_iso(value: str | None) -> str:
    """Canonical form of an ISO string, or now when ``value`` is empty."""
    if value is None or value == "":
        return now_iso()
    return to_iso(parse_iso(value))


def day(value: str) -> str:
    """The ``YYYY-MM-DD`` part used in rendered blocks."""
    return value[:10]
