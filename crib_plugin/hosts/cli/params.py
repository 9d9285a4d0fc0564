"""The integer parameter of every ``crib`` command: an id, a limit, a budget, a count.

Python's ``int`` has no bound; SQLite's INTEGER (and PostgreSQL's ``bigint``) is 64-bit, so an id
of ``2**63`` reached the store as an ``OverflowError`` and a traceback. Every integer option and
argument of the command line is one of these types, which refuse a value out of range with
click's one-line usage error (exit 2) before any store is opened.
"""

from __future__ import annotations

from typing import Any

import click

from ...core.limits import MAX_INT


class StoreInt(click.ParamType):
    """An integer in ``[minimum, maximum]`` (``MAX_INT`` unless given): ``what`` names it in the error ("a memory id")."""

    name = "integer"

    def __init__(self, minimum: int, what: str, maximum: int = MAX_INT) -> None:
        self.minimum, self.what, self.maximum = minimum, what, maximum

    def convert(self, value: Any, param: click.Parameter | None, ctx: click.Context | None) -> int:
        if isinstance(value, int) and not isinstance(value, bool):
            number = value
        else:
            text = str(value).strip()
            if not text.lstrip("+-").isdigit() or len(text) > 25:  # 2**63 has 19 digits
                self.fail(f"{self.what} must be a whole number from {self.minimum} to {self.maximum}, got {text[:40]!r}", param, ctx)
            number = int(text)
        if not self.minimum <= number <= self.maximum:
            self.fail(f"{self.what} must be from {self.minimum} to {self.maximum}, got {str(number)[:40]}", param, ctx)
        return number


ENTRY_ID = StoreInt(1, "a memory id")
"""A memory's id (``show``, ``correct``, ``cue``, ``log --entry``)."""
COUNT = StoreInt(0, "the number")
"""A limit or a count, 0 allowed where a command gives it a meaning ("all", "none")."""
POSITIVE = StoreInt(1, "the number")
"""A limit or budget that must be at least 1."""
PORT = StoreInt(0, "the port", maximum=65535)
"""A TCP port (0: any free one)."""
