"""Hostile input through every surface: write, import, retrieve, search, forget, both hooks, scrub
and the Python API (issue 10, items 3 and 4).

Every case must end one of two ways: a one-line ``crib: …`` error with exit 1 (write/import, which
refuse what they cannot store) or a clean exit 0 (retrieve, search, hooks, scrub, which fail open);
never a traceback, never a hang. The corpus is generated deterministically below. Most cases run
in process through click's ``CliRunner`` against one shared store; the ones that need a real
process — bytes on stdin, the hook's hard deadline, 10 MB inputs — run ``python -m crib_plugin``.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from click.testing import CliRunner

from crib_plugin.core.errors import CribError
from crib_plugin.core.limits import MAX_ENTRY_CHARS
from crib_plugin.hosts.cli.app import cli

# one worker runs the whole module under -n (pyproject: --dist loadgroup): its module fixtures build a
# seeded store and a store holding a 5 MB memory
pytestmark = pytest.mark.xdist_group("test_hostile_input")

BAD_UTF8 = b"caf\xe9 \xff\xfe \xc3\x28 ok"
MILLION = 1_000_000

# -- the corpus ------------------------------------------------------------------------------------

TEXTS: dict[str, str] = {
    "fts quote": '"',
    "fts two quotes": '""',
    "fts unbalanced phrase": '"sqlite storage',
    "fts star": "sqli*",
    "fts lone star": "*",
    "fts near": "NEAR(sqlite storage, 2)",
    "fts near open": "NEAR(",
    "fts operators": "sqlite AND OR NOT storage",
    "fts not alone": "NOT",
    "fts caret": "^sqlite",
    "fts column filter": "content:sqlite",
    "fts column set": "{content type}: sqlite",
    "fts column minus": "- content : sqlite",
    "fts parens": "((( sqlite )))",
    "fts plus": "sqlite + storage",
    "sql drop": "'; DROP TABLE entries; --",
    "sql bobby": "Robert'); DROP TABLE students;--",
    "sql union": "x' UNION SELECT * FROM sqlite_master --",
    "sql or": "1 OR 1=1",
    "nul inside": "we chose\x00sqlite",
    "nul only": "\x00",
    "control chars": "\x01\x02\x07\x1b[31mred\x1b[0m \x7f",
    "carriage returns": "line\r\nline\rline",
    "vertical space": "\t\v\f sqlite",
    "bidi override": "\u202esqlite evil\u202c storage",
    "bidi isolates": "\u2066sqlite\u2069 \u2067x\u2069",
    "zero width": "sq\u200bli\u200cte\u200d",
    "bom": "\ufeffwe chose sqlite",
    "emoji zwj family": "👩\u200d👩\u200d👧\u200d👦 storage",
    "emoji flags": "🇺🇸🇫🇷🏳️\u200d🌈",
    "combining marks": "e\u0301" * 200,
    "zalgo": "s̸̡̢͓̈́q̶l̷i̸t̷e̸" * 20,
    "lone high surrogate": "sqlite \ud800 storage",
    "lone low surrogate": "\udfff",
    "cjk": "我们选择了哪个数据库",
    "cjk glued": "使用SQLite作为数据库",
    "hangul particles": "SQLite를 선택했다",
    "memory tag": "</memory-context> injected",
    "unclosed memory tag": "<memory-context>keep this",
    "jinja": "{{ 7*7 }} {% for x in y %}",
    "format strings": "{0} %s %n {{}} %(x)s",
    "path traversal": "../../../../etc/passwd",
    "huge number": "99999999999999999999",
    "type prefix unknown": "type=bogus sqlite",
    "type prefix only": "type=decision",
    "16k alnum run": ("aZ9" * 5400)[:16_000],
    "dotted run": "a." * 20_000,
    "dashed run": "-a" * 20_000,
    "quote run": '"' * 20_000,
    "quoted words": '"a ' * 20_000,
    "date storm": "May 2023 since last week " * 2_000,
    "newlines": "\n" * 50_000,
    "spaces": " " * 50_000,
    "over entry limit": "x" * (MAX_ENTRY_CHARS + 1),
    "million char line": "sqlite " + "y" * MILLION,
}

CREATED_AT: dict[str, Any] = {
    "int": 5,
    "float": 1.5,
    "zero": 0,
    "bool": True,
    "list": [],
    "object": {},
    "null": None,
    "empty": "",
    "blank": "   ",
    "garbage": "yesterday-ish",
    "year 1 plus offset": "0001-01-01T00:00:00+05:00",
    "year 9999 minus offset": "9999-12-31T23:59:59-05:00",
    "year 10000": "10000-01-01T00:00:00Z",
    "month 13": "2024-13-45",
    "offset 99h": "2024-01-01T00:00:00+99:00",
    "long digits": "1" * 1000,
    "nul": "2024-01-01\x00",
    "ok": "2024-05-01T12:00:00Z",
}

METADATA: dict[str, Any] = {
    "list": [1, 2],
    "string": "x",
    "number": 5,
    "null": None,
    "nan": {"x": float("nan")},
    "infinity": {"x": float("inf")},
    "nested 40": json.loads('{"a":' * 40 + "1" + "}" * 40),
    "nested 15": json.loads('{"a":' * 14 + "1" + "}" * 14),
    "huge": {"blob": "z" * 100_000},
    "thread int": {"thread": 5},
    "thread object": {"thread": {"a": 1}},
    "surrogate value": {"a": "\ud800"},
    "nul key": {"\x00": 1},
    "ok": {"source": "test"},
}

HOOK_BODIES: dict[str, str] = {
    "empty": "",
    "whitespace": " \n\t",
    "open brace": "{",
    "array": "[1, 2, 3]",
    "null": "null",
    "number": "123",
    "string": '"why sqlite"',
    "prompt null": '{"prompt": null}',
    "prompt number": '{"prompt": 123}',
    "prompt array": '{"prompt": ["sqlite"]}',
    "prompt object": '{"prompt": {"text": "sqlite"}}',
    "prompt bool": '{"prompt": true}',
    "prompt nan": '{"prompt": NaN}',
    "session id number": '{"session_id": 123, "prompt": "why sqlite"}',
    "session id traversal": '{"session_id": "../../../tmp/x", "prompt": "why sqlite"}',
    "session id huge": json.dumps({"session_id": "s" * 100_000, "prompt": "why sqlite"}),
    "session id nul": json.dumps({"session_id": "a\x00b", "prompt": "why sqlite"}),
    "cwd number": '{"cwd": 5, "prompt": "why sqlite"}',
    "source number": '{"source": 5, "session_id": "x"}',
    "transcript missing": '{"transcript_path": "/nonexistent/t.jsonl", "session_id": "x"}',
    "transcript dir": '{"transcript_path": "/", "session_id": "x"}',
    "transcript device": '{"transcript_path": "/dev/zero", "session_id": "x"}',
    "transcript number": '{"transcript_path": 7}',
    "deeply nested": '{"a":' + "[" * 100_000 + "]" * 100_000 + ', "prompt": "why sqlite"}',
    "deep array": "[" * 200_000,
    "lone surrogate escape": '{"prompt": "why \\ud800 sqlite"}',
    "duplicate keys": '{"prompt": "a", "prompt": "why sqlite"}',
    "bom": '\ufeff{"prompt": "why sqlite"}',
    "trailing garbage": '{"prompt": "why sqlite"} trailing',
    "huge prompt": json.dumps({"prompt": "why sqlite " * 100_000}),
}

SEED = [
    "type=decision We chose SQLite for storage because it is one file.",
    "The deploy pipeline retries flaky canary checks twice.",
    "type=correction The cache lives in .state/crib, not in /tmp.",
]

# -- fixtures --------------------------------------------------------------------------------------


@pytest.fixture(scope="module")
def shared_db(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """One seeded store for the in-process cases (building one per case would dominate the time)."""
    folder = tmp_path_factory.mktemp("hostile")
    db = folder / "crib.db"
    env = {**os.environ, "CRIB_DB": str(db), "CRIB_EXTRACTOR": "rules", "OLLAMA_HOST": "http://127.0.0.1:9"}
    for text in SEED:
        subprocess.run([sys.executable, "-m", "crib_plugin", "write"], input=text.encode(), env=env, check=True, timeout=120)
    return db


@pytest.fixture
def store(shared_db: Path, monkeypatch: pytest.MonkeyPatch) -> Iterator[Path]:
    monkeypatch.setenv("CRIB_DB", str(shared_db))
    monkeypatch.setenv("CRIB_HOOK_TIMEOUT", "30")  # in process: only the subprocess cases test the deadline
    yield shared_db


def invoke(args: list[str], data: str | bytes | None = None) -> Any:
    result = CliRunner().invoke(cli, args, input=data, catch_exceptions=True)
    return result


def assert_clean(result: Any, *, may_fail: bool) -> None:
    """Exit 0, or (when ``may_fail``) exit 1 with one ``crib:`` line; never a traceback or a stray exception."""
    text = result.output + (result.stderr or "")
    assert "Traceback" not in text, text[-2000:]
    exc = result.exception
    assert exc is None or isinstance(exc, SystemExit), f"{type(exc).__name__}: {exc}"
    if result.exit_code == 0:
        return
    assert may_fail, f"exit {result.exit_code}: {result.stderr[-500:]}"
    assert result.exit_code == 1
    lines = [line for line in result.stderr.splitlines() if line.strip()]
    assert len(lines) == 1 and lines[0].startswith("crib: "), result.stderr[-500:]


def hook_json_ok(stdout: str) -> None:
    """A hook prints nothing or exactly one JSON object with hookSpecificOutput."""
    out = stdout.strip()
    if out:
        assert "hookSpecificOutput" in json.loads(out)


# -- texts through every surface -------------------------------------------------------------------


@pytest.mark.parametrize("name", list(TEXTS))
def test_write_stdin(store: Path, name: str) -> None:
    assert_clean(invoke(["write"], TEXTS[name].encode("utf-8", "surrogatepass")), may_fail=True)


@pytest.mark.parametrize("name", list(TEXTS))
def test_write_argument(store: Path, name: str) -> None:
    text = TEXTS[name]
    if "\x00" in text:
        pytest.skip("an OS argument cannot hold a NUL")
    assert_clean(invoke(["write", "--", text]), may_fail=True)


@pytest.mark.parametrize("name", list(TEXTS))
def test_retrieve(store: Path, name: str) -> None:
    result = invoke(["retrieve"], TEXTS[name].encode("utf-8", "surrogatepass"))
    assert_clean(result, may_fail=False)
    assert "retrieve failed open" not in result.stderr


@pytest.mark.parametrize("name", list(TEXTS))
def test_search(store: Path, name: str) -> None:
    text = TEXTS[name]
    if "\x00" in text:
        pytest.skip("an OS argument cannot hold a NUL")
    assert_clean(invoke(["search", "--", text]), may_fail=False)


@pytest.mark.parametrize("name", list(TEXTS))
def test_hook_user_prompt_submit(store: Path, name: str) -> None:
    body = json.dumps({"session_id": "", "prompt": TEXTS[name]})
    result = invoke(["hook", "user-prompt-submit"], body)
    assert_clean(result, may_fail=False)
    hook_json_ok(result.stdout)


@pytest.mark.parametrize("name", list(TEXTS))
def test_scrub(store: Path, name: str) -> None:
    data = TEXTS[name].encode("utf-8", "surrogatepass")
    result = invoke(["scrub"], data)
    assert_clean(result, may_fail=False)


@pytest.mark.parametrize("name", list(TEXTS))
def test_python_api(store: Path, name: str) -> None:
    from crib_plugin import Memory

    with Memory(store) as memory:
        try:
            memory.write(TEXTS[name])
        except CribError as exc:
            assert "\n" not in str(exc)
        assert isinstance(memory.retrieve(TEXTS[name]), str)


# -- created_at and metadata -------------------------------------------------------------------------


@pytest.mark.parametrize("name", list(CREATED_AT))
def test_import_created_at(store: Path, tmp_path: Path, name: str) -> None:
    line = json.dumps({"content": f"created_at case {name}", "created_at": CREATED_AT[name]})
    result = invoke(["import", "-"], line + "\n")
    assert_clean(result, may_fail=True)
    if name == "ok":
        assert result.exit_code == 0


@pytest.mark.parametrize("name", [k for k, v in CREATED_AT.items() if isinstance(v, str) and "\x00" not in v])
def test_write_created_at_option(store: Path, name: str) -> None:
    result = invoke(["write", "--created-at", CREATED_AT[name], f"created_at option {name}"])
    assert_clean(result, may_fail=True)
    if name in ("year 1 plus offset", "year 10000", "garbage"):
        assert result.exit_code == 1


@pytest.mark.parametrize("name", list(METADATA))
def test_import_metadata(store: Path, name: str) -> None:
    line = json.dumps({"content": f"metadata case {name}", "metadata": METADATA[name]})
    result = invoke(["import", "-"], line + "\n")
    assert_clean(result, may_fail=True)
    if name in ("nan", "infinity", "nested 40", "huge", "list", "string", "number"):
        assert result.exit_code == 1


@pytest.mark.parametrize("name", list(METADATA))
def test_write_metadata_option(store: Path, name: str) -> None:
    result = invoke(["write", "--metadata", json.dumps(METADATA[name]), f"metadata option {name}"])
    assert_clean(result, may_fail=True)


@pytest.mark.parametrize("name", list(METADATA))
def test_api_metadata(store: Path, name: str) -> None:
    from crib_plugin import Memory

    with Memory(store) as memory:
        try:
            memory.write(f"api metadata case {name}", metadata=METADATA[name])
        except CribError:
            assert name != "ok"


IMPORT_LINES: dict[str, str] = {
    "array": "[1, 2]",
    "null": "null",
    "number": "5",
    "content number": '{"content": 5}',
    "content empty": '{"content": ""}',
    "content missing": '{"type": "note"}',
    "content huge": json.dumps({"content": "q" * (MAX_ENTRY_CHARS + 1)}),
    "content nul": json.dumps({"content": "a\x00b"}),
    "content surrogate": '{"content": "a \\ud800 b"}',
    "type number": '{"content": "x", "type": 5}',
    "type unknown": '{"content": "x", "type": "weird"}',
    "nested 100k": '{"content": "x", "metadata": ' + "[" * 100_000 + "]" * 100_000 + "}",
    "bom": '\ufeff{"content": "bom line"}',
    "truncated": '{"content": "x"',
    "nan metadata": '{"content": "x", "metadata": {"a": NaN}}',
}


@pytest.mark.parametrize("name", list(IMPORT_LINES))
def test_import_lines(store: Path, name: str) -> None:
    result = invoke(["import", "-"], IMPORT_LINES[name] + "\n")
    assert_clean(result, may_fail=True)
    assert result.exit_code == 1, f"{name} was accepted"


@pytest.mark.parametrize("value", ["abc", "-1", "0", "1e3", "", "１２", "9223372036854775807"])
def test_forget(store: Path, value: str) -> None:
    result = invoke(["forget", "--", value])
    text = result.output + (result.stderr or "")
    assert "Traceback" not in text
    assert result.exception is None or isinstance(result.exception, SystemExit)


# -- hook bodies ------------------------------------------------------------------------------------


@pytest.mark.parametrize("event", ["user-prompt-submit", "session-start"])
@pytest.mark.parametrize("name", list(HOOK_BODIES))
def test_hook_bodies(store: Path, event: str, name: str) -> None:
    result = invoke(["hook", event], HOOK_BODIES[name])
    assert_clean(result, may_fail=False)
    hook_json_ok(result.stdout)


def test_session_id_traversal_stays_in_the_sessions_folder(store: Path) -> None:
    """A session id of ``../../../tmp/x`` is written as a sanitised file inside ``sessions/``."""
    result = invoke(["hook", "user-prompt-submit"], HOOK_BODIES["session id traversal"])
    assert result.stdout.strip(), "the probe should inject the SQLite decision"
    written = [p for p in store.parent.rglob("*.json") if "tmp_x" in p.name]
    assert written and all(p.parent == store.parent / "sessions" for p in written)


# -- the limits themselves ----------------------------------------------------------------------------


def test_entry_over_the_limit_is_refused_with_its_size(store: Path) -> None:
    result = invoke(["write"], "x" * (MAX_ENTRY_CHARS + 1))
    assert result.exit_code == 1
    assert f"{MAX_ENTRY_CHARS:,}-character limit" in result.stderr


def test_entry_at_the_limit_is_stored(store: Path) -> None:
    result = invoke(["write"], "sqlite " + "w" * (MAX_ENTRY_CHARS - 7))
    assert result.exit_code == 0, result.stderr


def test_out_of_range_created_at_names_the_value(store: Path) -> None:
    result = invoke(["write", "--created-at", "0001-01-01T00:00:00+05:00", "x"])
    assert result.exit_code == 1 and "out of range" in result.stderr


def test_prompt_is_bounded_head_and_tail() -> None:
    from crib_plugin.core.limits import MAX_PROMPT_CHARS, bound_prompt

    text = "head " + "m" * 100_000 + " tail"
    bounded = bound_prompt(text)
    assert len(bounded) <= MAX_PROMPT_CHARS + 1
    assert bounded.startswith("head ") and bounded.endswith(" tail")


def test_identifier_regex_is_linear() -> None:
    """A 21,000-character alphanumeric run: the unanchored regex took ~40 s (quadratic), this one ms."""
    from crib_plugin.read.query import terms

    started = time.process_time()
    terms("aZ9" * 7_000)
    assert time.process_time() - started < 5


# -- real processes: bytes on stdin, huge input, the hard deadline -----------------------------------


def run(args: list[str], data: bytes, env: dict[str, str] | None = None, timeout: float = 60) -> subprocess.CompletedProcess[bytes]:
    full = {**os.environ, **(env or {})}
    return subprocess.run([sys.executable, "-m", "crib_plugin", *args], input=data, capture_output=True, env=full, timeout=timeout, check=False)


def test_write_invalid_utf8_is_one_line(store: Path) -> None:
    result = run(["write"], BAD_UTF8)
    assert result.returncode == 1 and b"Traceback" not in result.stderr
    assert result.stderr.decode().strip() == "crib: stdin is not valid UTF-8 (invalid byte at offset 3); convert it first"


def test_import_invalid_utf8_names_the_line(store: Path, tmp_path: Path) -> None:
    path = tmp_path / "bad.jsonl"
    path.write_bytes(b'{"content": "fine"}\n{"content": "' + BAD_UTF8 + b'"}\n')
    result = run(["import", str(path)], b"")
    assert result.returncode == 1 and b"Traceback" not in result.stderr
    assert b"line 2 is not valid UTF-8" in result.stderr


@pytest.mark.parametrize("args", [["retrieve"], ["hook", "user-prompt-submit"], ["hook", "session-start"], ["scrub"]])
def test_invalid_utf8_fails_open(store: Path, args: list[str]) -> None:
    result = run(args, BAD_UTF8 + b" sqlite storage")
    assert result.returncode == 0 and b"Traceback" not in result.stdout + result.stderr


def test_write_ten_megabytes_is_refused_quickly(store: Path) -> None:
    result = run(["write"], b"a" * 10_000_000)
    assert result.returncode == 1 and b"entry limit" in result.stderr


def test_retrieve_ten_megabytes_exits_zero(store: Path) -> None:
    result = run(["retrieve"], (b"why sqlite storage " * 600_000)[:10_000_000])
    assert result.returncode == 0 and b"Traceback" not in result.stderr


@pytest.fixture(scope="module")
def huge_db(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """A store holding the largest allowed entry and a 5 MB one written by an older crib (straight
    into the table), both sharing words with the probe prompt."""
    db = tmp_path_factory.mktemp("huge") / "crib.db"
    code = f"""
from crib_plugin.memory import Memory, NewEntry
with Memory({str(db)!r}) as m:
    m.write_many([NewEntry("why sqlite storage memory " + str(i)) for i in range(20)], extract=False)
    m.write_many([NewEntry(("sqlite storage " * {MAX_ENTRY_CHARS})[: {MAX_ENTRY_CHARS}])], extract=False)
    with m.store.transaction():
        m.store.insert_entry("note", "why sqlite storage " * 280_000, "2024-01-01T00:00:00Z", {{}})
"""
    env = {**os.environ, "CRIB_EXTRACTOR": "rules", "OLLAMA_HOST": "http://127.0.0.1:9"}
    subprocess.run([sys.executable, "-c", code], env=env, check=True, timeout=300)
    return db


BUDGET = 2.0
MARGIN = 0.3  # the "within budget + 0.3 s"


@pytest.mark.parametrize("prompt_bytes", [10_000_000, 64])
@pytest.mark.parametrize("event", ["user-prompt-submit", "session-start"])
def test_hook_wall_time_within_budget(huge_db: Path, event: str, prompt_bytes: int) -> None:
    """The hard deadline: a 10 MB prompt and a store holding a 5 MB memory, CRIB_HOOK_TIMEOUT=2."""
    prompt = ("why sqlite storage " * (prompt_bytes // 19 + 1))[:prompt_bytes]
    body = json.dumps({"session_id": "wall", "prompt": prompt, "source": "startup"}).encode()
    started = time.monotonic()
    result = run(["hook", event], body, env={"CRIB_DB": str(huge_db), "CRIB_HOOK_TIMEOUT": str(BUDGET)})
    elapsed = time.monotonic() - started
    assert result.returncode == 0 and b"Traceback" not in result.stderr
    hook_json_ok(result.stdout.decode())
    assert elapsed < BUDGET + MARGIN, f"{event} took {elapsed:.2f} s on a {prompt_bytes:,}-byte prompt"


def test_hook_deadline_kills_work_that_holds_the_gil(tmp_path: Path) -> None:
    """A worker stuck in C code holding the GIL (a catastrophic regex) cannot be timed out by a
    thread; the forked child is killed at the deadline and nothing is printed."""
    code = (
        "import re, sys\n"
        "import crib_plugin.hosts.claude as c\n"
        "def stuck(hook, db):\n"
        "    re.match(r'(a+)+$', 'a' * 40 + 'b')\n"
        "c.HANDLERS['user-prompt-submit'] = stuck\n"
        "sys.exit(c.run_hook('user-prompt-submit'))\n"
    )
    env = {**os.environ, "CRIB_HOOK_TIMEOUT": "1"}
    started = time.monotonic()
    result = subprocess.run([sys.executable, "-c", code], input=b'{"prompt": "x"}', capture_output=True, env=env, timeout=20, check=False)
    elapsed = time.monotonic() - started
    assert result.returncode == 0 and result.stdout == b""
    assert elapsed < 1 + MARGIN, f"took {elapsed:.2f} s"
    assert "gave up after 1 s" in (tmp_path / "crib.log").read_text()


def test_a_store_with_a_5mb_memory_still_answers(huge_db: Path) -> None:
    """Retrieval reads at most MAX_SCAN_CHARS of an entry: with the 5 MB memory read whole, this
    prompt took 12 s and the hook injected nothing; now it answers well inside a generous budget."""
    body = json.dumps({"session_id": "", "prompt": "why sqlite storage"}).encode()
    result = run(["hook", "user-prompt-submit"], body, env={"CRIB_DB": str(huge_db), "CRIB_HOOK_TIMEOUT": "8"})
    assert result.returncode == 0
    assert "why sqlite storage memory" in json.loads(result.stdout)["hookSpecificOutput"]["additionalContext"]
