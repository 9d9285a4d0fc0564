"""The one ``Settings`` object: precedence, sources, malformed values, the settings table in docs/configuration.md, ``crib config``."""

from __future__ import annotations

import json
import re
from pathlib import Path

import pytest
from click.testing import CliRunner

from crib_plugin.core import config
from crib_plugin.core.config import ConfigError, Settings, describe, get_settings, load_settings, readme_table, specs

ROOT = Path(__file__).resolve().parent.parent


def _user_file(tmp_path: Path, text: str) -> Path:
    file = Path(config.user_config_file())
    file.parent.mkdir(parents=True, exist_ok=True)
    file.write_text(text, encoding="utf-8")
    return file


def test_every_variable_the_code_reads_is_declared() -> None:
    """No module reads a CRIB_*/OLLAMA_* variable behind the Settings object's back (writes are fine)."""
    declared = {spec.var for _, spec in specs()}
    offenders = []
    for file in (ROOT / "crib_plugin").rglob("*.py"):
        if file.name == "config.py":
            continue
        source = file.read_text(encoding="utf-8")
        for match in re.finditer(r"(?:environ(?:\.get)?[\[(]|getenv\()\s*\"((?:CRIB|OLLAMA)_[A-Z_]+)\"(?!\]\s*=[^=])", source):
            offenders.append(f"{file.name}: {match.group(1)}")
    assert offenders == []
    assert {"CRIB_ERROR_LOG", "CRIB_LOCOMO", "CRIB_PYTHON", "OLLAMA_HOST"} <= declared
    assert len(declared) == len(list(specs()))  # one declaration per variable


def test_defaults_come_from_the_declarations() -> None:
    settings = Settings()
    assert settings.budget == 8000 and settings.parallel == "auto" and settings.plugin_cache is True
    assert settings.db == Path(".state/crib/crib.db")


def test_env_beats_project_file_beats_user_file(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    _user_file(tmp_path, 'budget = 5000\nrerank = "mmr"\nextraction_model = "user-model"\n')
    (tmp_path / ".crib.toml").write_text('budget = 6000\nrerank = "off"\n', encoding="utf-8")
    monkeypatch.setenv("CRIB_BUDGET", "7000")
    settings = load_settings()
    assert (settings.budget, settings.source("budget")) == (7000, "env")
    assert settings.rerank == "off" and settings.source("rerank").startswith("project file")
    assert settings.extraction_model == "user-model" and settings.source("extraction_model").startswith("user file")
    assert settings.source("hook_timeout") == "default"
    monkeypatch.delenv("CRIB_BUDGET")
    assert load_settings().budget == 6000


def test_toml_values_use_the_same_parsers(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delenv("CRIB_DB")
    (tmp_path / ".crib.toml").write_text(
        'db = "sub/x.db"\nchannel = ["triples", "fts"]\nplugin_cache = false\nload_plugins = []\n', encoding="utf-8")
    _user_file(tmp_path, f"trust = [{json.dumps(str(tmp_path))}]\n")  # db and load_plugins need the user's trust
    settings = load_settings()
    assert settings.db == tmp_path / "sub" / "x.db"  # relative to the file's folder
    assert settings.channels == ["facts", "fts"]
    assert settings.plugin_cache is False and settings.load_plugins == []


@pytest.mark.parametrize(
    ("var", "value", "accepted"),
    [
        ("CRIB_BUDGET", "lots", "an integer >= 200"),
        ("CRIB_BUDGET", "100", "an integer >= 200"),
        ("CRIB_PARALLEL", "maybe", "one of auto, 1, true"),
        ("CRIB_PLUGIN_CACHE", "perhaps", "one of 1, true, yes, on, 0, false, no, off"),
        ("CRIB_OLLAMA_TIMEOUT", "-1", "a number > 0"),
        ("CRIB_SESSION_TTL_DAYS", "soon", "a number >= 0"),
        ("CRIB_LOG_PROMPTS", "some", "one of full, hash"),
    ],
)
def test_a_malformed_value_names_the_variable_and_what_it_accepts(
    monkeypatch: pytest.MonkeyPatch, var: str, value: str, accepted: str
) -> None:
    monkeypatch.setenv(var, value)
    with pytest.raises(ConfigError) as info:
        load_settings()
    assert str(info.value).startswith(f"{var} must be {accepted}")
    assert repr(value) in str(info.value)


def test_a_malformed_file_value_names_the_file(tmp_path: Path) -> None:
    (tmp_path / ".crib.toml").write_text('budget = "lots"\n', encoding="utf-8")
    with pytest.raises(ConfigError, match=r"CRIB_BUDGET \(in .*\.crib\.toml\) must be an integer"):
        load_settings()
    (tmp_path / ".crib.toml").write_text('budgte = 1\n', encoding="utf-8")
    with pytest.raises(ConfigError, match="unknown setting budgte"):
        load_settings()
    (tmp_path / ".crib.toml").write_text('budget = \n', encoding="utf-8")
    with pytest.raises(ConfigError, match="not a valid TOML file"):
        load_settings()


def test_one_boolean_parser_for_every_spelling(monkeypatch: pytest.MonkeyPatch) -> None:
    for word, expected in [("1", True), ("TRUE", True), ("yes", True), ("on", True),
                           ("0", False), ("false", False), ("No", False), ("off", False)]:
        monkeypatch.setenv("CRIB_PLUGIN_CACHE", word)
        assert load_settings().plugin_cache is expected
    monkeypatch.setenv("CRIB_PARALLEL", "yes")
    assert load_settings().parallel == "on"


def test_an_empty_load_plugins_means_none_but_an_empty_budget_means_unset(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("CRIB_LOAD_PLUGINS", "")
    monkeypatch.setenv("CRIB_BUDGET", " ")
    settings = load_settings()
    assert settings.load_plugins == [] and settings.budget == 8000


def test_get_settings_is_parsed_once_per_environment(monkeypatch: pytest.MonkeyPatch) -> None:
    first = get_settings()
    assert get_settings() is first
    monkeypatch.setenv("CRIB_BUDGET", "900")
    assert get_settings() is not first and get_settings().budget == 900
    monkeypatch.setenv("XDG_CONFIG_HOME", "/nonexistent-crib-test")  # watched too (the user file)
    second = get_settings()
    assert second is not first and second.budget == 900
    monkeypatch.delenv("CRIB_BUDGET")
    assert get_settings().budget == 8000  # an unset variable counts as a change too


def test_documented_table_matches_the_declarations() -> None:
    documented = (ROOT / "docs" / "configuration.md").read_text(encoding="utf-8")
    assert readme_table() in documented, "regenerate the table in docs/configuration.md from crib_plugin.core.config.readme_table()"
    rows = [line for line in documented.splitlines() if re.match(r"^\| `(CRIB|OLLAMA)_[A-Z_]+` \| `", line)]
    assert len(rows) == len(list(specs()))


def test_describe_and_crib_config(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    from crib_plugin.hosts.cli.app import cli, load_plugin_commands

    (tmp_path / ".crib.toml").write_text("budget = 6000\n", encoding="utf-8")
    monkeypatch.setenv("CRIB_RERANK", "mmr")
    rows = {r["variable"]: r for r in describe(load_settings())}
    assert rows["CRIB_BUDGET"]["source"] == "project file" and rows["CRIB_BUDGET"]["value"] == 6000
    assert rows["CRIB_RERANK"]["source"] == "env" and rows["CRIB_HOOK_TIMEOUT"]["source"] == "default"
    load_plugin_commands()
    result = CliRunner().invoke(cli, ["config", "--json"])
    assert result.exit_code == 0, result.output
    shown = {r["variable"]: r for r in json.loads(result.output)}
    assert shown["CRIB_BUDGET"]["file"].endswith(".crib.toml") and shown["CRIB_RERANK"]["value"] == "mmr"
    text = CliRunner().invoke(cli, ["config"]).output
    assert re.search(r"CRIB_BUDGET\s+6000\s+\[project file", text) and re.search(r"CRIB_RERANK\s+mmr\s+\[env\]", text)
    monkeypatch.setenv("CRIB_BUDGET", "oops")
    broken = CliRunner().invoke(cli, ["config"])
    assert broken.exit_code == 1 and "CRIB_BUDGET must be an integer" in broken.output


def test_the_user_file_is_where_platformdirs_says(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
    import platformdirs

    for xdg in (str(tmp_path / "xdg"), ""):
        monkeypatch.setenv("XDG_CONFIG_HOME", xdg)
        assert config.user_config_file() == Path(platformdirs.user_config_dir("crib")) / "config.toml"


def test_eval_settings_keep_the_judge(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """`crib eval --judge-model M` on LoCoMo: its stores open with Settings.for_eval, which must keep
    the judge (and nothing else a user set, such as CRIB_CHANNEL)."""
    monkeypatch.setenv("CRIB_JUDGE_MODEL", "qwen2.5:3b")
    monkeypatch.setenv("CRIB_JUDGE_DEADLINE", "9")
    monkeypatch.setenv("CRIB_CHANNEL", "fts")
    settings = Settings.for_eval(tmp_path / "x.db")
    assert (settings.judge, settings.judge_model, settings.judge_deadline) == ("auto", "qwen2.5:3b", 9.0)
    assert settings.channels != ["fts"]
