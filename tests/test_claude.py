"""Claude Code integration: ``crib hook …`` in fresh processes, the plugin files and the launcher.

Positive tests give the hook a generous ``CRIB_HOOK_TIMEOUT``: the default 2 s budget is for a
person's machine, and a loaded 2-core CI box can need more than that for a cold process that loads
the offline model. The budget itself is tested with a hanging (fake) Ollama.
"""

from __future__ import annotations

import io
import json
import os
import re
import subprocess
import sys
import threading
import time
from pathlib import Path
from typing import Any

import pytest

from crib_plugin.core.errors import ConfigError
from crib_plugin.hosts import claude
from crib_plugin.hosts.claude import (
    CLAUDE_CONTEXT_CAP,
    MEMORY_AVAILABLE,
    HookInput,
    SessionState,
    hook_timeout,
    last_user_prompt,
    parse_hook_input,
    prune_sessions,
    resolve_db,
    sanitise_session_id,
)

ROOT = Path(__file__).resolve().parent.parent
LAUNCHER = ROOT / "bin" / "crib"
SLOW_OK = {"CRIB_HOOK_TIMEOUT": "60"}
PROMPT = "what database did we choose?"


def ups(session: str = "s1", prompt: str = PROMPT, **extra: Any) -> str:
    return json.dumps({"session_id": session, "hook_event_name": "UserPromptSubmit", "prompt": prompt,
                       "cwd": os.getcwd(), "permission_mode": "default", **extra})


def start(session: str = "s1", source: str = "compact", **extra: Any) -> str:
    return json.dumps({"session_id": session, "hook_event_name": "SessionStart", "source": source,
                       "cwd": os.getcwd(), **extra})


def context_of(stdout: str, event: str = "UserPromptSubmit") -> str:
    """The additionalContext of a hook's stdout, checking the documented nested shape."""
    payload = json.loads(stdout)
    assert set(payload) == {"hookSpecificOutput"}, "a bare top-level additionalContext is dropped by Claude Code"
    out = payload["hookSpecificOutput"]
    assert out["hookEventName"] == event
    assert isinstance(out["additionalContext"], str) and len(out["additionalContext"]) <= CLAUDE_CONTEXT_CAP
    return out["additionalContext"]


def seed(crib: Any) -> None:
    assert crib("write", input="type=decision Chose SQLite for storage. Zero dependencies.").returncode == 0


def log_lines(tmp_path: Path) -> list[str]:
    path = tmp_path / "crib.log"  # CRIB_ERROR_LOG (conftest)
    return path.read_text().splitlines() if path.exists() else []


# -- UserPromptSubmit ----------------------------------------------------------------------------


def test_prints_the_memory_block_as_hook_json(crib: Any) -> None:
    seed(crib)
    result = crib("hook", "user-prompt-submit", input=ups(), env=SLOW_OK)
    assert result.returncode == 0, result.stderr
    assert result.stdout.endswith("\n") and result.stdout.count("\n") == 1
    context = context_of(result.stdout)
    assert context.startswith("<memory-context ") and context.rstrip().endswith("</memory-context>")
    assert "recalled memory from earlier sessions" in context
    assert "decision] Chose SQLite for storage. Zero dependencies." in context


def test_second_identical_call_in_the_session_injects_nothing(crib: Any, db: Path) -> None:
    seed(crib)
    assert "Chose SQLite" in context_of(crib("hook", "user-prompt-submit", input=ups(), env=SLOW_OK).stdout)
    again = crib("hook", "user-prompt-submit", input=ups(), env=SLOW_OK)
    assert again.returncode == 0 and again.stdout == ""
    record = json.loads((db.parent / "sessions" / "s1.json").read_text())
    assert record["session_id"] == "s1" and record["entries"] == [1]


def test_another_session_gets_it_again(crib: Any) -> None:
    seed(crib)
    assert crib("hook", "user-prompt-submit", input=ups("s1"), env=SLOW_OK).stdout
    assert crib("hook", "user-prompt-submit", input=ups("s1"), env=SLOW_OK).stdout == ""
    assert "Chose SQLite" in context_of(crib("hook", "user-prompt-submit", input=ups("s2"), env=SLOW_OK).stdout)


def test_only_new_memories_are_injected_later_in_the_session(crib: Any) -> None:
    seed(crib)
    assert crib("hook", "user-prompt-submit", input=ups(), env=SLOW_OK).stdout
    assert crib("write", input="type=correction The database moved from SQLite to PostgreSQL in May.").returncode == 0
    context = context_of(crib("hook", "user-prompt-submit", input=ups(), env=SLOW_OK).stdout)
    assert "moved from SQLite to PostgreSQL" in context
    assert "Zero dependencies" not in context


def test_missing_database_prints_nothing_and_creates_nothing(crib: Any, db: Path) -> None:
    result = crib("hook", "user-prompt-submit", input=ups(), env=SLOW_OK)
    assert (result.returncode, result.stdout) == (0, "")
    assert not db.exists() and not (db.parent / "sessions").exists()


def test_corrupt_database_fails_open_and_logs_one_line(crib: Any, db: Path, tmp_path: Path) -> None:
    db.write_bytes(b"this is not a database" * 100)
    result = crib("hook", "user-prompt-submit", input=ups(), env=SLOW_OK)
    assert (result.returncode, result.stdout) == (0, "")
    assert "Traceback" not in result.stderr
    lines = log_lines(tmp_path)
    assert len(lines) == 1 and "hook user-prompt-submit" in lines[0]


def test_unreadable_database_path_fails_open(crib: Any, db: Path, tmp_path: Path) -> None:
    db.mkdir()  # a directory where the file should be (tests run as root: chmod 000 would not stop reads)
    result = crib("hook", "user-prompt-submit", input=ups(), env=SLOW_OK)
    assert (result.returncode, result.stdout) == (0, "")
    assert len(log_lines(tmp_path)) == 1


def test_garbage_and_empty_input_print_nothing(crib: Any) -> None:
    seed(crib)
    for raw in ("", "{not json", '{"session_id": "s1"}', "[1, 2]", '{"prompt": 42}'):
        result = crib("hook", "user-prompt-submit", input=raw, env=SLOW_OK)
        assert (result.returncode, result.stdout) == (0, ""), raw


def test_plain_text_on_stdin_works_for_manual_use(crib: Any) -> None:
    seed(crib)
    assert "Chose SQLite" in context_of(crib("hook", "user-prompt-submit", input=PROMPT, env=SLOW_OK).stdout)


def test_never_exits_2_even_on_usage_errors(crib: Any) -> None:
    for args in (("hook", "no-such-event"), ("hook", "user-prompt-submit", "--bogus-flag", "x"), ("hook",)):
        result = crib(*args, input=ups(), env=SLOW_OK)
        assert result.returncode == 0 and result.stdout == "", (args, result.stderr)


def test_hanging_embedder_gives_up_within_the_budget(crib: Any, fake_ollama: Any, tmp_path: Path) -> None:
    """Embedding in-process (no prefetch worker), a hanging embedder exhausts the whole budget:
    the hook gives up, prints nothing and says so in the log."""
    ollama = {"OLLAMA_HOST": fake_ollama.host, "CRIB_EMBEDDER": "ollama", "CRIB_OLLAMA_TIMEOUT": "60", "CRIB_PARALLEL": "0"}
    assert crib("write", input="type=decision Chose SQLite for storage.", env=ollama).returncode == 0
    fake_ollama.slow(20)
    started = time.monotonic()
    result = crib("hook", "user-prompt-submit", input=ups(), env={**ollama, "CRIB_HOOK_TIMEOUT": "0.5"})
    elapsed = time.monotonic() - started
    assert (result.returncode, result.stdout) == (0, "")
    assert elapsed < 10, f"the hook took {elapsed:.1f} s despite a 0.5 s budget"
    assert any("gave up after 0.5 s" in line for line in log_lines(tmp_path))
    assert fake_ollama.requests_to("/api/embed"), "the hook never reached the (hanging) embedder"


def test_hanging_embedder_leaves_the_other_channels_to_answer(crib: Any, fake_ollama: Any, tmp_path: Path) -> None:
    """With the prefetch worker, the vector channel stops waiting at 60 % of the budget and is
    reported as skipped; full text and facts still answer within the budget."""
    ollama = {"OLLAMA_HOST": fake_ollama.host, "CRIB_EMBEDDER": "ollama", "CRIB_OLLAMA_TIMEOUT": "60", "CRIB_PARALLEL": "1"}
    text = "type=decision We chose SQLite as the database for storage."
    assert crib("write", input=text, env=ollama).returncode == 0
    fake_ollama.slow(20)
    started = time.monotonic()
    result = crib("hook", "user-prompt-submit", input=ups(), env={**ollama, "CRIB_HOOK_TIMEOUT": "1.5"})
    elapsed = time.monotonic() - started
    assert result.returncode == 0 and elapsed < 10, f"the hook took {elapsed:.1f} s"
    context = context_of(result.stdout)
    assert "We chose SQLite as the database for storage." in context
    assert 'channels="fts' in context and "vector" not in context.split("skipped=")[0]
    assert "did not answer in time" in context
    assert not any("gave up" in line for line in log_lines(tmp_path))


@pytest.mark.slow
def test_output_stays_under_claude_codes_cap(crib: Any, tmp_path: Path) -> None:
    lines = [
        json.dumps({"content": f"Deployment runbook step {i}: " + ("the deploy pipeline retries flaky canary checks " * 9),
                    "type": "note"})  # each under the excerpt's length: shown whole
        for i in range(40)
    ]
    (tmp_path / "many.jsonl").write_text("\n".join(lines) + "\n")
    assert crib("import", str(tmp_path / "many.jsonl")).returncode == 0
    templates = tmp_path / "templates"  # a user template that shows each entry twice: ten of them pass 9,000
    templates.mkdir()
    (templates / "memory_context.md.j2").write_text(
        "<memory-context>\n{% for e in entries %}- {{ e.content }} / {{ e.content }}\n{% endfor %}</memory-context>\n")
    result = crib("hook", "user-prompt-submit", input=ups(prompt="how does the deploy pipeline handle canary checks?"),
                  env={**SLOW_OK, "CRIB_BUDGET": "100000", "CRIB_TEMPLATES": str(templates)})
    context = context_of(result.stdout)
    assert 6000 < len(context) <= 9500  # the hook's own budget (9,000) applies even when CRIB_BUDGET is larger


def test_a_template_that_overflows_the_cap_drops_items_until_it_fits(crib: Any, tmp_path: Path) -> None:
    seed(crib)
    crib("write", input="type=note The storage layer uses SQLite WAL mode.")
    templates = tmp_path / "templates"
    templates.mkdir()

    def run(padding: int, session: str) -> str:
        (templates / "memory_context.md.j2").write_text(
            '<memory-context context_time="{{ context_time }}">\n' + "p" * padding +
            '\n{% include "_items.md.j2" %}\n</memory-context>\n'
        )
        prompt = "how is the SQLite storage set up: WAL mode, dependencies?"  # both entries bear on it
        result = crib("hook", "user-prompt-submit", input=ups(session, prompt=prompt), env={**SLOW_OK, "CRIB_TEMPLATES": str(templates)})
        assert result.returncode == 0
        return context_of(result.stdout) if result.stdout else ""

    full = run(0, "measure")
    assert "Zero dependencies" in full and "WAL mode" in full
    # A user template 30 characters too long for both entries: the lower-ranked one is dropped.
    cut = run(CLAUDE_CONTEXT_CAP - len(full) + 30, "cut")
    assert cut and len(cut) <= CLAUDE_CONTEXT_CAP
    assert ("Zero dependencies" in cut) != ("WAL mode" in cut)
    # Far too long for anything: nothing is printed rather than a block over the cap.
    assert run(CLAUDE_CONTEXT_CAP, "none") == ""


def test_database_defaults_to_the_claude_project_dir(crib: Any, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    project = tmp_path / "project"
    project_db = project / ".state" / "crib" / "crib.db"
    assert crib("write", input="type=decision Chose SQLite for storage.", env={"CRIB_DB": str(project_db)}).returncode == 0
    monkeypatch.delenv("CRIB_DB")
    elsewhere = tmp_path / "elsewhere"
    elsewhere.mkdir()
    monkeypatch.chdir(elsewhere)
    result = crib("hook", "user-prompt-submit", input=ups(), env={**SLOW_OK, "CLAUDE_PROJECT_DIR": str(project)})
    assert "Chose SQLite" in context_of(result.stdout)
    assert (project / ".state" / "crib" / "sessions" / "s1.json").exists()
    # without CLAUDE_PROJECT_DIR the hook JSON's cwd is used
    other = crib("hook", "user-prompt-submit", input=ups("s9", cwd=str(project)), env=SLOW_OK)
    assert "Chose SQLite" in context_of(other.stdout)
    assert not (elsewhere / ".state").exists()


# -- SessionStart --------------------------------------------------------------------------------


def write_transcript(path: Path, last_prompt: str) -> Path:
    records = [
        {"type": "user", "message": {"role": "user", "content": "an old question about SQLite"}},
        {"type": "assistant", "message": {"role": "assistant", "content": [{"type": "text", "text": "ok"}]}},
        {"type": "user", "message": {"role": "user", "content": [{"type": "text", "text": last_prompt}]}},
        {"type": "assistant", "message": {"role": "assistant", "content": [{"type": "tool_use", "id": "t1"}]}},
        {"type": "user", "message": {"role": "user", "content": [{"type": "tool_result", "tool_use_id": "t1", "content": "x"}]}},
        {"type": "user", "isMeta": True, "message": {"role": "user", "content": "<local-command-stdout>x</local-command-stdout>"}},
        {"type": "system", "content": "Conversation compacted"},
    ]
    path.write_text("\n".join(json.dumps(r) for r in records) + "\n")
    return path


def test_session_start_after_compact_reinjects_and_resets_the_session(crib: Any, db: Path, tmp_path: Path) -> None:
    seed(crib)  # a standing decision
    crib("write", input="type=note Sourdough needs a twelve hour cold proof in the fridge.")
    crib("write", input="type=note The flaky canary check in the deploy pipeline times out after 90 seconds.")
    bread = ups(prompt="how long should the sourdough proof?")
    assert "Sourdough" in context_of(crib("hook", "user-prompt-submit", input=bread, env=SLOW_OK).stdout)
    assert crib("hook", "user-prompt-submit", input=bread, env=SLOW_OK).stdout == ""

    transcript = write_transcript(tmp_path / "t.jsonl", "why does the deploy pipeline canary check time out?")
    result = crib("hook", "session-start", input=start(transcript_path=str(transcript)), env=SLOW_OK)
    assert result.returncode == 0, result.stderr
    context = context_of(result.stdout, "SessionStart")
    line, block = context.split("\n", 1)
    assert line == MEMORY_AVAILABLE and block.startswith("<memory-context ")
    assert "Chose SQLite for storage" in context  # standing decision
    assert "canary check in the deploy pipeline" in context  # top hit for the transcript's last prompt
    assert "Sourdough" not in context
    record = json.loads((db.parent / "sessions" / "s1.json").read_text())
    assert "Sourdough" not in json.dumps(record) and len(record["entries"]) == 2
    # the compacted context no longer holds the sourdough note: the next prompt may inject it again
    assert "Sourdough" in context_of(crib("hook", "user-prompt-submit", input=bread, env=SLOW_OK).stdout)
    # … while what session start just injected is not repeated
    again = crib("hook", "user-prompt-submit", input=ups(prompt="which database did we choose for storage?"), env=SLOW_OK)
    assert "Chose SQLite" not in again.stdout


def test_session_start_on_startup_injects_standing_memories(crib: Any) -> None:
    seed(crib)
    crib("write", input="type=correction Tests run with pytest -q, not unittest.")
    crib("write", input="type=note Lunch is at noon.")
    crib("write", input="type=preference The user wants commit messages in the imperative mood.")
    crib("write", input="type=error ImportError on numpy 2: pin numpy<2 in the lock file.")
    result = crib("hook", "session-start", input=start("fresh", "startup"), env=SLOW_OK)
    context = context_of(result.stdout, "SessionStart")
    assert "Chose SQLite" in context and "pytest -q" in context and "imperative mood" in context
    assert "Lunch" not in context and "ImportError" not in context  # notes and errors are not standing


def test_session_start_lists_older_preferences_as_pointers_and_no_prompt_repeats_them(crib: Any, memory: Any, db: Path) -> None:
    """Every preference stays within one ``show``: the newest in full, the older ones as an index of
    one-line pointers (the session's record keeps them, so no prompt's block points to them again)."""
    from crib_plugin.hosts.claude import INDEX_LIMIT, PREFERENCE_LIMIT

    topics = ["tabs", "spaces", "pytest", "ruff", "mypy", "uv", "zsh", "neovim", "british spelling", "small PRs",
              "squash merges", "conventional commits", "no mocks", "typed props", "cargo fmt", "Europe/Berlin time",
              "no lodash", "named exports", "structured logs", "rebase", "docs in the same PR", "Keep a Changelog"]
    for day, topic in enumerate(topics, 1):
        memory.write(f"The user wants {topic} in every project, whatever the task at hand.", type="preference",
                     created_at=f"2026-01-{day:02d}T10:00:00Z")
    context = context_of(crib("hook", "session-start", input=start("fresh", "startup"), env=SLOW_OK).stdout, "SessionStart")
    full, index = context.split("## More standing memories (`show` tool / `crib show ID`)\n")
    newest, older = topics[::-1][:PREFERENCE_LIMIT], topics[::-1][PREFERENCE_LIMIT:PREFERENCE_LIMIT + INDEX_LIMIT]
    assert all(f"wants {t} in every project, whatever the task at hand." in full for t in newest)
    lines = [line for line in index.splitlines() if line.startswith("- #")]
    assert len(lines) == len(older) and all(f"wants {t} in" in line for t, line in zip(older, lines))
    assert not any(f"wants {t} in" in full for t in older)
    record = json.loads((db.parent / "sessions" / "fresh.json").read_text())
    pointed = {int(line.split()[1][1:]) for line in lines}
    assert set(record["pointers"]) == pointed
    question = "which merge style do I want, squash merges or rebase?"
    elsewhere = context_of(crib("hook", "user-prompt-submit", input=ups("other", question), env=SLOW_OK).stdout)
    assert pointed & {int(n) for n in re.findall(r"^- #(\d+) ", elsewhere, re.M)}  # another session is pointed to them
    here = crib("hook", "user-prompt-submit", input=ups("fresh", question), env=SLOW_OK).stdout
    assert not pointed & {int(n) for n in re.findall(r"^- #(\d+) ", context_of(here) if here else "", re.M)}


def test_session_start_leaves_out_a_corrected_decision(crib: Any) -> None:
    seed(crib)  # entry 1
    assert crib("correct", "1", "Chose Postgres for storage after all: several writers.").returncode == 0
    context = context_of(crib("hook", "session-start", input=start("fresh", "startup"), env=SLOW_OK).stdout, "SessionStart")
    assert "Chose Postgres for storage after all" in context and "Zero dependencies" not in context


def test_session_start_with_unreadable_transcript_still_injects_standing(crib: Any) -> None:
    seed(crib)
    result = crib("hook", "session-start", input=start(transcript_path="/nonexistent/t.jsonl"), env=SLOW_OK)
    assert "Chose SQLite" in context_of(result.stdout, "SessionStart")


def test_session_start_without_database_prints_only_the_availability_line(crib: Any, db: Path) -> None:
    result = crib("hook", "session-start", input=start(), env=SLOW_OK)
    assert result.returncode == 0 and context_of(result.stdout, "SessionStart") == MEMORY_AVAILABLE
    assert not db.exists()  # nothing is created by looking


def test_session_start_with_nothing_standing_prints_no_block(crib: Any) -> None:
    crib("write", input="type=note Lunch is at noon.")
    result = crib("hook", "session-start", input=start("fresh", "startup"), env=SLOW_OK)
    assert context_of(result.stdout, "SessionStart") == MEMORY_AVAILABLE


def test_session_start_fails_open_on_corrupt_database(crib: Any, db: Path) -> None:
    db.write_bytes(b"\0garbage" * 500)
    result = crib("hook", "session-start", input=start(), env=SLOW_OK)
    assert (result.returncode, result.stdout) == (0, "")


# -- the plugin files ----------------------------------------------------------------------------


def test_plugin_manifest() -> None:
    manifest = json.loads((ROOT / ".claude-plugin" / "plugin.json").read_text())
    assert manifest["name"] == "crib"
    assert manifest["description"] and manifest["version"] and manifest["author"]["name"]


def test_hooks_json_wires_both_events_through_the_launcher() -> None:
    config = json.loads((ROOT / "hooks" / "hooks.json").read_text())
    assert config["description"]
    hooks = config["hooks"]
    assert set(hooks) == {"UserPromptSubmit", "SessionStart", "MessageDisplay"}
    assert hooks["SessionStart"][0]["matcher"] == "startup|resume|clear|compact|fork"
    pairs = (("UserPromptSubmit", "user-prompt-submit"), ("SessionStart", "session-start"), ("MessageDisplay", "message-display"))
    for event, sub in pairs:
        (entry,) = hooks[event][0]["hooks"]
        assert entry["type"] == "command"
        assert entry["command"] == f'"${{CLAUDE_PLUGIN_ROOT}}/bin/crib" hook {sub}'
        assert 0 < entry["timeout"] <= 30
    assert os.access(LAUNCHER, os.X_OK), "bin/crib must be executable"


# -- the launcher --------------------------------------------------------------------------------


def launcher(*args: str, input: str = "", env: dict[str, str] | None = None, timeout: float = 120) -> subprocess.CompletedProcess[str]:
    full = dict(os.environ)
    full.pop("CLAUDE_PLUGIN_ROOT", None)
    full.update(env or {})
    return subprocess.run(["bash", str(LAUNCHER), *args], input=input, capture_output=True, text=True,
                          env=full, timeout=timeout)


def test_launcher_runs_the_installed_crib(crib: Any, tmp_path: Path) -> None:
    seed(crib)
    env = {"CLAUDE_PLUGIN_DATA": str(tmp_path / "plugin-data"), "CRIB_PYTHON": sys.executable, **SLOW_OK}
    result = launcher("hook", "user-prompt-submit", input=ups(), env=env)
    assert result.returncode == 0, result.stderr
    assert "Chose SQLite" in context_of(result.stdout)
    assert not (tmp_path / "plugin-data" / "venv").exists(), "no install when CRIB_PYTHON names an interpreter"
    assert launcher("hook", "no-such-event", input=ups(), env=env).returncode == 0


def test_launcher_finds_the_project_database_from_a_subdirectory(crib: Any, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delenv("CRIB_DB")
    project = tmp_path / "proj"
    (project / "src" / "deep").mkdir(parents=True)
    monkeypatch.chdir(project)
    env = {"CLAUDE_PLUGIN_DATA": str(tmp_path / "pd"), "CRIB_PYTHON": sys.executable}
    assert launcher("write", "type=decision Chose SQLite for storage.", env=env).returncode == 0
    monkeypatch.chdir(project / "src" / "deep")
    assert launcher("write", "type=note A second note.", env=env).returncode == 0
    assert not (project / "src" / "deep" / ".state").exists()
    exported = crib("export", env={"CRIB_DB": str(project / ".state" / "crib" / "crib.db")}).stdout
    assert exported.count("\n") == 2


def test_launcher_hooks_use_the_repository_store_when_claude_starts_in_a_subdirectory(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delenv("CRIB_DB")
    repo = tmp_path / "repo"
    sub = repo / "services" / "api"
    sub.mkdir(parents=True)
    subprocess.run(["git", "init", "-q", str(repo)], check=True)
    monkeypatch.chdir(sub)  # Claude Code started here: the MCP server, the Bash tool and the hooks run here
    env = {"CLAUDE_PLUGIN_DATA": str(tmp_path / "pd"), "CRIB_PYTHON": sys.executable, "CLAUDE_PROJECT_DIR": str(sub), **SLOW_OK}
    assert launcher("write", "type=decision Chose SQLite for storage.", env=env).returncode == 0
    assert (repo / ".state" / "crib" / "crib.db").exists() and not (sub / ".state").exists()
    result = launcher("hook", "user-prompt-submit", input=ups(), env=env)
    assert "Chose SQLite" in context_of(result.stdout)


# The launcher without an installed crib (first install, a killed install, no Python >= 3.10, the
# Bash tool's environment, MCP while installing) is tested in tests/test_launcher.py.


# -- units ---------------------------------------------------------------------------------------


def test_sanitise_session_id() -> None:
    uuid = "0b6c5a4e-2f43-4d8e-9c1a-3f0e5b7d9a21"
    assert sanitise_session_id(uuid) == uuid
    assert sanitise_session_id("") == ""
    names = {sanitise_session_id(s) for s in ("a/b", "a_b", "a\\b", "../../etc/passwd", "..")}
    assert len(names) == 5
    for name in names:
        assert "/" not in name and "\\" not in name and not name.startswith(".")


def test_session_state_roundtrip_is_atomic_and_tolerates_corruption(tmp_path: Path) -> None:
    db = tmp_path / "x" / "crib.db"
    state = SessionState.for_session(db, "s/1")
    state.entries, state.facts = {3, 1}, {7}
    state.save()
    folder = db.parent / "sessions"
    assert [p.name for p in folder.iterdir()] == [state.path.name]  # no temporary file left behind
    again = SessionState.for_session(db, "s/1")
    assert (again.entries, again.facts) == ({1, 3}, {7})
    state.path.write_text("{truncated")
    assert SessionState.for_session(db, "s/1").entries == set()
    assert SessionState.for_session(db, "").path is None


def test_prune_sessions_removes_only_old_records(tmp_path: Path) -> None:
    old, new = tmp_path / "old.json", tmp_path / "new.json"
    for path in (old, new):
        path.write_text("{}")
    ten_days = time.time() - 10 * 86400
    os.utime(old, (ten_days, ten_days))
    assert prune_sessions(tmp_path, 7) == 1
    assert not old.exists() and new.exists()


def test_last_user_prompt_reads_the_transcript_tail(tmp_path: Path) -> None:
    transcript = write_transcript(tmp_path / "t.jsonl", 'the <memory-context context_time="t">x</memory-context>real question')
    assert last_user_prompt(str(transcript)) == "the real question"
    assert last_user_prompt(str(transcript), tail_bytes=40) == ""  # only a cut line in range
    assert last_user_prompt(str(tmp_path / "missing.jsonl")) == ""
    assert last_user_prompt("") == ""


def test_resolve_db_order() -> None:
    hook = HookInput(event="user-prompt-submit", cwd="/work/proj")
    assert resolve_db(hook, {"CRIB_DB": "/x/y.db", "CLAUDE_PROJECT_DIR": "/p"}) == Path("/x/y.db")
    assert resolve_db(hook, {"CLAUDE_PROJECT_DIR": "/p"}) == Path("/p/.state/crib/crib.db")
    assert resolve_db(hook, {}) == Path("/work/proj/.state/crib/crib.db")
    # outside git (the tests run in a temporary folder): under the current directory
    assert resolve_db(HookInput(event="x"), {}) == Path.cwd() / ".state" / "crib" / "crib.db"


def test_hook_timeout_parsing() -> None:
    assert hook_timeout({}) == 2.0
    assert hook_timeout({"CRIB_HOOK_TIMEOUT": "0.25"}) == 0.25
    for bad in ("abc", "-1", "0", "nan"):
        with pytest.raises(ConfigError, match="CRIB_HOOK_TIMEOUT must be a (finite )?number > 0"):
            hook_timeout({"CRIB_HOOK_TIMEOUT": bad})
    assert hook_timeout({"CRIB_HOOK_TIMEOUT": "1e9"}) == claude.MAX_TIMEOUT


def test_parse_hook_input() -> None:
    hook = parse_hook_input(start(source="Compact", transcript_path="/t"), "session-start")
    assert (hook.session_id, hook.source, hook.transcript_path) == ("s1", "compact", "/t")
    assert parse_hook_input("just words ", "user-prompt-submit").prompt == "just words"


def test_run_hook_gives_up_on_a_stuck_handler(monkeypatch: pytest.MonkeyPatch) -> None:
    release = threading.Event()

    def stuck(hook: HookInput, db: Path) -> None:
        release.wait(30)

    monkeypatch.setitem(claude.HANDLERS, "user-prompt-submit", stuck)
    monkeypatch.setenv("CRIB_HOOK_TIMEOUT", "0.2")
    out = io.StringIO()
    started = time.monotonic()
    assert claude.run_hook("user-prompt-submit", stdin=io.StringIO(ups()), stdout=out, own_process=False) == 0
    assert time.monotonic() - started < 2 and out.getvalue() == ""
    release.set()


def test_run_hook_refuses_a_context_over_the_cap(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
    state = SessionState(path=tmp_path / "s.json", session_id="s")
    big = claude.HookResult("user-prompt-submit", "x" * (CLAUDE_CONTEXT_CAP + 1), state)
    monkeypatch.setitem(claude.HANDLERS, "user-prompt-submit", lambda hook, db: big)
    out = io.StringIO()
    assert claude.run_hook("user-prompt-submit", stdin=io.StringIO(ups()), stdout=out, own_process=False) == 0
    assert out.getvalue() == "" and not state.path.exists()


def test_render_within_a_cap_drops_lowest_ranked_hits_then_facts(monkeypatch: pytest.MonkeyPatch) -> None:
    from crib_plugin.core.records import Query, Retrieval
    from crib_plugin.output import block

    def render(memory: Any, retrieval: Any, *, template: str) -> str:
        items = retrieval.hits + retrieval.facts
        return "" if not items else "x" * (100 * len(items))

    monkeypatch.setattr(block, "render_retrieval", render)
    retrieval = Retrieval(Query("q"), hits=["best", "middle", "worst"], facts=["fact"])  # type: ignore[list-item]
    text, shown = block.render_within(None, retrieval, "t", 250)  # type: ignore[arg-type]
    assert len(text) == 200 and shown.hits == ["best"] and shown.facts == ["fact"]
    assert retrieval.hits == ["best", "middle", "worst"]  # the selection it was given is not changed
    assert block.render_within(None, retrieval, "t", 50)[0] == ""  # type: ignore[arg-type]


def test_third_party_on_prompt_blocks_follow_cribs_own(db: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    from crib_plugin import Memory, hookimpl
    from crib_plugin.plugins import manager as plugins

    class Rules:
        @hookimpl
        def on_prompt(self, prompt: str, session: Any) -> str:
            return f"Project rule (session {session.id}): keep answers short."

    pm = plugins.new_plugin_manager(load_entrypoints=False)
    pm.register(Rules(), name="rules")
    monkeypatch.setattr(plugins, "_pm", pm)
    with Memory(db, pm=pm) as memory:
        memory.write("type=decision Chose SQLite for storage. Zero dependencies.")
    result = claude.user_prompt_submit(parse_hook_input(ups("p1"), "user-prompt-submit"), db)
    assert result is not None
    blocks = result.context.split("\n\n")
    assert blocks[0].startswith("<memory-context ") and "Chose SQLite" in blocks[0]
    assert blocks[-1].strip() == "Project rule (session p1): keep answers short."
    assert result.context.count("<memory-context") == 1  # crib's built-in on_prompt did not run twice
