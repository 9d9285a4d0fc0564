"""ISO 8601 parsing and formatting, crib's canonical ``YYYY-MM-DDTHH:MM:SSZ``. A leaf (errors only):
``config`` validates ``CRIB_NOW`` with it, and ``timeutil`` (which reads ``CRIB_NOW`` through
``config``) builds on it, so neither imports the other in a circle.
"""

from __future__ import annotations

from datetime import datetime, timezone

from .errors import InputError

ISO_FORMAT = "%Y-%m-%dT%H:%M:%SZ"


def to_iso(moment: datetime) -> str:
    """A datetime in crib's canonical form; naive datetimes are taken as UTC."""
    if moment.tzinfo is None:
        moment = moment.replace(tzinfo=timezone.utc)
    return moment.astimezone(timezone.utc).strftime(ISO_FORMAT)


def parse_iso(value: str) -> datetime:
    """Parse an ISO 8601 date or datetime (``Z`` or offset or naive=UTC); InputError if it is not one
    (a number, a year past 9999, or a time that leaves years 1–9999 once converted to UTC)."""
    if not isinstance(value, str):
        raise InputError(f"not an ISO 8601 date: {value!r} (give a string such as 2024-05-01T12:00:00Z)")
    text = value.strip()
    if text.endswith("Z") or text.endswith("z"):
        text = text[:-1] + "+00:00"
    try:
        moment = datetime.fromisoformat(text)
    except ValueError as exc:
        raise InputError(f"not an ISO 8601 date: {value!r}") from exc
    if moment.tzinfo is None:
        moment = moment.replace(tzinfo=timezone.utc)
    try:
        return moment.astimezone(timezone.utc)
    except OverflowError:
        raise InputError(f"date out of range once converted to UTC: {value!r}") from None
