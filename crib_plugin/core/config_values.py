"""The value side of crib's settings: accepted spellings, one parser per type, and the
:class:`Spec` / :func:`setting` declaration helpers :class:`crib_plugin.core.config.Settings` is built from.

A parser turns the raw string (an environment variable, or a TOML value rendered as one) into a
value, or raises :class:`Invalid` whose message says what is accepted. Standard library only:
``isotime`` is imported lazily, by the one parser that needs it.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Callable, Mapping

from .dburl import as_location
from .errors import InputError
from .isotime import parse_iso

DEFAULT_DB = Path(".state") / "crib" / "crib.db"
DEFAULT_BUDGET = 8000

# Accepted spellings for CRIB_CHANNEL, mapped to the channel names crib registers.
CHANNEL_ALIASES = {
    "triples": "facts",
    "triple": "facts",
    "facts": "facts",
    "fact": "facts",
    "fts": "fts",
    "fulltext": "fts",
    "text": "fts",
    "vector": "vector",
    "vectors": "vector",
    "vec": "vector",
}

#: The one spelling of true and false every boolean setting accepts.
TRUE_WORDS = ("1", "true", "yes", "on")
FALSE_WORDS = ("0", "false", "no", "off")

# Accepted spellings for CRIB_PARALLEL.
PARALLEL_MODES = {"auto": "auto", **{w: "on" for w in TRUE_WORDS}, **{w: "off" for w in FALSE_WORDS}}
WRITE_VECTOR_MODES = {"auto": "auto", "inline": "inline", "background": "background"}
WRITE_MODEL_MODES = {"background": "background", "inline": "inline"}
LOG_PROMPT_MODES = {"full": "full", "hash": "hash", "sha256": "hash", "hashed": "hash",
                    "none": "none", "off": "none", "no": "none"}


# -- parsers: str -> value, ValueError(accepted values) when malformed ----------------------------


class Invalid(ValueError):
    """A malformed value; the message says what is accepted."""


def text(raw: str) -> str:
    return raw


def lower(raw: str) -> str:
    return raw.lower()


def path(raw: str) -> Path:
    """A file path (``~`` expanded) — or, for a store, a ``postgresql://`` URL kept whole as a
    :class:`~crib_plugin.core.dburl.ServerURL` (which stands where a store's ``Path`` stands)."""
    return as_location(raw)  # type: ignore[return-value]


def boolean(raw: str) -> bool:
    """The one boolean parser: 1/true/yes/on and 0/false/no/off, any case."""
    word = raw.lower()
    if word in TRUE_WORDS:
        return True
    if word in FALSE_WORDS:
        return False
    raise Invalid(f"one of {', '.join(TRUE_WORDS + FALSE_WORDS)}")


def choice(mapping: Mapping[str, str]) -> Callable[[str], str]:
    """A parser accepting the keys of ``mapping`` (any case) and returning their values."""

    def parse(raw: str) -> str:
        try:
            return mapping[raw.lower()]
        except KeyError:
            raise Invalid(f"one of {', '.join(mapping)}") from None

    return parse


def number(kind: type, minimum: float | None = None, *, strict: bool = False) -> Callable[[str], Any]:
    """A parser for ``int``/``float`` values at least ``minimum`` (greater than it when ``strict``)."""
    what = "an integer" if kind is int else "a number"
    bound = "" if minimum is None else f" {'>' if strict else '>='} {minimum:g}"

    def parse(raw: str) -> Any:
        try:
            value = kind(raw)
        except ValueError:
            raise Invalid(f"{what}{bound}") from None
        if value != value or value in (float("inf"), float("-inf")):
            raise Invalid(f"a finite {what[2:]}{bound}")
        if minimum is not None and (value < minimum or (strict and value == minimum)):
            raise Invalid(f"{what}{bound}")
        return value

    return parse


def parse_channels(value: str | None) -> list[str] | None:
    """Turn ``CRIB_CHANNEL`` into channel names; ``None`` means "every registered channel"."""
    if not value:
        return None
    names: list[str] = []
    for part in value.replace(" ", ",").split(","):
        part = part.strip().lower()
        if part:
            names.append(CHANNEL_ALIASES.get(part, part))
    return names or None


def iso_moment(raw: str) -> str:
    """An ISO 8601 date or time, kept as written (``CRIB_NOW``)."""
    try:
        parse_iso(raw)
    except InputError:
        raise Invalid("an ISO 8601 date or time") from None
    return raw


def names(raw: str) -> list[str]:
    """A comma list of names (empty: none)."""
    return [n.strip() for n in raw.split(",") if n.strip()]


# -- declarations -------------------------------------------------------------------------------


@dataclass(frozen=True)
class Spec:
    """How one setting is read and documented."""

    var: str
    parse: Callable[[str], Any]
    doc: str
    shown_default: str  # the Default column of docs/configuration.md
    empty_means: str | None = None  # raw value an empty variable stands for (None: empty = unset)

    @property
    def key(self) -> str:
        """The setting's key in a TOML file."""
        name = self.var.lower()
        return name[len("crib_"):] if name.startswith("crib_") else name


def setting(var: str, parse: Callable[[str], Any], default: Any, doc: str, *,
            shown: str | None = None, empty_means: str | None = None) -> Any:
    """Declare a :class:`Settings` field read from ``var`` (and the TOML key derived from it)."""
    if shown is None:
        shown = "—" if default is None else f"`{default}`"
    spec = Spec(var, parse, doc, shown, empty_means)
    if isinstance(default, list):
        return field(default_factory=lambda: list(default), metadata={"spec": spec})
    return field(default=default, metadata={"spec": spec})
