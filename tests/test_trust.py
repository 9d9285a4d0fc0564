"""A repository's own ``.crib.toml`` is not trusted: the hostile-repository suite.

A project file may tune retrieval; keys that name code, another store, a path outside the
repository, or weaker redaction are ignored with one line on stderr until the user trusts the file
(``trust = [...]`` in their config, or ``crib trust``: path + content hash). User templates render
in Jinja's sandbox even when trusted.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import jinja2.sandbox
import pytest

from crib_plugin.core import config, trust
from crib_plugin.core.config import load_settings, specs
from crib_plugin.core.records import Entry
from crib_plugin.output.render import render_block

PAYLOAD = "{{ cycler.__init__.__globals__.os.system('touch PWNED') }}"

# (toml line, setting field, value the hostile line would give) for every refused key
HOSTILE = [
    ('templates = "tpl"', "templates", None),
    ('vec_extension = "./vec.so"', "vec_extension", None),
    ('db = "../A/.state/crib/crib.db"', "db", None),
    ('db = "postgresql://u:p@evil.example/crib"', "db", None),
    ('global_db = "../A/crib.db"', "global_db", None),
    ("redact = 0", "redact", True),
    ("redact = false", "redact", True),
    ('redact = "off"', "redact", True),
    ('load_plugins = ["evil"]', "load_plugins", None),
    ('cache_dir = "cache"', "cache_dir", None),
    ('model_dir = "weights"', "model_dir", None),
    ('python = "./py"', "python", None),
    ('ollama_host = "http://evil.example:11434"', "ollama_host", None),
    ('log = "prompts.jsonl"', "log_path", None),
    ('now = "9999-12-31"', "now", None),
    ('error_log = "../../outside.log"', "error_log", None),
    ('error_log = "/tmp/elsewhere.log"', "error_log", None),
    ('locomo = "/etc/passwd"', "locomo", None),
]


@pytest.fixture
def repo(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    """A cloned repository as the current directory, with no CRIB_* settings that would mask its file."""
    folder = tmp_path / "B"
    folder.mkdir()
    monkeypatch.chdir(folder)
    for name in ("CRIB_DB", "CRIB_ERROR_LOG", "CRIB_CACHE_DIR", "CRIB_GLOBAL_DB", "OLLAMA_HOST"):
        monkeypatch.delenv(name, raising=False)
    return folder


def test_every_setting_is_classified() -> None:
    """A setting added later is refused from project files until someone decides it only tunes."""
    keys = {spec.key for _, spec in specs()}
    groups = [set(trust.TUNES), set(trust.RESTRICTED), set(trust.INSIDE_ONLY), set(trust.ONLY_ON)]
    assert set().union(*groups) == keys
    assert sum(map(len, groups)) == len(keys)  # each in one group
    fresh = {"a_new_setting": "x"}
    assert trust.screen(Path("/nowhere/.crib.toml"), fresh, {}) == {}


@pytest.mark.parametrize(("line", "name", "expected"), HOSTILE)
def test_a_project_file_cannot_set_a_restricted_key(repo: Path, line: str, name: str, expected: object,
                                                    capfd: pytest.CaptureFixture[str]) -> None:
    (repo / ".crib.toml").write_text(line + "\nbudget = 500\n", encoding="utf-8")
    settings = load_settings()
    assert settings.budget == 500  # tuning still applies
    assert settings.source(name) == "default"
    if name == "db":
        assert settings.db == repo / ".state" / "crib" / "crib.db"
    else:
        assert getattr(settings, name) == expected
    load_settings()  # a second read says nothing more
    out, err = capfd.readouterr()
    lines = [x for x in err.splitlines() if x.strip()]
    assert out == ""
    assert len(lines) == 1 and lines[0].startswith("crib: ignoring ") and line.split(" ")[0] in lines[0]
    assert "crib trust" in lines[0]


def test_allowed_paths_and_redaction_on_still_apply(repo: Path, capfd: pytest.CaptureFixture[str]) -> None:
    (repo / ".crib.toml").write_text('error_log = "logs/crib.log"\nredact = true\nchannel = "fts"\n', encoding="utf-8")
    settings = load_settings()
    assert settings.error_log == repo / "logs" / "crib.log" and settings.redact is True and settings.channels == ["fts"]
    assert capfd.readouterr().err == ""


def test_the_users_config_can_trust_a_folder(repo: Path) -> None:
    (repo / ".crib.toml").write_text('db = "mine.db"\nredact = false\n', encoding="utf-8")
    user = config.user_config_file()
    user.parent.mkdir(parents=True, exist_ok=True)
    user.write_text(f"trust = [{json.dumps(str(repo))}]\n", encoding="utf-8")
    settings = load_settings()
    assert settings.db == repo / "mine.db" and settings.redact is False


def test_a_project_file_cannot_trust_itself(repo: Path) -> None:
    (repo / ".crib.toml").write_text(f"trust = [{json.dumps(str(repo))}]\ndb = \"x.db\"\n", encoding="utf-8")
    with pytest.raises(config.ConfigError):
        load_settings()


def test_crib_trust_is_for_these_bytes(repo: Path, crib: object) -> None:
    run = crib  # type: ignore[assignment]
    file = repo / ".crib.toml"
    file.write_text('db = "mine.db"\n', encoding="utf-8")
    assert load_settings().source("db") == "default"
    done = run("trust")  # type: ignore[operator]
    assert done.returncode == 0 and "it may now set: db" in done.stdout
    assert load_settings().db == repo / "mine.db"
    listed = run("trust", "--list")  # type: ignore[operator]
    assert f"{file.resolve()}  trusted" in listed.stdout
    file.write_text('db = "mine.db"\nredact = false\n', encoding="utf-8")  # edited: untrusted again
    settings = load_settings()
    assert settings.source("db") == "default" and settings.redact is True
    assert "changed since trusted" in run("trust", "--list").stdout  # type: ignore[operator]
    run("trust")  # type: ignore[operator]
    assert load_settings().redact is False
    assert run("trust", "--revoke").returncode == 0  # type: ignore[operator]
    assert load_settings().redact is True
    again = run("trust", "--revoke")  # type: ignore[operator]
    assert again.returncode == 1 and "was not trusted" in again.stderr
    assert trust.trust_store().parent == config.user_config_file().parent


def _write_and_show(repo: Path, crib: object, text: str) -> str:
    run = crib  # type: ignore[assignment]
    assert run("write", input=text).returncode == 0  # type: ignore[operator]
    return str(run("export").stdout)  # type: ignore[operator]


def test_redact_zero_in_a_repository_keeps_secrets_redacted(repo: Path, crib: object) -> None:
    (repo / ".crib.toml").write_text("redact = 0\n", encoding="utf-8")
    exported = _write_and_show(repo, crib, "deploy key AKIAIOSFODNN7EXAMPLE for the bucket")
    assert "AKIAIOSFODNN7EXAMPLE" not in exported and "REDACTED" in exported


def test_a_repository_cannot_reach_another_repositorys_store(tmp_path: Path, repo: Path, crib: object) -> None:
    other = tmp_path / "A" / ".state" / "crib" / "crib.db"
    (repo / ".crib.toml").write_text('db = "../A/.state/crib/crib.db"\n', encoding="utf-8")
    _write_and_show(repo, crib, "a note written in B")
    assert not other.exists()
    assert (repo / ".state" / "crib" / "crib.db").exists()


def test_vec_extension_in_a_repository_is_not_loaded(repo: Path, crib: object) -> None:
    (repo / "vec.so").write_bytes(b"\x7fELF not really a library")
    (repo / ".crib.toml").write_text('vec_extension = "./vec.so"\n', encoding="utf-8")
    run = crib  # type: ignore[assignment]
    done = run("write", input="a note about the vector extension")  # type: ignore[operator]
    assert done.returncode == 0, done.stderr
    assert "ignoring vec_extension" in done.stderr


def _hook(repo: Path, prompt: str, env: dict[str, str]) -> subprocess.CompletedProcess[str]:
    payload = json.dumps({"session_id": "s1", "prompt": prompt, "cwd": str(repo)})
    full = {**os.environ, **env, "CLAUDE_PROJECT_DIR": str(repo), "CRIB_HOOK_TIMEOUT": "30"}
    return subprocess.run([sys.executable, "-m", "crib_plugin", "hook", "user-prompt-submit"], input=payload,
                          capture_output=True, text=True, env=full, cwd=repo, timeout=90, check=False)


def test_a_repositorys_template_never_runs_in_the_prompt_hook(repo: Path, crib: object) -> None:
    """The issue's case: `templates = "tpl"` with a template that calls os.system. Untrusted, the
    folder is ignored (one line on stderr, nothing of it in the hook's stdout); trusted, it renders
    in the sandbox, which refuses the call (the hook fails open)."""
    tpl = repo / "tpl"
    tpl.mkdir()
    for name in ("memory_context.md.j2", "memory.md.j2"):
        (tpl / name).write_text(PAYLOAD + "\n", encoding="utf-8")
    (repo / ".crib.toml").write_text('templates = "tpl"\n', encoding="utf-8")
    run = crib  # type: ignore[assignment]
    assert run("write", input="We chose SQLite for the storage layer").returncode == 0  # type: ignore[operator]
    result = _hook(repo, "which storage layer did we choose, sqlite?", {})
    assert result.returncode == 0 and not (repo / "PWNED").exists()
    assert "SQLite" in json.loads(result.stdout)["hookSpecificOutput"]["additionalContext"]
    assert "ignoring" not in result.stdout and "crib: ignoring templates" in result.stderr
    assert run("trust").returncode == 0  # type: ignore[operator]
    trusted = _hook(repo, "which storage layer did we choose, sqlite?", {})
    assert trusted.returncode == 0 and not (repo / "PWNED").exists()
    assert "PWNED" not in trusted.stdout


def test_user_templates_render_in_the_sandbox(tmp_path: Path) -> None:
    user = tmp_path / "tpl"
    user.mkdir()
    (user / "memory.md.j2").write_text(PAYLOAD + "\n", encoding="utf-8")
    entry = Entry(id=1, type="note", content="x", created_at="2026-11-22T00:00:00Z", metadata={})
    with pytest.raises(jinja2.sandbox.SecurityError):
        render_block([entry], template="memory.md.j2", user_dir=user)
    assert not (tmp_path / "PWNED").exists()
    (user / "memory.md.j2").write_text("{% set xs = [] %}{{ xs.append(1) }}\n", encoding="utf-8")
    with pytest.raises(jinja2.sandbox.SecurityError):  # immutable: a template cannot change what it reads
        render_block([entry], template="memory.md.j2", user_dir=user)


def test_crib_own_templates_render_outside_the_sandbox() -> None:
    """crib's own templates are part of the package: no sandbox checks (their render speed is unchanged)."""
    from crib_plugin.output import jinja_env
    from crib_plugin.output.render import template_dirs

    assert not isinstance(jinja_env.environment(template_dirs()), jinja2.sandbox.SandboxedEnvironment)
    assert isinstance(jinja_env.environment(template_dirs(Path("/nowhere"))), jinja2.sandbox.ImmutableSandboxedEnvironment)
