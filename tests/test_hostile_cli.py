"""Every ``crib`` command with hostile values: one clear line and a non-zero exit, never a traceback.

The integer parameters are found by walking the click application (a command added later is
covered without editing this file): each gets values past SQLite's 64-bit range, negative ones and
a 5,000-digit number. Then the inputs no parameter type catches: a 5,000-digit number in
``--metadata`` and in an imported line, ``crib import`` of a folder holding far too much (``/``),
of a device (``/dev/zero``), of a FIFO (it must not wait for a writer) and of an endless stdin.
"""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path
from typing import Any

import click
import pytest

from crib_plugin.hosts.cli.app import cli, load_plugin_commands
from crib_plugin.hosts.cli.params import StoreInt

HUGE = [str(2**63), str(2**64 + 1), "-" + str(2**63 + 1), "9" * 5000, "-1"]
BUG_LINE = "a bug; logged"  # the CLI's last line of defence: hostile values must be refused before it


def _commands() -> list[tuple[list[str], click.Command]]:
    load_plugin_commands()
    ctx = click.Context(cli)
    out: list[tuple[list[str], click.Command]] = []

    def walk(group: click.Group, prefix: list[str]) -> None:
        for name in group.list_commands(ctx):
            command = group.get_command(ctx, name)
            if isinstance(command, click.Group):
                walk(command, [*prefix, name])
            elif command is not None:
                out.append(([*prefix, name], command))

    walk(cli, [])
    return out


def _integer_params() -> list[tuple[list[str], click.Parameter]]:
    return [(path, p) for path, command in _commands() for p in command.params
            if isinstance(p.type, (click.types.IntParamType, StoreInt))]


def _line(path: list[str], param: click.Parameter, value: str) -> list[str]:
    """A command line giving ``value`` to ``param``, the other required arguments ordinary values
    (positionals after ``--``, so a negative number is not read as an option)."""
    command = dict((tuple(p), c) for p, c in _commands())[tuple(path)]
    options = [f"{param.opts[0]}={value}"] if isinstance(param, click.Option) else []
    if path == ["forget"]:
        options += ["--query", "deploy"]
    positional = []
    for other in command.params:
        if other is param and isinstance(other, click.Argument):
            positional.append(value)
        elif isinstance(other, click.Argument) and other.required:
            positional.append("1" if isinstance(other.type, (click.types.IntParamType, StoreInt)) else "text")
    return [*path, *options, "--", *positional]


def _ids(case: tuple[list[str], click.Parameter]) -> str:
    return f"{' '.join(case[0])}:{case[1].name}"


def test_every_integer_parameter_is_bounded() -> None:
    """No plain ``int``: each integer the command line takes fits the store's 64-bit range."""
    found = _integer_params()
    assert len(found) >= 12, found
    plain = [_ids(c) for c in found if not isinstance(c[1].type, StoreInt)]
    assert not plain, plain


@pytest.fixture
def stored(db: Path, crib: Any) -> Path:
    result = crib("write", "type=decision Deploys go through the staging gateway first.")
    assert result.returncode == 0, result.stderr
    return db


def _clean_failure(result: subprocess.CompletedProcess[str]) -> None:
    text = result.stdout + result.stderr
    assert "Traceback" not in text, text[-2000:]
    assert BUG_LINE not in text, text[-500:]
    assert result.returncode != 0, text[-500:]
    assert result.stderr.strip(), "a failure says why"


@pytest.mark.parametrize("case", _integer_params(), ids=_ids)
@pytest.mark.parametrize("value", HUGE, ids=lambda v: v[:12])
def test_integer_out_of_range_is_one_clear_line(stored: Path, crib: Any, case: tuple[list[str], click.Parameter], value: str) -> None:
    path, param = case
    if value == "-1" and isinstance(param.type, StoreInt) and param.type.minimum <= -1:
        pytest.skip("-1 is in range")
    result = crib(*_line(path, param, value), input="")
    _clean_failure(result)
    assert str(param.type.maximum) in result.stderr, result.stderr  # the range is named


DIGITS = "9" * 5000


@pytest.mark.parametrize("args,stdin", [
    (["write", "--metadata", '{"n": ' + DIGITS + "}", "a note"], None),
    (["write", "--metadata", '{"n": [' * 50_000 + "]" * 50_000 + "}", "a note"], None),
    (["import", "-"], '{"content": "x", "metadata": {"n": ' + DIGITS + "}}\n"),
    (["import", "-"], '{"content": "x", "created_at": ' + DIGITS + "}\n"),
    (["import", "-"], "\0" * (3 * 1024 * 1024)),
    (["import", "--format", "jsonl", "/"], None),
], ids=["metadata-5000-digits", "metadata-deep", "import-5000-digits", "import-created-5000-digits",
        "import-stdin-no-newline", "import-root-jsonl"])
def test_hostile_input_is_one_clear_line(stored: Path, crib: Any, args: list[str], stdin: str | None) -> None:
    _clean_failure(crib(*args, input=stdin))


def _cold(*args: str, stdin: Any = None) -> subprocess.CompletedProcess[str]:
    """``crib`` in a fresh process with a deadline: a regression that blocks or reads forever
    fails on the timeout instead of hanging the suite."""
    try:
        return subprocess.run([sys.executable, "-m", "crib_plugin", *args], capture_output=True, text=True,
                              timeout=60, env=dict(os.environ), stdin=stdin)
    except subprocess.TimeoutExpired:
        pytest.fail(f"crib {' '.join(args)} did not finish in 60 s")


@pytest.mark.parametrize("fmt", [[], ["--format", "markdown"]], ids=["jsonl", "markdown"])
@pytest.mark.parametrize("special", ["fifo", "/dev/zero"])
def test_import_of_a_fifo_or_a_device_is_refused_without_waiting(stored: Path, tmp_path: Path, special: str, fmt: list[str]) -> None:
    """Opening a FIFO blocks until a writer comes; /dev/zero never ends: crib refuses both."""
    path = Path(special)
    if special == "fifo":
        path = tmp_path / "pipe.jsonl"
        os.mkfifo(path)
    result = _cold("import", *fmt, str(path))
    _clean_failure(result)
    assert "not a regular file" in result.stderr


def test_import_of_an_endless_stdin_is_bounded(stored: Path) -> None:
    with open("/dev/zero", "rb") as zero:
        result = _cold("import", "-", stdin=zero)
    _clean_failure(result)
    assert "longer than" in result.stderr


@pytest.mark.slow
def test_import_of_the_root_folder_is_bounded(stored: Path, crib: Any) -> None:
    """``crib import /`` walks at most MAX_IMPORT_WALK paths, skips what vanishes (``/proc``) and
    says the folder is too big, storing nothing."""
    result = _cold("import", "/")
    _clean_failure(result)
    assert "import a smaller folder" in result.stderr
    assert crib("stats").returncode == 0


@pytest.mark.parametrize("when", ["9999-12-31", "2999-01-01T00:00:00Z", "2026-12-05T00:00:00Z"])
def test_a_date_in_the_future_is_refused(stored: Path, crib: Any, when: str) -> None:
    """The block says the newer memory is more likely current: a memory dated 9999-12-31 would win
    every disagreement. A date more than a day past now (CRIB_NOW here) is refused, on write and import."""
    env = {"CRIB_NOW": "2026-11-28T12:00:00Z"}
    result = crib("write", "--created-at", when, "The gateway timeout is 45 seconds.", env=env)
    _clean_failure(result)
    assert "in the future" in result.stderr
    line = '{"content": "The gateway timeout is 50 seconds.", "created_at": "' + when + '"}\n'
    result = crib("import", "-", input=line, env=env)
    _clean_failure(result)
    assert "in the future" in result.stderr
    assert crib("write", "--created-at", "2026-11-29T06:00:00Z", "Within the skew.", env=env).returncode == 0
