"""Secret redaction: credentials never reach the store, and never leave it verbatim.

Two passes use this module:

* **write** (:func:`redact`, called by :func:`crib_plugin.write.clean_content`, so every
  ``crib write``, ``crib import`` and ``Memory.write``): crib's own rules (:data:`CRIB_RULES`)
  *plus* the denylist regexes of `detect-secrets <https://github.com/Yelp/detect-secrets>`_'
  plugins (AWS, Stripe, Slack, SendGrid, Twilio, Discord, Mailchimp, …), a maintained detector
  whose pattern set grows with its releases;
* **render** (:func:`redact_for_render`, called by :mod:`crib_plugin.render` on every entry and
  fact it shows, and by ``crib search``): crib's own rules only.  Text stored
  before redaction existed, or by an older crib, is still never re-injected verbatim.  The
  detect-secrets rules stay off this per-prompt path because importing detect-secrets costs
  ~185 ms (it imports ``requests``) against a ~230 ms cold ``crib retrieve``.

A secret is replaced by ``[REDACTED:KIND]``, ``KIND`` naming what was removed
(``[REDACTED:aws-secret-key]``, ``[REDACTED:github-token]``, ``[REDACTED:password]``); the words
around it stay, so the memory keeps its meaning ("the staging DB password is [REDACTED:password]").
Redaction is idempotent: a marker is never taken for a secret.

Cost: a rule runs (and is compiled, once per process) only when a literal its matches need is in
the text; each token rule is anchored at the start of a run (a look-behind forbids starting inside a
run of token characters) and every repetition is bounded, so a pass is linear in the text with a
bounded constant; the keyword rules are tried only where a keyword sits (one anchored match each);
detect-secrets' regexes, written for line-by-line scanning, only run on lines of at most
:data:`MAX_LINE_FOR_PLUGINS` characters (longer lines are covered by crib's own rules).

``CRIB_REDACT=0`` turns both passes off (see :func:`crib_plugin.config.redact_enabled`).
"""

from __future__ import annotations

import json
import math
import os
import re
from collections.abc import Callable, Iterable, Iterator, Sequence
from dataclasses import dataclass
from functools import lru_cache
from pathlib import Path
from typing import Any

__all__ = ["CRIB_RULES", "MARKER", "Rule", "find_secrets", "marker", "redact", "redact_for_render"]

#: The replacement for a secret of kind ``k``: ``MARKER.format(kind=k)``.
MARKER = "[REDACTED:{kind}]"

#: detect-secrets' regexes only run on lines up to this length (they were not written for megabytes).
MAX_LINE_FOR_PLUGINS = 1024

_TOK = r"A-Za-z0-9_\-"  # characters of a token run: a rule may not start inside one
_B = rf"(?<![{_TOK}])"  # "starts a run"
_E = rf"(?![{_TOK}])"  # "ends a run"


class _Lazy:
    """A regex compiled on first use: a process only pays for the rules its texts can trigger."""

    __slots__ = ("_compiled", "flags", "pattern")

    def __init__(self, pattern: str, flags: int = 0) -> None:
        self.pattern, self.flags = pattern, flags
        self._compiled: re.Pattern[str] | None = None

    def compiled(self) -> re.Pattern[str]:
        if self._compiled is None:
            self._compiled = re.compile(self.pattern, self.flags)
        return self._compiled

    def finditer(self, text: str) -> Iterator[re.Match[str]]:
        return self.compiled().finditer(text)


@dataclass(frozen=True)
class Rule:
    """One kind of secret: ``pattern`` finds it, ``group`` is the part replaced (0: the whole
    match), and ``accept`` (optional) vetoes a match on the replaced text, for rules whose regex
    alone would also hit harmless look-alikes."""

    kind: str
    pattern: _Lazy
    group: int | str = 0
    accept: Callable[[re.Match[str], str], bool] | None = None
    triggers: tuple[str, ...] = ()  # lowercase substrings one of which every match contains

    def may_match(self, lowered: str) -> bool:
        """Cheap prefilter: a rule whose triggers are all absent cannot match (and is never compiled)."""
        return not self.triggers or any(t in lowered for t in self.triggers)


def marker(kind: str) -> str:
    """The text that replaces a secret of ``kind``."""
    return MARKER.format(kind=kind)


# ----------------------------------------------------------------------- value predicates


def _entropy(value: str) -> float:
    """Shannon entropy in bits per character."""
    counts: dict[str, int] = {}
    for ch in value:
        counts[ch] = counts.get(ch, 0) + 1
    n = len(value)
    return -sum(c / n * math.log2(c / n) for c in counts.values())


_REFERENCE = re.compile(
    r"""^(?:\$|%|<|\{|\[REDACTED|\*{3}|x{3,}$|process\.env|ENV\[|getenv|vault:|[A-Za-z_]\w{0,60}\(|"""
    r"""(?:self|this|cls|os|env|config|conf|cfg|settings|request|req|args|opts|options|params|secrets|"""
    r"""ctx|context|app|creds|credentials)\.|"""
    r"""[~./][\w./-]*$|(?:true|false|null|none|nil|undefined|empty|required|optional|changeme|redacted)$)""",
    re.IGNORECASE,
)


def _classes(value: str) -> int:
    return (
        any(c.islower() for c in value)
        + any(c.isupper() for c in value)
        + any(c.isdigit() for c in value)
        + any(not c.isalnum() for c in value)
    )


def looks_secret(value: str) -> bool:
    """A value after a secret-ish keyword in prose ("the password is …") that reads as a secret:
    not a reference (``$VAR``, ``os.environ[…]``, a path) and not an ordinary word or number —
    it mixes at least two character classes beyond a capital initial, or is long and random."""
    value = value.strip("\"'`.,;)(")
    if len(value) < 6 or _REFERENCE.match(value):
        return False
    if value.isdigit() or re.fullmatch(r"[A-Za-z][a-z]*", value):
        return False
    if re.fullmatch(r"v?\d+(?:\.\d+)+(?:[-+.][\w.]+)?", value):  # a version, not a secret
        return False
    return _classes(value) >= 2 or (len(value) >= 20 and _entropy(value) >= 3.5)


def _assigned_value(value: str) -> bool:
    """A value assigned to a secret-ish key in code or config (``DB_PASSWORD=…``, ``token: …``):
    anything that is not a reference or placeholder and not a plain short lowercase word."""
    value = value.strip("\"'`")
    if len(value) < 4 or _REFERENCE.match(value) or (value.isdigit() and len(value) < 8):
        return False
    return not re.fullmatch(r"[a-z]{1,12}", value)


def _random_segment(value: str) -> bool:
    """An ``sk-…`` key holds a long random run (letters and digits); ``sk-learn-compatible-v2`` is
    made of short words."""
    return any(
        len(seg) >= 16 and any(c.isdigit() for c in seg) and any(c.isalpha() for c in seg)
        for seg in re.split(r"[-_]", value[3:])
    )


# ----------------------------------------------------------------------------- crib's rules

_KEYWORD = (
    r"(?P<kw>(?i:pass(?:word|wd|phrase)?|pwd|secret|token|api[_-]?key|apikey|access[_-]?key|auth[_-]?key"
    r"|private[_-]?key|client[_-]?secret|credentials?|contrase(?:n|ñ)a))"
)
# A key such as DB_PASSWORD, aws_secret_access_key, stripeApiKey, DBPassword: the keyword with
# separator- or camelCase-joined affixes (never a longer word: tokenizer, passport, secretary).
# Every repetition is bounded and starts at a separator or a capital, so matching is unambiguous.
_KEY = (
    r"(?<![A-Za-z0-9_.])(?:[A-Za-z0-9]{1,30}+[_.\-]){0,3}(?:[a-z0-9]{1,30}+(?=[A-Z])|[A-Z0-9]{1,12}(?=[A-Z]))?"
    rf"{_KEYWORD}(?P<suffix>(?:[_.\-][A-Za-z0-9]{{1,30}}|[A-Z][a-z0-9]{{0,29}}){{0,3}})(?![A-Za-z0-9_])"
)
_QUOTED_OR_BARE = r"""(?:"[^"\n]{1,200}"|'[^'\n]{1,200}'|`[^`\n]{1,200}`|[^\s"'`<>]{1,200}(?<![.,;:)]))"""

# A key ending in one of these words names something about a secret, not the secret itself.
_META_SUFFIXES = frozenset({
    "count", "limit", "budget", "len", "length", "size", "ttl", "expiry", "expires", "expiration",
    "url", "uri", "endpoint", "file", "path", "dir", "name", "type", "id", "header", "field", "env",
    "var", "policy", "reset", "prefix", "format", "hint", "rotation", "manager", "store",
    "provider", "strength", "min", "max", "lifetime", "timeout", "scope", "scopes", "version",
})


_KEYWORD_KIND = "keyword"  # marker kind: "password" for password-ish keys, else "secret"


def _keyword_kind(m: re.Match[str]) -> str:
    kw = m.group("kw").lower()
    return "password" if kw.startswith(("pass", "pwd", "contrase")) else "secret"


def _names_the_secret(m: re.Match[str]) -> bool:
    """False for keys such as ``token_count`` or ``PASSWORD_FILE`` (about a secret, not one), and
    for a key inside a URL (``https://x-access-token:…@host``: the URL rule handles userinfo)."""
    before = m.string[max(0, m.start() - 64) : m.start()]
    if "://" in before.rsplit(None, 1)[-1] if before.strip() else False:
        return False
    words = re.findall(r"[A-Z]?[a-z0-9]+|[A-Z]+(?![a-z])", m.group("suffix") or "")
    return not words or words[-1].lower() not in _META_SUFFIXES


def _c(pattern: str, flags: int = 0) -> _Lazy:
    return _Lazy(pattern, flags)


#: crib's own rules, most specific first (on overlap the longer match wins, then the earlier rule).
CRIB_RULES: tuple[Rule, ...] = (
    Rule("private-key", _c(
        r"-----BEGIN[A-Z0-9 ]{0,40} PRIVATE KEY(?: BLOCK)?-----"
        r"(?:(?:(?!-----)[\s\S]){0,16384}+-----END[A-Z0-9 ]{0,40} PRIVATE KEY(?: BLOCK)?-----"
        r"|(?:[ \t]*\r?\n?[ \t]*(?:[A-Za-z-]{1,40}:[^\n]{0,200}|[A-Za-z0-9+/=]{1,200})){0,200})")),
    Rule("putty-private-key", _c(r"PuTTY-User-Key-File-\d: [\s\S]{0,8192}?Private-MAC: [0-9a-f]{1,128}")),
    Rule("anthropic-api-key", _c(rf"{_B}sk-ant-(?:api|admin|sid)\d\d-[A-Za-z0-9_\-]{{20,200}}{_E}")),
    Rule("openai-api-key", _c(rf"{_B}sk-(?:proj-|svcacct-|admin-|None-)?[A-Za-z0-9_\-]{{20,200}}{_E}"),
         accept=lambda m, v: _random_segment(v)),
    Rule("aws-access-key-id", _c(r"(?<![A-Z0-9])(?:A3T[A-Z0-9]|AKIA|ASIA|ABIA|ACCA)[A-Z0-9]{16}(?![A-Z0-9])")),
    Rule("aws-secret-key", _c(
        r"(?i:aws)[\w .-]{0,30}?(?i:secret)[\w .'\"-]{0,40}?(?:[:=]|\bis\b)?\s{0,5}['\"]?"
        r"(?<![A-Za-z0-9/+])([A-Za-z0-9/+]{40})(?![A-Za-z0-9/+=])"), group=1),
    Rule("github-pat", _c(rf"{_B}github_pat_[A-Za-z0-9_]{{22,255}}{_E}")),
    Rule("github-token", _c(rf"{_B}gh[pousr]_[A-Za-z0-9]{{30,255}}{_E}")),
    Rule("gitlab-token", _c(rf"{_B}gl(?:pat|dt|ft|soat|rt|cbt|ptt|oas|imt)-[A-Za-z0-9_\-]{{20,64}}{_E}")),
    Rule("stripe-key", _c(rf"{_B}(?:sk|rk)_(?:live|test)_[A-Za-z0-9]{{16,255}}{_E}")),
    Rule("stripe-webhook-secret", _c(rf"{_B}whsec_[A-Za-z0-9]{{24,255}}{_E}")),
    Rule("slack-webhook", _c(r"https://hooks\.slack\.com/(?:services|workflows|triggers)/[A-Za-z0-9_/]{10,255}")),
    Rule("slack-token", _c(rf"{_B}xox[abposre]-[A-Za-z0-9\-]{{10,255}}{_E}")),
    Rule("google-api-key", _c(rf"{_B}AIza[0-9A-Za-z_\-]{{35}}{_E}")),
    Rule("google-oauth-secret", _c(rf"{_B}GOCSPX-[A-Za-z0-9_\-]{{28}}{_E}")),
    Rule("google-oauth-token", _c(rf"{_B}ya29\.[0-9A-Za-z_\-]{{20,1024}}{_E}")),
    Rule("npm-token", _c(rf"{_B}npm_[A-Za-z0-9]{{36}}{_E}")),
    Rule("huggingface-token", _c(rf"{_B}hf_[A-Za-z0-9]{{30,40}}{_E}"),
         accept=lambda m, v: any(c.isupper() for c in v) and any(c.islower() for c in v[3:])),
    Rule("pypi-token", _c(rf"{_B}pypi-AgE[A-Za-z0-9_\-]{{50,255}}{_E}")),
    Rule("sendgrid-key", _c(rf"{_B}SG\.[A-Za-z0-9_\-]{{22}}\.[A-Za-z0-9_\-]{{43}}{_E}")),
    Rule("twilio-key", _c(rf"{_B}(?:AC|SK)[0-9a-f]{{32}}{_E}")),
    Rule("mailchimp-key", _c(rf"{_B}[0-9a-f]{{32}}-us[0-9]{{1,2}}{_E}")),
    Rule("digitalocean-token", _c(rf"{_B}do[opr]_v1_[a-f0-9]{{64}}{_E}")),
    Rule("shopify-token", _c(rf"{_B}shp(?:at|ca|pa|ss)_[a-fA-F0-9]{{32}}{_E}")),
    Rule("databricks-token", _c(rf"{_B}dapi[a-f0-9]{{32}}(?:-\d)?{_E}")),
    Rule("telegram-bot-token", _c(r"(?<![0-9])[0-9]{8,10}:AA[0-9A-Za-z_\-]{33}(?![A-Za-z0-9_\-])")),
    Rule("discord-bot-token", _c(rf"{_B}[MNO][A-Za-z0-9_\-]{{23,25}}\.[A-Za-z0-9_\-]{{6}}\.[A-Za-z0-9_\-]{{27,38}}{_E}")),
    Rule("jwt", _c(rf"{_B}eyJ[A-Za-z0-9_\-]{{8,4096}}\.eyJ[A-Za-z0-9_\-]{{8,4096}}\.[A-Za-z0-9_\-]{{8,4096}}{_E}")),
    Rule("azure-storage-key", _c(
        r"(?i:AccountKey|SharedAccessKey|SharedAccessSignature|azure[_-]?storage[_-]?key)\s{0,3}[=:]\s{0,3}"
        r"['\"]?([A-Za-z0-9+/%=]{16,512})"), group=1),
    Rule("bearer-token", _c(r"(?i:\bbearer)\s{1,5}([A-Za-z0-9._~+/\-]{16,4096}=*)(?![A-Za-z0-9._~+/=\-])"), group=1),
    Rule("basic-auth", _c(r"(?i:\bauthorization\s{0,3}:\s{0,3}basic)\s{1,5}([A-Za-z0-9+/]{8,1024}={0,2})"), group=1),
    Rule("basic-auth", _c(r"(?<!\S)(?:-u|--user)\s{1,5}['\"]?[^\s:'\"@]{1,64}:([^\s'\"]{3,200})"), group=1),
    Rule("url-password", _c(
        r"(?<![A-Za-z0-9+.\-])[A-Za-z][A-Za-z0-9+.\-]{1,20}://[^\s:/?#@\[\]\"'<>]{1,128}:"
        r"([^\s/?#@\"'<>]{1,256})@"), group=1),
    Rule(_KEYWORD_KIND, _c(  # KEY=value, KEY: value, "key": "value", KEY => value
        rf"{_KEY}['\"]?\s{{0,3}}(?::=|=>|[=:])\s{{0,3}}(?P<value>{_QUOTED_OR_BARE})"),
        group="value", accept=lambda m, v: _names_the_secret(m) and _assigned_value(v)),
    Rule(_KEYWORD_KIND, _c(  # prose: "the staging DB password for admin is Xk9#mP2vL7q"
        rf"{_KEY}(?:\s{{1,3}}+[\w.@/\-]{{1,40}}+){{0,4}}?\s{{1,3}}+(?:is|was|are|=|:|set\s+to|reads)\s{{1,3}}"
        rf"(?P<value>{_QUOTED_OR_BARE})"), group="value", accept=lambda m, v: _names_the_secret(m) and looks_secret(v)),
)


# Lowercase substrings, one of which each rule's matches always contain (a rule not listed always runs).
_TRIGGERS: dict[str, tuple[str, ...]] = {
    "private-key": ("private key",),
    "putty-private-key": ("putty-user-key",),
    "anthropic-api-key": ("sk-ant-",),
    "openai-api-key": ("sk-",),
    "aws-access-key-id": ("a3t", "akia", "asia", "abia", "acca"),
    "aws-secret-key": ("aws",),
    "github-pat": ("github_pat_",),
    "github-token": ("ghp_", "gho_", "ghu_", "ghs_", "ghr_"),
    "gitlab-token": ("gl",),
    "stripe-key": ("_live_", "_test_"),
    "stripe-webhook-secret": ("whsec_",),
    "slack-webhook": ("hooks.slack.com",),
    "slack-token": ("xox",),
    "google-api-key": ("aiza",),
    "google-oauth-secret": ("gocspx-",),
    "google-oauth-token": ("ya29.",),
    "npm-token": ("npm_",),
    "huggingface-token": ("hf_",),
    "pypi-token": ("pypi-age",),
    "sendgrid-key": ("sg.",),
    "mailchimp-key": ("-us",),
    "digitalocean-token": ("_v1_",),
    "shopify-token": ("shp",),
    "databricks-token": ("dapi",),
    "telegram-bot-token": (":aa",),
    "jwt": ("eyj",),
    "azure-storage-key": ("accountkey", "sharedaccess", "storage"),
    "bearer-token": ("bearer",),
    "basic-auth": ("basic", "-u", "--user"),
    "url-password": ("://",),
    _KEYWORD_KIND: ("pass", "pwd", "secret", "token", "key", "credential", "contrase"),
}
CRIB_RULES = tuple(
    Rule(r.kind, r.pattern, r.group, r.accept, _TRIGGERS.get(r.kind, ())) for r in CRIB_RULES
)


# --------------------------------------------------------------------- detect-secrets rules

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
    import importlib.util

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
    from .config import cache_dir

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
            specs = _plugin_specs()
        except Exception:  # noqa: BLE001 -- a broken detect-secrets must not stop a write: crib's rules run
            return ()
        try:
            path.parent.mkdir(parents=True, exist_ok=True)
            tmp = path.with_suffix(f".{os.getpid()}.tmp")
            tmp.write_text(json.dumps({"stamp": stamp, "rules": specs}), encoding="utf-8")
            os.replace(tmp, path)
        except OSError:
            pass
    rules: list[Rule] = []
    for spec in specs:
        try:
            re.compile(str(spec["pattern"]), int(spec["flags"]))  # type: ignore[call-overload]  # reject bad ones now
            kind = str(spec["kind"])
            rules.append(Rule(kind, _Lazy(str(spec["pattern"]), int(spec["flags"])),  # type: ignore[call-overload]
                              int(spec["group"]), triggers=_PLUGIN_TRIGGERS.get(kind, ())))  # type: ignore[call-overload]
        except (re.error, KeyError, TypeError, ValueError):
            continue
    return tuple(rules)


# ------------------------------------------------------------------------------- the passes

Span = tuple[int, int, str]


def _spans(text: str, rules: Sequence[Rule], offset: int = 0) -> Iterable[tuple[int, int, int, str]]:
    """(start, end, rule order, kind) of every accepted match of ``rules`` in ``text``."""
    lowered = text.lower()
    keyword_starts: list[int] | None = None
    for order, rule in enumerate(rules):
        if not rule.may_match(lowered):
            continue
        if rule.kind == _KEYWORD_KIND:
            if keyword_starts is None:
                keyword_starts = _keyword_starts(text, lowered)
            compiled = rule.pattern.compiled()
            matches: Iterable[re.Match[str]] = filter(None, (compiled.match(text, q) for q in keyword_starts))
        else:
            matches = rule.pattern.finditer(text)
        for m in matches:
            group = rule.group if rule.group and m.group(rule.group) is not None else 0
            start, end = m.span(group)
            if end <= start or text.startswith("[REDACTED:", start):
                continue
            if rule.accept is not None and not rule.accept(m, m.group(group)):
                continue
            if end - start >= 2 and text[start] in "\"'`" and text[end - 1] == text[start]:
                start, end = start + 1, end - 1  # a quoted value: the quotes stay
            kind = _keyword_kind(m) if rule.kind == _KEYWORD_KIND else rule.kind
            yield start + offset, end + offset, order, kind


_KEYWORD_HINT = re.compile(r"pass|pwd|secret|token|key|credential|contrase", re.IGNORECASE)
_LEADING_RUN = re.compile(r"[A-Za-z0-9_.\-]*")  # matched on the reversed text before a keyword
# A keyword rule's match starts at most _KEY_BEFORE characters before its keyword.
_KEY_BEFORE = 160


def _keyword_positions(text: str, lowered: str) -> Iterable[int]:
    """Where a secret-ish keyword starts (``str.find`` on the lowercased text is far faster than a
    case-insensitive regex; when lowercasing changed the length, positions would not line up, so
    the regex runs instead)."""
    if len(lowered) != len(text):
        return (m.start() for m in _KEYWORD_HINT.finditer(text))
    found: list[int] = []
    for word in _KEYWORD_WORDS:
        i = lowered.find(word)
        while i >= 0:
            found.append(i)
            i = lowered.find(word, i + 1)
    return found


_KEYWORD_WORDS = ("pass", "pwd", "secret", "token", "key", "credential", "contrase")


def _keyword_starts(text: str, lowered: str) -> list[int]:
    """Where a keyword rule can start: for each secret-ish keyword, the start of the run of key
    characters it sits in, and each position after a ``-`` in that run up to the keyword (the
    rules' look-behind forbids any other start).  Trying the rules only there costs one anchored
    match per keyword instead of a search through the whole text."""
    starts: set[int] = set()
    for k in _keyword_positions(text, lowered):
        lo = max(0, k - _KEY_BEFORE)
        run = _LEADING_RUN.match(text[lo:k][::-1])
        p = k - (run.end() if run else 0)
        starts.add(p)
        dash = text.find("-", p, k)
        while dash >= 0:
            starts.add(dash + 1)
            dash = text.find("-", dash + 1, k)
    return sorted(starts)


def _line_windows(text: str) -> Iterable[tuple[int, str]]:
    """(offset, line) for each line short enough for detect-secrets' regexes."""
    start = 0
    while start <= len(text):
        end = text.find("\n", start)
        if end < 0:
            end = len(text)
        if end - start <= MAX_LINE_FOR_PLUGINS:
            yield start, text[start:end]
        start = end + 1


def find_secrets(text: str, *, plugins: bool = True) -> list[Span]:
    """The secrets in ``text`` as sorted, non-overlapping ``(start, end, kind)`` spans.

    Overlapping matches of crib's rules merge into one span named after the most specific rule
    (the earliest in :data:`CRIB_RULES`), so ``DB_PASSWORD=postgres://u:pw@h`` is one span.  A
    detect-secrets match that overlaps one of crib's is dropped: it adds only what crib misses."""
    found = list(_spans(text, CRIB_RULES))
    if plugins:
        lowered = text.lower()
        active = [r for r in plugin_rules() if r.may_match(lowered)]
        if active:
            base = len(CRIB_RULES)
            own = _union((s, e) for s, e, _, _ in found)
            for offset, line in _line_windows(text):
                for s, e, o, k in _spans(line, active, offset):
                    if not _overlaps(own, s, e):
                        found.append((s, e, o + base, k))
    if not found:
        return []
    found.sort()
    merged: list[list[object]] = []
    for start, end, order, kind in found:
        if merged and start < merged[-1][1]:  # type: ignore[operator]
            last = merged[-1]
            if order < last[3]:  # type: ignore[operator]
                last[2], last[3] = kind, order
            last[1] = max(last[1], end)  # type: ignore[call-overload]
            continue
        merged.append([start, end, kind, order])
    return [(int(s), int(e), str(k)) for s, e, k, _ in merged]  # type: ignore[call-overload]


def _overlaps(spans: Sequence[tuple[int, int]], start: int, end: int) -> bool:
    """Whether [start, end) overlaps one of ``spans`` (sorted, non-overlapping)."""
    import bisect

    i = bisect.bisect_right(spans, (start, float("inf")))
    return (i > 0 and spans[i - 1][1] > start) or (i < len(spans) and spans[i][0] < end)


def _union(spans: Iterable[tuple[int, int]]) -> list[tuple[int, int]]:
    out: list[tuple[int, int]] = []
    for s, e in sorted(spans):
        if out and s < out[-1][1]:
            out[-1] = (out[-1][0], max(out[-1][1], e))
        else:
            out.append((s, e))
    return out


def _apply(text: str, spans: Sequence[Span]) -> str:
    out: list[str] = []
    prev = 0
    for start, end, kind in spans:
        out.append(text[prev:start])
        out.append(marker(kind))
        prev = end
    out.append(text[prev:])
    return "".join(out)


def _enabled() -> bool:
    """``CRIB_REDACT``; a malformed value keeps redaction on (failing safe, never open)."""
    from .config import redact_enabled
    from .errors import ConfigError

    try:
        return redact_enabled()
    except ConfigError:
        return True


def redact(text: str) -> str:
    """The write pass: replace every secret crib's rules or detect-secrets' find by its marker."""
    if not text or not _enabled():
        return text
    spans = find_secrets(text, plugins=True)
    return _apply(text, spans) if spans else text


def redact_for_render(text: str) -> str:
    """The render pass (per prompt): crib's own precompiled rules only, no detect-secrets import."""
    if not text or not _enabled():
        return text
    spans = find_secrets(text, plugins=False)
    return _apply(text, spans) if spans else text
