"""Timestamps: crib stores every time as ISO 8601 UTC text, ``YYYY-MM-DDTHH:MM:SSZ``.

Text sorts chronologically in that form, so SQL can order and compare it directly.
"""

from __future__ import annotations

from datetime import datetime, timedelta, timezone

from .config import fixed_now
from .errors import InputError
from .isotime import ISO_FORMAT, parse_iso, to_iso  # noqa: F401 - the leaf; importable from here too

FUTURE_SKEW = timedelta(days=1)
"""How far past now a memory's date may lie (clock skew, a naive local time read as UTC): the block
tells the model that the newer of two memories is more likely current, so a date of 9999-12-31
would make a memory win every disagreement for ever."""


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


def created_at_iso(value: str | None) -> str:
    """A memory's date (:func:`normalise_iso`), refused (InputError) when it lies more than
    :data:`FUTURE_SKEW` past now (``CRIB_NOW`` when set)."""
    created = normalise_iso(value)
    limit = parse_iso(now_iso()) + FUTURE_SKEW
    if parse_iso(created) > limit:
        raise InputError(f"created_at {value!r} is in the future (later than {to_iso(limit)}); "
                         "a memory is dated when it was learned")
    return created


def day(value: str) -> str:
    """The ``YYYY-MM-DD`` part used in rendered blocks."""
    return value[:10]
