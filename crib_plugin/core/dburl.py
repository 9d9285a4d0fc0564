"""Where a store lives when it is a server, not a file: a ``postgresql://`` URL in place of a path.

``CRIB_DB`` (or ``db`` in a config file) and ``CRIB_GLOBAL_DB`` name a store either as a file path
or as a PostgreSQL URL. Code above the store passes the locator around as it passes a ``Path``
(``exists()``, ``parent``, ``name``, ``str()``), so :class:`ServerURL` answers those the way a path
would, and the store factory (:func:`crib_plugin.store.open_store`) chooses the backend by it.

``str()`` of a :class:`ServerURL` is the URL with its password masked: every message, ``crib
where``, ``crib config`` and ``crib doctor`` print the locator with ``str()``, so a credential never
reaches a terminal, a log or an agent's context. Only the store opens ``.url``, the real one.

A leaf: imports nothing from crib, so the config layer and ``store/`` can both use it. ``Path()``
cannot carry a URL (it folds ``//`` into ``/``), hence a class of its own.
"""

from __future__ import annotations

import re
from pathlib import Path
from urllib.parse import parse_qsl, urlencode, urlsplit, urlunsplit

SCHEMES = ("postgresql://", "postgres://")
MASK = "***"
_SECRET_PARAMS = {"password", "sslpassword"}
_KEYWORD_PASSWORD = re.compile(r"(password\s*=\s*)('(?:[^'\\]|\\.)*'|\S+)", re.IGNORECASE)


def is_server_url(target: object) -> bool:
    """Whether ``target`` names a server store (a ``postgresql://`` or ``postgres://`` URL)."""
    if isinstance(target, ServerURL):
        return True
    return isinstance(target, str) and target.strip().lower().startswith(SCHEMES)


def mask_url(url: str) -> str:
    """``url`` with its password (in the netloc or as a ``password=`` parameter) replaced by ``***``."""
    try:
        parts = urlsplit(url)
    except ValueError:
        return _KEYWORD_PASSWORD.sub(rf"\g<1>{MASK}", url)
    netloc = parts.netloc
    if "@" in netloc:
        userinfo, host = netloc.rsplit("@", 1)
        if ":" in userinfo:
            user, secret = userinfo.split(":", 1)
            userinfo = f"{user}:{MASK}" if secret else user
        netloc = f"{userinfo}@{host}"
    query = parts.query
    if query:
        pairs = [(k, MASK if k.lower() in _SECRET_PARAMS else v) for k, v in parse_qsl(query, keep_blank_values=True)]
        query = urlencode(pairs, safe="/:")
    return urlunsplit((parts.scheme, netloc, parts.path, query, parts.fragment))


class ServerURL:
    """A server store's locator, standing where a store's ``Path`` stands (see the module docstring)."""

    def __init__(self, url: str) -> None:
        self.url = url.strip()

    def __str__(self) -> str:
        return mask_url(self.url)

    def __repr__(self) -> str:
        return f"ServerURL({mask_url(self.url)!r})"

    def __eq__(self, other: object) -> bool:
        return isinstance(other, ServerURL) and other.url == self.url

    def __hash__(self) -> int:
        return hash(self.url)

    def exists(self) -> bool:
        """A server store is always "there": opening it says whether it answers and holds a crib store."""
        return True

    def is_dir(self) -> bool:
        return False

    def is_file(self) -> bool:
        return False

    def expanduser(self) -> "ServerURL":
        return self

    def resolve(self) -> "ServerURL":
        return self

    def absolute(self) -> "ServerURL":
        return self

    def is_absolute(self) -> bool:
        return True

    @property
    def name(self) -> str:
        """The database name (the URL's path), like a file's name."""
        return urlsplit(self.url).path.lstrip("/") or "postgres"

    @property
    def parent(self) -> Path:
        """Where the files that sit beside a file store go (session state, logs): the current
        folder's ``.state/crib``, as for a file store at its default place."""
        return Path(".state", "crib").absolute()


def as_location(target: str | Path | ServerURL) -> Path | ServerURL:
    """A ``ServerURL`` for a server URL, else the ``Path`` (``~`` expanded)."""
    if isinstance(target, ServerURL):
        return target
    if isinstance(target, str) and is_server_url(target):
        return ServerURL(target)
    return Path(target).expanduser()
