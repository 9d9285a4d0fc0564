"""crib's own redaction rules: the rule table, its triggers, and the tests a candidate secret must pass.

Pure data and small predicates (entropy, character classes, "looks like a reference"); every regex is
compiled lazily, once per process, the first time its trigger appears in a text.
"""

from __future__ import annotations

import math
import re
from collections.abc import Callable, Iterator
from dataclasses import dataclass

#: The replacement for a secret of kind ``k``: ``MARKER.format(kind=k)``.

MARKER = "[REDACTED:{kind}]"

#: detect-secrets' regexes only run on lines up to this length (they were not written for megabytes).
MAX_LINE_FOR_PLUGINS = 1024

_TOK = r"A-Za-z0-9_\-"  # characters of a token run: a rule may not start inside one
_B = rf"(?<![{_TOK}])"  # "starts a run"
_E = rf"(?![{_TOK}])"  # "ends a run"


class Lazy:
    """A regex compiled on first use: a process only pays for the rules its texts can trigger."""

    __slots__ = ("_compiled", "flags", "pattern")

    def __init__(self, pattern: str, flags: int = 0) -> None:
        self.pattern, self.flags = pattern, flags
        self._compiled: re.Pattern[str] | None = None

    def compiled(self) -> re.Pattern[str]:
        if self._compiled is None:
            try:
                self._compiled = re.compile(self.pattern, self.flags)
            except re.error:  # a hand-edited rules cache: this rule finds nothing, the others still run
                self._compiled = re.compile(r"(?!)")
        return self._compiled

    def finditer(self, text: str) -> Iterator[re.Match[str]]:
        return self.compiled().finditer(text)


@dataclass(frozen=True)
class Rule:
    """One kind of secret: ``pattern`` finds it, ``group`` is the part replaced (0: the whole
    match), and ``accept`` (optional) vetoes a match on the replaced text, for rules whose regex
    alone would also hit harmless look-alikes."""

    kind: str
    pattern: Lazy
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


_AWS_KEY_ID = r"(?<![A-Z0-9])(?:A3T[A-Z0-9]|AKIA|ASIA|ABIA|ACCA)[A-Z0-9]{16}(?![A-Z0-9])"
# A pair rule's anchor is the key id *or crib's own marker for it*: a store written by an older crib
# holds "[REDACTED:aws-access-key-id] and secret wJalr…" (the id redacted, its secret not), and the
# secret must go on the next read or write all the same.
_AWS_KEY_ID_OR_MARKER = rf"(?:{_AWS_KEY_ID}|\[REDACTED:aws-access-key-id\])"


def _mixed_key(value: str) -> bool:
    """A 40-character AWS secret key mixes upper and lower case with digits or ``/``/``+``; a git
    SHA (lowercase hex) or a long identifier of one case is not one."""
    return any(c.isupper() for c in value) and any(c.islower() for c in value) and any(c.isdigit() or c in "/+" for c in value)


def _random_run(value: str) -> bool:
    """A run of at least 16 letters and digits, both present (a token), between ``-``, ``_`` or ``.``:
    ``john.doe.smith`` and ``x-access-token`` are names, ``a1B2c3D4e5F6g7H8`` is not."""
    return any(
        len(seg) >= 16 and any(c.isdigit() for c in seg) and any(c.isalpha() for c in seg)
        for seg in re.split(r"[-_.]", value)
    )


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


KEYWORD_KIND = "keyword"  # marker kind: "password" for password-ish keys, else "secret"


def keyword_kind(m: re.Match[str]) -> str:
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


def _c(pattern: str, flags: int = 0) -> Lazy:
    return Lazy(pattern, flags)


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
    Rule("aws-access-key-id", _c(_AWS_KEY_ID)),
    Rule("aws-secret-key", _c(
        r"(?i:aws)[\w .-]{0,30}?(?i:secret)[\w .'\"-]{0,40}?(?:[:=]|\bis\b)?\s{0,5}['\"]?"
        r"(?<![A-Za-z0-9/+])([A-Za-z0-9/+]{40})(?![A-Za-z0-9/+=])"), group=1),
    # The secret access key beside its access key id (either order, within a line or two), with no
    # keyword: "AKIAIOSFODNN7EXAMPLE wJalrXUtnFEMI/K7MDENG/bPxRfiCYEXAMPLEKEY" is a credential pair.
    Rule("aws-secret-key", _c(
        rf"{_AWS_KEY_ID_OR_MARKER}[\s\S]{{0,120}}?(?<![A-Za-z0-9/+])([A-Za-z0-9/+]{{40}})(?![A-Za-z0-9/+=])"),
        group=1, accept=lambda m, v: _mixed_key(v)),
    Rule("aws-secret-key", _c(
        rf"(?<![A-Za-z0-9/+])([A-Za-z0-9/+]{{40}})(?![A-Za-z0-9/+=])[\s\S]{{0,120}}?{_AWS_KEY_ID_OR_MARKER}"),
        group=1, accept=lambda m, v: _mixed_key(v)),
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
    # URL userinfo, every form: user:password@ and :password@ (redis' empty user; the password may
    # itself hold "@": the authority ends at the last one), and a lone user that reads as a token
    # (https://ghp_…@host, https://<key>@host); "git@host" and "alice@host" stay.
    Rule("url-password", _c(
        r"(?<![A-Za-z0-9+.\-])[A-Za-z][A-Za-z0-9+.\-]{1,20}://[^\s:/?#@\[\]\"'<>]{0,128}:"
        r"([^\s/?#\"'<>]{1,256})@"), group=1),
    Rule("url-password", _c(
        r"(?<![A-Za-z0-9+.\-])[A-Za-z][A-Za-z0-9+.\-]{1,20}://([^\s:/?#@\[\]\"'<>]{16,256})@"), group=1,
        accept=lambda m, v: _random_run(v)),
    Rule("discord-webhook", _c(
        r"https://(?:(?:ptb|canary)\.)?discord(?:app)?\.com/api/(?:v\d{1,2}/)?webhooks/\d{5,30}/[A-Za-z0-9_\-]{20,255}")),
    Rule("vault-token", _c(rf"{_B}hv[sbr]\.[A-Za-z0-9_\-]{{24,1024}}{_E}")),
    Rule("atlassian-token", _c(rf"{_B}AT(?:ATT|CTT)3[A-Za-z0-9_\-=]{{20,400}}(?![A-Za-z0-9_\-=])")),
    Rule("linear-key", _c(rf"{_B}lin_(?:api|oauth)_[A-Za-z0-9]{{32,128}}{_E}")),
    Rule("grafana-token", _c(rf"{_B}(?:glsa_[A-Za-z0-9]{{32}}_[A-Fa-f0-9]{{8}}|glc_[A-Za-z0-9+/]{{32,512}}={{0,2}})(?![A-Za-z0-9_+/=\-])")),
    Rule(KEYWORD_KIND, _c(  # KEY=value, KEY: value, "key": "value", KEY => value
        rf"{_KEY}['\"]?\s{{0,3}}(?::=|=>|[=:])\s{{0,3}}(?P<value>{_QUOTED_OR_BARE})"),
        group="value", accept=lambda m, v: _names_the_secret(m) and _assigned_value(v)),
    Rule(KEYWORD_KIND, _c(  # prose: "the staging DB password for admin is Xk9#mP2vL7q"
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
    "aws-secret-key": ("aws", "a3t", "akia", "asia", "abia", "acca"),  # the marker holds "aws"
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
    "discord-webhook": ("discord",),
    "vault-token": ("hvs.", "hvb.", "hvr."),
    "atlassian-token": ("atatt3", "atctt3"),
    "linear-key": ("lin_api_", "lin_oauth_"),
    "grafana-token": ("glsa_", "glc_"),
    KEYWORD_KIND: ("pass", "pwd", "secret", "token", "key", "credential", "contrase"),
}
CRIB_RULES = tuple(
    Rule(r.kind, r.pattern, r.group, r.accept, _TRIGGERS.get(r.kind, ())) for r in CRIB_RULES
)
