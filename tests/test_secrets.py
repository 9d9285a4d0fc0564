"""Secret redaction (crib_plugin.redact): a corpus of realistic secrets in natural sentences, none of
which may be stored or shown verbatim, and a corpus of look-alikes that must survive unchanged.

The secrets are *fake*: generated here from a fixed seed with each kind's real prefix, length and
alphabet, so the repository holds no credential-shaped literals and no real key was ever used.
"""

from __future__ import annotations

import base64
import hashlib
import json
import random
import re
import string
import uuid
from dataclasses import dataclass
from pathlib import Path
from types import SimpleNamespace

import pytest
from click.testing import CliRunner

from crib_plugin.core.records import Entry
from crib_plugin.hosts.cli.app import cli
from crib_plugin.output.render import render_block
from crib_plugin.text import redact as redact_mod
from crib_plugin.text.redact import detect as redact_detect
from crib_plugin.text.redact import find_secrets, redact, redact_for_render

RNG = random.Random(20261123)
UP, LOW, DIG = string.ascii_uppercase, string.ascii_lowercase, string.digits
ALNUM = UP + LOW + DIG
B64 = ALNUM + "+/"
URLSAFE = ALNUM + "_-"
HEX = "0123456789abcdef"


def rand(alphabet: str, n: int) -> str:
    """``n`` characters from ``alphabet``, with at least one digit and one letter of each case
    when the alphabet has them (as real random keys practically always do)."""
    while True:
        s = "".join(RNG.choice(alphabet) for _ in range(n))
        need = [cls for cls in (UP, LOW, DIG) if set(cls) & set(alphabet)]
        if all(set(s) & set(cls) for cls in need) or n < 8:
            return s


def jwt() -> str:
    def part(obj: dict[str, object]) -> str:
        return base64.urlsafe_b64encode(json.dumps(obj).encode()).decode().rstrip("=")

    head = part({"alg": "HS256", "typ": "JWT"})
    body = part({"sub": str(RNG.randrange(10**9)), "name": "Dana Fox", "iat": 1763856000 + RNG.randrange(10**6)})
    return f"{head}.{body}.{rand(URLSAFE, 43)}"


def private_key(kind: str = "RSA") -> str:
    lines = "\n".join(rand(B64, 64) for _ in range(6))
    return f"-----BEGIN {kind} PRIVATE KEY-----\n{lines}\n{rand(B64, 20)}==\n-----END {kind} PRIVATE KEY-----"


def password() -> str:
    return rand(ALNUM, 6) + RNG.choice("!#%&*+-") + rand(ALNUM, 5)


@dataclass(frozen=True)
class Case:
    kind: str  # the marker kind expected (None-check only where several are acceptable)
    secret: str  # what must never come out
    sentence: str  # how an agent would write it


def _secret_cases() -> list[Case]:
    cases: list[Case] = []

    def add(kind: str, secret: str, *templates: str) -> None:
        for t in templates:
            cases.append(Case(kind, secret, t.format(s=secret)))

    add("aws-access-key-id", "AKIA" + rand(UP + DIG, 16),
        "The CI user's access key id is {s}, rotate it in March.",
        "aws configure set aws_access_key_id {s}")
    add("aws-access-key-id", "ASIA" + rand(UP + DIG, 16), "Temporary STS creds start with {s} for the deploy role.")
    aws_secret = rand(B64, 40)
    add("aws-secret-key", aws_secret,
        "The AWS secret key for staging is {s} (don't commit it).",
        "Put aws_secret_access_key = {s} in ~/.aws/credentials on the runner.")
    add("aws-secret-key", rand(B64, 40), 'export AWS_SECRET_ACCESS_KEY="{s}" before running terraform.')
    add("github-token", "ghp_" + rand(ALNUM, 36), "Use the bot's token {s} to push tags.")
    add("github-token", "gho_" + rand(ALNUM, 36), "The OAuth app handed back {s} after login.")
    add("github-token", "ghs_" + rand(ALNUM, 36), "Actions exposed {s} in the failing log.")
    add("github-pat", "github_pat_" + rand(ALNUM, 22) + "_" + rand(ALNUM, 59),
        "My fine-grained PAT is {s}, scoped to crib only.",
        "git clone https://x-access-token:{s}@github.com/acme/crib.git")
    add("gitlab-token", "glpat-" + rand(URLSAFE, 20), "GitLab personal access token {s} expires next week.",
        "Set CI_JOB_TOKEN? No: the registry login uses {s}.")
    add("stripe-key", "sk_live_" + rand(ALNUM, 24), "Stripe live secret: {s} - only the billing service has it.")
    add("stripe-key", "rk_live_" + rand(ALNUM, 24), "The restricted Stripe key {s} can only create refunds.")
    add("stripe-key", "sk_test_" + rand(ALNUM, 24), "For local tests use {s} against the Stripe sandbox.")
    add("stripe-webhook-secret", "whsec_" + rand(ALNUM, 32), "The webhook signing secret is {s}.")
    add("slack-token", "xoxb-" + "-".join(rand(DIG, 12) for _ in range(2)) + "-" + rand(ALNUM, 24),
        "The Slack bot token {s} posts to #deploys.")
    add("slack-token", "xoxp-" + "-".join(rand(DIG, 12) for _ in range(3)) + "-" + rand(HEX, 32),
        "A user token ({s}) was pasted in the thread.")
    add("slack-webhook", "https://hooks.slack.com/services/T" + rand(UP + DIG, 8) + "/B" + rand(UP + DIG, 10)
        + "/" + rand(ALNUM, 24), "Alerts go to the webhook {s} for #oncall.",
        "curl -X POST -d '{{\"text\":\"hi\"}}' {s}")
    add("google-api-key", "AIza" + rand(URLSAFE, 35), "The Maps key is {s}; restrict it by referrer.",
        "GOOGLE_API_KEY={s}")
    add("google-oauth-secret", "GOCSPX-" + rand(URLSAFE, 28), "The OAuth client secret came out as {s}.")
    add("openai-api-key", "sk-proj-" + rand(URLSAFE, 48) + "T3BlbkFJ" + rand(URLSAFE, 48),
        "OPENAI_API_KEY is {s} for the eval runs.", "I tested with key {s} and it worked.")
    add("openai-api-key", "sk-" + rand(ALNUM, 48), "Old-style OpenAI key: {s}.")
    add("anthropic-api-key", "sk-ant-api03-" + rand(URLSAFE, 93) + "AA",
        "The Anthropic key {s} belongs to the research org.")
    add("npm-token", "npm_" + rand(ALNUM, 36), "Publishing needs the npm automation token {s}.",
        "//registry.npmjs.org/:_authToken={s}")
    add("huggingface-token", "hf_" + rand(UP + LOW, 34), "Download the gated model with HF token {s}.")
    add("pypi-token", "pypi-AgEIcHlwaS5vcmc" + rand(URLSAFE, 70), "twine upload -u __token__ -p {s} dist/*")
    add("sendgrid-key", "SG." + rand(URLSAFE, 22) + "." + rand(URLSAFE, 43), "Mail goes out through SendGrid with {s}.")
    add("twilio-key", "SK" + rand(HEX, 32), "Twilio API key sid {s} is for SMS only.")
    add("mailchimp-key", rand(HEX, 32) + "-us14", "Newsletter sync uses Mailchimp key {s}.")
    add("digitalocean-token", "dop_v1_" + rand(HEX, 64), "doctl auth init --access-token {s}")
    add("shopify-token", "shpat_" + rand(HEX, 32), "The Shopify admin API token is {s}.")
    add("telegram-bot-token", str(RNG.randrange(10**8, 10**9)) + ":AA" + rand(URLSAFE, 33),
        "The alert bot answers to {s} on Telegram.")
    add("jwt", jwt(), "The session cookie was {s} when the bug happened.",
        "curl -H 'Authorization: Bearer {s}' https://api.example.com/v1/me")
    add("private-key", private_key("RSA"), "Deploy key for the box:\n{s}\nKeep it out of git.")
    add("private-key", private_key("OPENSSH"), "I generated this key with ssh-keygen:\n{s}")
    add("private-key", private_key("EC"), "{s}")
    add("bearer-token", rand(URLSAFE, 40),
        "curl -H \"Authorization: Bearer {s}\" https://internal.example.org/api/jobs",
        "Call it with the header Authorization: Bearer {s} or you get 401.")
    add("basic-auth", base64.b64encode(b"admin:" + password().encode()).decode(),
        "The old proxy wanted Authorization: Basic {s} on every request.")
    add("basic-auth", password(), "curl -u deploy:{s} https://ci.example.com/job/build")
    add("url-password", password(),
        "Prod DB is postgres://app_user:{s}@db.internal:5432/app",
        "REDIS_URL=redis://default:{s}@cache.internal:6379/0",
        "Connect with mongodb+srv://admin:{s}@cluster0.example.mongodb.net/test",
        "The broker URL amqp://guest:{s}@rabbit:5672// works from the worker.")
    add("azure-storage-key", rand(B64, 86) + "==",
        "DefaultEndpointsProtocol=https;AccountName=cribstore;AccountKey={s};EndpointSuffix=core.windows.net")
    add("azure-storage-key", rand(B64, 43) + "=",
        "Endpoint=sb://crib.servicebus.windows.net/;SharedAccessKeyName=root;SharedAccessKey={s}")
    add("password", password(), "DB_PASSWORD={s}", "The staging DB password is {s} until we move to Vault.",
        'config.yaml has password: "{s}" under the db section.', "mysql -u root --password={s} app",
        "The admin password for Grafana is {s}.", "set PGPASSWORD={s} then run psql")
    add("secret", rand(ALNUM, 24), "client_secret = \"{s}\" in settings.py", "API_KEY={s}",
        "export SENTRY_AUTH_TOKEN={s}", '{{"apiKey": "{s}", "region": "eu"}}')
    add("password", "correct-horse-battery-" + rand(LOW, 6), "My passphrase: {s}")
    # Kinds an earlier crib stored verbatim: URL userinfo with an empty user or a token as the user,
    # webhook URLs and vendor tokens (each with its real prefix, length and alphabet).
    add("url-password", password(), "The queue is redis://:{s}@cache.internal:6379/0 in prod.",
        "Sentinel: rediss://:{s}@sentinel:26379")
    add("url-password", rand(ALNUM, 24), "Clone with https://{s}@git.example.com/acme/crib.git")
    add("discord-webhook", "https://discord.com/api/webhooks/" + rand(DIG, 19) + "/" + rand(URLSAFE, 68),
        "Build alerts post to {s} on the #ci channel.")
    add("discord-webhook", "https://discordapp.com/api/webhooks/" + rand(DIG, 18) + "/" + rand(URLSAFE, 68),
        "The old webhook {s} still fires.")
    add("vault-token", "hvs." + rand(URLSAFE, 90), "VAULT_TOKEN for staging: {s}", "vault login {s}")
    add("atlassian-token", "ATATT3" + rand(URLSAFE + "=", 180) + rand(HEX.upper(), 8),
        "The Jira API token is {s}; it belongs to the bot user.")
    add("linear-key", "lin_api_" + rand(ALNUM, 40), "Linear sync runs with {s} from the cron box.")
    add("grafana-token", "glsa_" + rand(ALNUM, 32) + "_" + rand(HEX, 8), "Grafana service account token {s} can read dashboards.")
    add("grafana-token", "glc_" + rand(B64, 120) + "==", "Grafana Cloud access policy token: {s}")
    return cases


SECRETS = _secret_cases()


def _lookalikes() -> list[str]:
    sha = hashlib.sha1(b"crib").hexdigest()
    digest = hashlib.sha256(b"crib release").hexdigest()
    uid = str(uuid.UUID(int=RNG.getrandbits(128)))
    return [
        f"Fixed in commit {sha} on main.",
        f"Reverted {sha[:7]} and {sha[:12]} because of the flaky test.",
        f"The request id was {uid}, see the trace.",
        f"Entry {uid.upper()} is the duplicate.",
        f"sha256 of the wheel is {digest}.",
        f"Pinned the image to python@sha256:{digest}.",
        "Upgrade to 2.10.0-rc.1 then to v3.1.4+build.52 when released.",
        "pydantic>=2.7,<3 and numpy==1.26.4 are the pins.",
        "Use sk-learn-compatible-estimator-v2 as the base class name.",
        "The sk-learn-compatible-wrapper stays in utils.",
        "get_api_key_from_env() reads the key at start-up.",
        "Rename password_reset_token_ttl to reset_ttl.",
        "token_count: 8000 is the default budget.",
        "tokenizer: bert-base-uncased",
        "The password is stored in Vault, never in the repo.",
        "The secret is out: we ship on Friday.",
        "We added a password reset flow and a passwordless login.",
        "Set PASSWORD_FILE=/run/secrets/db_password in compose.",
        "export GITHUB_TOKEN=$GH_TOKEN in the workflow.",
        'api_key = os.environ["OPENAI_API_KEY"]',
        "tokens = tokenizer(text); token=self.tokenizer.decode(ids)",
        "password=settings.DB_PASSWORD and api_key=get_api_key() in the factory",
        "password: ${DB_PASSWORD}",
        f"base64 of 'hello world' is {base64.b64encode(b'hello world').decode()}.",
        f"The fixture holds {base64.b64encode(b'the quick brown fox jumps').decode()} as sample data.",
        "Keys live in /home/dana/.ssh/id_ed25519.pub and ~/.aws/config.",
        "See https://github.com/acme/crib/pull/123 and https://docs.python.org/3/library/re.html.",
        "Local DB is postgres://localhost:5432/app with peer auth.",
        "git@github.com:acme/crib.git is the remote.",
        "Mail dana.fox@example.com about the outage.",
        "The header is Authorization: Bearer $TOKEN in the README example.",
        "AKIA keys are long-term; ASIA keys are temporary.",
        "Tokens start with ghp_ (classic) or github_pat_ (fine-grained).",
        "The UserTokenizerFactory builds an AccessKeyRepository.",
        "Read Secrets Manager via the secret_name: prod/db parameter.",
        "Ports 127.0.0.1:8080 and 0.0.0.0:443 are open; server at 8.8.8.8.",
        "The build number is 20261123 and the PR is #4521.",
        "let v: Vec<Memory> = Vec::new(); // passes the token budget",
        "Timestamp 2026-11-23T19:52:40Z, duration 1h38m.",
        "ECDSA keys use the P-256 curve; RSA keys need 3072 bits.",
        "Clone over ssh://git@github.com/acme/crib.git or https://dana.fox.smith@gitea.example.com/acme.",
        "The Discord server is https://discord.com/channels/123/456 for support.",
        "Grafana's glsa_ prefix marks a service account token; Linear keys start lin_api_.",
    ]


LOOKALIKES = _lookalikes()


# ------------------------------------------------------------------------------------- corpus


def test_corpus_size() -> None:
    assert len(SECRETS) >= 50
    assert len({c.kind for c in SECRETS}) >= 20
    assert len(LOOKALIKES) >= 30


@pytest.mark.parametrize("case", SECRETS, ids=lambda c: f"{c.kind}:{c.sentence[:30]}")
def test_secret_is_redacted_with_its_kind(case: Case) -> None:
    out = redact(case.sentence)
    assert case.secret not in out
    assert f"[REDACTED:{case.kind}]" in out, out
    assert redact(out) == out  # idempotent: a marker is never a secret


@pytest.mark.parametrize("case", SECRETS, ids=lambda c: f"{c.kind}:{c.sentence[:30]}")
def test_render_pass_alone_catches_every_secret(case: Case) -> None:
    out = redact_for_render(case.sentence)
    assert case.secret not in out
    assert "[REDACTED:" in out


@pytest.mark.parametrize("text", LOOKALIKES)
def test_lookalike_survives(text: str) -> None:
    assert redact(text) == text
    assert redact_for_render(text) == text


def test_words_around_the_secret_stay() -> None:
    case = next(c for c in SECRETS if c.sentence.startswith("The staging DB password"))
    assert redact(case.sentence) == "The staging DB password is [REDACTED:password] until we move to Vault."
    url = next(c for c in SECRETS if c.sentence.startswith("Prod DB"))
    assert redact(url.sentence) == "Prod DB is postgres://app_user:[REDACTED:url-password]@db.internal:5432/app"


def test_detect_secrets_rules_are_loaded_and_add_kinds() -> None:
    rules = redact_mod.plugin_rules()
    kinds = {r.kind for r in rules}
    assert {"aws-access-key", "slack-token", "stripe-access-key", "json-web-token"} <= kinds
    # A kind only detect-secrets knows (crib's own rules have no IBM rule): caught on the write
    # pass, not by the render pass.
    sentence = "ibm_cloud_iam_api_key: " + rand(URLSAFE, 44)
    secret = sentence.split(": ")[1]
    assert secret in redact_for_render("ibm cloud " + secret)
    assert secret not in redact("ibm cloud " + sentence)


def test_detect_secrets_rules_come_from_the_cache_file(tmp_path, monkeypatch) -> None:
    monkeypatch.setenv("CRIB_CACHE_DIR", str(tmp_path))
    redact_mod.plugin_rules.cache_clear()
    try:
        first = redact_mod.plugin_rules()
        cached = json.loads((tmp_path / "detect-secrets-rules.json").read_text())
        assert len(cached["rules"]) == len(first) > 20
        # A fresh process reads the file instead of importing detect-secrets: prove it by making
        # the import fail.
        redact_mod.plugin_rules.cache_clear()
        monkeypatch.setattr(redact_detect, "_plugin_specs", lambda: (_ for _ in ()).throw(AssertionError("imported")))
        assert [r.pattern.pattern for r in redact_mod.plugin_rules()] == [r.pattern.pattern for r in first]
    finally:
        redact_mod.plugin_rules.cache_clear()


def test_cached_detect_secrets_rules_compile_only_when_triggered(tmp_path, monkeypatch) -> None:
    """A write pays only for the rules its text can set off: loading the cached rules compiles
    none (all 37 cost ≈ 10 ms a process), a text without any trigger compiles none, and a pattern
    broken by hand in the cache finds nothing instead of failing the write."""
    monkeypatch.setenv("CRIB_CACHE_DIR", str(tmp_path))
    redact_mod.plugin_rules.cache_clear()
    try:
        redact_mod.plugin_rules()
        path = tmp_path / "detect-secrets-rules.json"
        cached = json.loads(path.read_text())
        slack = next(r for r in cached["rules"] if r["kind"] == "slack-token")
        slack["pattern"] = "(unbalanced"
        path.write_text(json.dumps(cached))
        redact_mod.plugin_rules.cache_clear()
        compiled: list[str] = []
        monkeypatch.setattr(redact_detect, "re", SimpleNamespace(compile=lambda p, f=0: compiled.append(p), error=re.error))
        rules = redact_mod.plugin_rules()
        assert rules and not compiled and all(r.pattern._compiled is None for r in rules)
        find_secrets("The release runner moved from fish to zsh last week.")
        assert all(r.pattern._compiled is None for r in rules if r.triggers)
        assert find_secrets("hooks.slack.com xox and nothing else") == []
    finally:
        redact_mod.plugin_rules.cache_clear()


def test_spans_merge_on_overlap() -> None:
    text = "DB_PASSWORD=postgres://u:Pw9x!kq@h/db"
    spans = find_secrets(text)
    assert len(spans) == 1 and spans[0][2] == "url-password"
    assert redact(text) == "DB_PASSWORD=[REDACTED:url-password]"


# ----------------------------------------------------------------------------- through crib


ALL_SECRET_TEXT = "\n\n".join(c.sentence for c in SECRETS)


def _invoke(runner: CliRunner, args: list[str], env: dict[str, str], input: str | None = None) -> str:
    result = runner.invoke(cli, args, env=env, input=input, catch_exceptions=False)
    assert result.exit_code == 0, result.output
    return result.output


@pytest.fixture
def cli_env(tmp_path) -> dict[str, str]:
    return {"CRIB_DB": str(tmp_path / "crib.db"), "CRIB_PARALLEL": "0",
            "CRIB_CACHE_DIR": str(tmp_path / "cache")}


def _assert_no_secret(output: str) -> None:
    leaked = [c.secret for c in SECRETS if c.secret in output]
    assert not leaked, leaked


@pytest.mark.slow
def test_secrets_never_stored_or_shown_through_the_cli(cli_env: dict[str, str]) -> None:
    runner = CliRunner()
    for case in SECRETS:
        _invoke(runner, ["write"], cli_env, input=case.sentence)
    for text in LOOKALIKES:
        _invoke(runner, ["write"], cli_env, input=text)
    exported = _invoke(runner, ["export"], cli_env)
    _assert_no_secret(exported)
    contents = [json.loads(line)["content"] for line in exported.splitlines()]
    for text in LOOKALIKES:
        assert text.strip() in contents, text
    for query in ["password", "token key", "Stripe Slack GitHub", "curl Authorization Bearer", "postgres DB"]:
        _assert_no_secret(_invoke(runner, ["retrieve", query], cli_env))
        _assert_no_secret(_invoke(runner, ["search", "--json", query], cli_env))


def test_import_is_redacted(cli_env: dict[str, str], tmp_path) -> None:
    runner = CliRunner()
    path = tmp_path / "in.jsonl"
    path.write_text("\n".join(json.dumps({"content": c.sentence}) for c in SECRETS[:20]), encoding="utf-8")
    _invoke(runner, ["import", str(path)], cli_env)
    _assert_no_secret(_invoke(runner, ["export"], cli_env))


# ------------------------------------------------------------------------------ render pass


def _entry(content: str, entry_id: int = 1) -> Entry:
    return Entry(id=entry_id, type="note", content=content, created_at="2026-11-01T10:00:00+00:00", metadata={})


def test_render_redacts_text_stored_before_redaction_existed(monkeypatch) -> None:
    monkeypatch.delenv("CRIB_REDACT", raising=False)
    entries = [_entry(c.sentence, i) for i, c in enumerate(SECRETS, start=1)]
    block = render_block(entries)
    _assert_no_secret(block)
    assert block.count("[REDACTED:") >= len(SECRETS)


def test_render_leaves_lookalikes(monkeypatch) -> None:
    monkeypatch.delenv("CRIB_REDACT", raising=False)
    block = render_block([_entry(t, i) for i, t in enumerate(LOOKALIKES, start=1)])
    assert "[REDACTED" not in block
    for text in LOOKALIKES:
        if "<" not in text:
            assert text in block, text


# --------------------------------------------------------------------------------- opt-out


def test_opt_out_keeps_text_verbatim(cli_env: dict[str, str], monkeypatch) -> None:
    case = next(c for c in SECRETS if c.kind == "github-token")
    monkeypatch.setenv("CRIB_REDACT", "0")
    assert redact(case.sentence) == case.sentence
    assert case.secret in render_block([_entry(case.sentence)])
    runner = CliRunner()
    env = dict(cli_env, CRIB_REDACT="0")
    _invoke(runner, ["write"], env, input=case.sentence)
    assert case.secret in _invoke(runner, ["export"], env)
    monkeypatch.setenv("CRIB_REDACT", "1")
    assert case.secret not in redact(case.sentence)
    monkeypatch.setenv("CRIB_REDACT", "bogus")  # malformed: fails safe, redaction stays on
    assert case.secret not in redact(case.sentence)


# ------------------------------------------------------------------------------ bounded cost


@pytest.mark.parametrize(
    "text",
    [
        "eyJ" * 30_000,
        "sk-" * 30_000,
        "password " * 10_000,
        "DB_PASSWORD=" * 10_000,
        "a://b:" * 15_000,
        "-----BEGIN RSA PRIVATE KEY-----" * 3_000,
        "A" * 100_000,
        "x_" * 50_000,
    ],
    ids=lambda t: t[:12],
)
def test_adversarial_inputs_complete(text: str) -> None:
    # No wall-time assertion (figures live in bench/); a super-linear rule would make this hang.
    assert isinstance(redact(text), str)
    assert isinstance(redact_for_render(text), str)


def test_marker_format() -> None:
    assert re.fullmatch(r"\[REDACTED:[a-z0-9-]+\]", redact_mod.marker("aws-secret-key"))


def test_secrets_stored_verbatim_earlier_are_redacted_when_shown(cli_env: dict[str, str]) -> None:
    # Stored with redaction off (as by an older crib, or another tool), shown with it on.
    runner = CliRunner()
    raw_env = dict(cli_env, CRIB_REDACT="0")
    for case in SECRETS[:25]:
        _invoke(runner, ["write"], raw_env, input=case.sentence)
    assert any(c.secret in _invoke(runner, ["export"], raw_env) for c in SECRETS[:25])
    for query in ["key token", "password", "Stripe Slack GitHub AWS"]:
        _assert_no_secret(_invoke(runner, ["retrieve", query], cli_env))
        _assert_no_secret(_invoke(runner, ["retrieve", "--format", "context", query], cli_env))
        _assert_no_secret(_invoke(runner, ["search", "--json", query], cli_env))
        _assert_no_secret(_invoke(runner, ["search", query], cli_env))
    # the management commands and export redact too (content and metadata); --raw is the faithful backup
    _assert_no_secret(_invoke(runner, ["export"], cli_env))
    _assert_no_secret(_invoke(runner, ["list", "--limit", "0"], cli_env))
    _assert_no_secret(_invoke(runner, ["list", "--json", "--limit", "0"], cli_env))
    for entry_id in range(1, 26):
        _assert_no_secret(_invoke(runner, ["show", str(entry_id)], cli_env))
        _assert_no_secret(_invoke(runner, ["show", "--json", str(entry_id)], cli_env))
    _assert_no_secret(_invoke(runner, ["facts", "--all"], cli_env))
    raw = _invoke(runner, ["export", "--raw"], cli_env)
    assert all(c.secret in raw for c in SECRETS[:25] if c.secret in c.sentence)


def test_metadata_is_redacted_on_export(cli_env: dict[str, str]) -> None:
    case = next(c for c in SECRETS if c.kind == "github-token")
    runner = CliRunner()
    path = Path(cli_env["CRIB_DB"]).parent / "in.jsonl"
    path.write_text(json.dumps({"content": "CI pushes tags.", "metadata": {"note": case.sentence}}), encoding="utf-8")
    _invoke(runner, ["import", str(path)], dict(cli_env, CRIB_REDACT="0"))  # stored verbatim, as by an older crib
    assert case.secret in _invoke(runner, ["export", "--raw"], cli_env)
    _assert_no_secret(_invoke(runner, ["export"], cli_env))
    _assert_no_secret(_invoke(runner, ["show", "1"], cli_env))


AWS_DOC_ID, AWS_DOC_SECRET = "AKIAIOSFODNN7EXAMPLE", "wJalrXUtnFEMI/K7MDENG/bPxRfiCYEXAMPLEKEY"  # AWS documentation's pair


@pytest.mark.parametrize("text", [
    f"Credentials for the test bucket: {AWS_DOC_ID} {AWS_DOC_SECRET}",
    f"use access key id {AWS_DOC_ID} and secret access key {AWS_DOC_SECRET} for the test bucket",
    f"key pair: {AWS_DOC_SECRET}\nid: {AWS_DOC_ID}",
    f"aws configure: {AWS_DOC_ID} / {AWS_DOC_SECRET}",
])
def test_aws_secret_key_next_to_its_access_key_id_is_redacted_with_it(text: str) -> None:
    out = redact(text)
    assert AWS_DOC_ID not in out and AWS_DOC_SECRET not in out, out
    assert "[REDACTED:aws-access-key-id]" in out and "[REDACTED:aws-secret-key]" in out


def test_aws_secret_key_pair_is_not_stored(memory) -> None:
    entry = memory.entry(memory.write(f"Test bucket credentials: {AWS_DOC_ID} {AWS_DOC_SECRET}"))
    assert AWS_DOC_SECRET not in entry.content and AWS_DOC_ID not in entry.content


def test_a_git_sha_beside_an_access_key_id_is_not_a_secret() -> None:
    sha = "3f5e2a9c1b7d4e6f8a0b2c4d6e8f0a1b3c5d7e9f"
    assert sha in redact(f"{AWS_DOC_ID} was rotated in commit {sha}")


MARKED_PAIR = f"[REDACTED:aws-access-key-id] and secret {AWS_DOC_SECRET} for the test bucket"


@pytest.mark.parametrize("text", [MARKED_PAIR, f"{AWS_DOC_SECRET} goes with [REDACTED:aws-access-key-id]"])
def test_a_secret_beside_crib_s_own_marker_is_redacted(text: str) -> None:
    # An older crib redacted the key id and kept its secret: what its stores hold.
    for out in (redact(text), redact_for_render(text)):
        assert AWS_DOC_SECRET not in out and "[REDACTED:aws-secret-key]" in out, out


NEW_KINDS = ("url-password", "discord-webhook", "vault-token", "atlassian-token", "linear-key", "grafana-token")


def test_an_older_store_s_verbatim_secrets_are_redacted_on_every_read(cli_env: dict[str, str], monkeypatch) -> None:
    """Stored verbatim (an older crib, or CRIB_REDACT=0), read with redaction on: retrieve, search,
    list, show, export and the MCP tools (show, search, list_memories, grep) never print them."""
    from crib_plugin.hosts import mcp_server

    cases = [c for c in SECRETS if c.kind in NEW_KINDS]
    texts = [c.sentence for c in cases] + [MARKED_PAIR]
    runner = CliRunner()
    raw_env = dict(cli_env, CRIB_REDACT="0")
    for text in texts:
        _invoke(runner, ["write"], raw_env, input=text)
    raw = _invoke(runner, ["export", "--raw"], cli_env)
    assert AWS_DOC_SECRET in raw and all(c.secret in raw for c in cases)

    def clean(output: str) -> None:
        leaked = [c.secret for c in cases if c.secret in output] + ([AWS_DOC_SECRET] if AWS_DOC_SECRET in output else [])
        assert not leaked, (leaked, output[:500])

    for query in ["redis queue", "webhook alerts Discord", "vault token staging", "Jira API token",
                  "Linear sync", "Grafana token", "test bucket secret"]:
        clean(_invoke(runner, ["retrieve", query], cli_env))
        clean(_invoke(runner, ["search", "--json", query], cli_env))
    clean(_invoke(runner, ["export"], cli_env))
    clean(_invoke(runner, ["list", "--json", "--limit", "0"], cli_env))
    for entry_id in range(1, len(texts) + 1):
        clean(_invoke(runner, ["show", "--json", str(entry_id)], cli_env))
    for key, value in cli_env.items():
        monkeypatch.setenv(key, value)
    for entry_id in range(1, len(texts) + 1):
        clean(mcp_server.show(entry_id))
    clean(json.dumps(mcp_server.list_memories(limit=100)))
    clean(json.dumps(mcp_server.grep(list(range(1, len(texts) + 1)), ["token", "secret", "webhook"])))
    clean(json.dumps(mcp_server.search("token webhook secret redis", limit=50)))
