"""The bridge to detect-secrets: its plugins' denylist regexes as crib rules, cached on disk.

Importing detect-secrets costs ~185 ms (it imports ``requests``), so its regexes are kept as data in
``<cache_dir>/detect-secrets-rules.json`` stamped with the installed version; only the write pass
uses them.
"""

from __future__ import annotations

import importlib.util
import json
import os
import re
from functools import lru_cache
from pathlib import Path
from typing import Any

from ...core.config import cache_dir

#: The replacement for a secret of kind ``k``: ``MARKER.format(kind=k)``.
from .rules import Lazy, Rule

# Plugins left out: a public IPv4 address is not a secret; the private-key plugin only matches the
# header line (crib's own rule removes the whole block); entropy and keyword plugins have no
# denylist regexes (crib's keyword rules cover them).
_SKIPPED_PLUGINS = {"IPPublicDetector", "PrivateKeyDetector"}
# Plugins whose group 1 is only the token's prefix (``ghp``): the whole match is the secret.
_WHOLE_MATCH = {"GitHubTokenDetector", "GitLabTokenDetector"}


# Lowercase substrings, one of which each detect-secrets rule's matches contain (by kind); a rule
# whose kind is not listed runs on every line (those are the bounded, linear ones).
_PLUGIN_TRIGGERS: dict[str, tuple[str, ...]] = {
    "artifactory-credentials": ("akc", "ap"),
    "aws-access-key": ("a3t", "akia", "asia", "abia", "acca", "aws"),
    "azure-storage-account-access-key": ("accountkey",),
    "basic-auth-credentials": ("://",),
    "cloudant-credentials": ("key", "pw", "pass", "token", "cloudant"),
    "github-token": ("ghp_", "gho_", "ghu_", "ghs_", "ghr_"),
    "gitlab-token": ("gl", "gr1348941"),
    "ibm-cloud-iam-key": ("key", "pwd", "pass", "token"),
    "ibm-cos-hmac-credentials": ("secret",),
    "json-web-token": ("eyj",),
    "mailchimp-access-key": ("-us",),
    "npm-tokens": ("_authtoken",),
    "openai-token": ("t3blbkfj",),
    "pypi-token": ("pypi-age",),
    "sendgrid-api-key": ("sg.",),
    "slack-token": ("xox", "hooks.slack.com"),
    "softlayer-credentials": ("key", "pwd", "pass", "token", "softlayer"),
    "square-oauth-secret": ("sq0csp-",),
    "stripe-access-key": ("k_live_",),
}


def _slug(secret_type: str) -> str:
    return re.sub(r"[^a-z0-9]+", "-", secret_type.lower()).strip("-")


def _plugin_specs() -> list[dict[str, object]]:
    """The denylist regexes of every detect-secrets plugin, as plain data (imports detect-secrets)."""
    # deferred: the UserPromptSubmit hook would import it up front (1623 ms)
    from detect_secrets.core.plugins.util import get_mapping_from_secret_type_to_class

    specs: list[dict[str, object]] = []
    cls: Any
    for secret_type, cls in get_mapping_from_secret_type_to_class().items():
        if cls.__name__ in _SKIPPED_PLUGINS:
            continue
        if not hasattr(cls, "denylist"):  # entropy / keyword plugins have none
            continue
        denylist = cls().denylist
        for regex in denylist:
            group = 0 if cls.__name__ in _WHOLE_MATCH or regex.groups < 1 else 1
            specs.append({"kind": _slug(secret_type), "pattern": regex.pattern, "flags": int(regex.flags), "group": group})
    return specs


def _plugins_stamp() -> str | None:
    """Identify the installed detect-secrets (its plugin folder's path and mtime) without importing it."""
    try:
        spec = importlib.util.find_spec("detect_secrets")
    except (ImportError, ValueError):
        return None
    if spec is None or not spec.origin:
        return None
    plugins = Path(spec.origin).parent / "plugins"
    try:
        return f"{plugins}:{plugins.stat().st_mtime_ns}"
    except OSError:
        return None


@lru_cache(maxsize=1)
def plugin_rules() -> tuple[Rule, ...]:
    """detect-secrets' rules, or ``()`` when it is not installed (crib's own rules still apply).

    The regexes are kept as data in ``<cache_dir>/detect-secrets-rules.json`` with a stamp of the
    installed version, so a ``crib write`` compiles them without importing detect-secrets (and
    ``requests`` with it) every time."""
    stamp = _plugins_stamp()
    if stamp is None:
        return ()

    path = cache_dir() / "detect-secrets-rules.json"
    specs: list[dict[str, object]] | None = None
    try:
        cached = json.loads(path.read_text(encoding="utf-8"))
        if cached.get("stamp") == stamp:
            specs = cached["rules"]
    except (OSError, ValueError, KeyError, AttributeError):
        specs = None
    if specs is None:
        try:
            specs = [spec for spec in _plugin_specs() if _compiles(spec)]  # checked once, when cached
        except Exception:  # noqa: BLE001 -- a broken detect-secrets must not stop a write: crib's rules run
            return ()
        try:
            path.parent.mkdir(parents=True, exist_ok=True)
            tmp = path.with_suffix(f".{os.getpid()}.tmp")
            tmp.write_text(json.dumps({"stamp": stamp, "rules": specs}), encoding="utf-8")
            os.replace(tmp, path)
        except OSError:
            pass
    # Not compiled here: a rule is compiled when a text holds one of its triggers (Lazy), so a
    # write pays for the few its text can set off (compiling all 37 cost ≈ 10 ms a process).
    rules: list[Rule] = []
    for spec in specs:
        try:
            kind = str(spec["kind"])
            rules.append(Rule(kind, Lazy(str(spec["pattern"]), int(spec["flags"])),  # type: ignore[call-overload]
                              int(spec["group"]), triggers=_PLUGIN_TRIGGERS.get(kind, ())))  # type: ignore[call-overload]
        except (KeyError, TypeError, ValueError):
            continue
    return tuple(rules)


def _compiles(spec: dict[str, object]) -> bool:
    try:
        re.compile(str(spec["pattern"]), int(spec["flags"]))  # type: ignore[call-overload]
    except (re.error, KeyError, TypeError, ValueError):
        return False
    return True
