"""The prompt hook's budget is enforced from outside the work: a hook process arms a SIGALRM for
the moment it is CRIB_HOOK_TIMEOUT old, and whatever is running then — in the forked child or in
the hook process itself — the process leaves with status 0 and nothing half-printed.

These tests check the mechanism with a deliberately slow step, not the machine's timings
(``bench/hook_load.py`` measures the worst case under load)."""

from __future__ import annotations

import json
import os
import subprocess
import sys
import time
from pathlib import Path

import pytest

MARGIN = 0.3
BUDGET = 1.0

pytestmark = pytest.mark.skipif(not hasattr(os, "fork"), reason="the hard deadline needs fork and SIGALRM")


def run_script(body: str, tmp_path: Path) -> tuple[subprocess.CompletedProcess[bytes], float]:
    code = "import sys, time\nimport crib_plugin.hosts.claude as c\nfrom crib_plugin.hosts.claude import runner\n" + body + \
           "\nsys.exit(c.run_hook('user-prompt-submit'))\n"
    env = {**os.environ, "CRIB_HOOK_TIMEOUT": str(BUDGET), "CRIB_DB": str(tmp_path / "crib.db")}
    started = time.monotonic()
    result = subprocess.run([sys.executable, "-c", code], input=b'{"prompt": "x", "session_id": "s"}',
                            capture_output=True, env=env, timeout=30, check=False)
    return result, time.monotonic() - started


def test_a_slow_step_in_the_hook_process_itself_is_cut_at_the_deadline(tmp_path: Path) -> None:
    """Reading the settings takes 5 s (a hung network file system, a swapped-out page): no thread
    or child is doing the work, yet the process leaves at the deadline, exit 0, stdout empty."""
    body = (
        "real = runner.hook_timeout\n"
        "def slow():\n"
        "    time.sleep(5)\n"
        "    return real()\n"
        "runner.hook_timeout = slow\n"
    )
    result, elapsed = run_script(body, tmp_path)
    assert result.returncode == 0 and result.stdout == b"" and b"Traceback" not in result.stderr
    assert elapsed < BUDGET + MARGIN, f"took {elapsed:.2f} s"


def test_a_slow_step_after_the_answer_prints_it_whole_and_leaves_at_the_deadline(tmp_path: Path) -> None:
    """Saving the session record takes 5 s (a loaded disk): the answer is printed first, whole, and
    the process still leaves at the deadline."""
    body = (
        "from pathlib import Path\n"
        "from crib_plugin.hosts.claude.output import HookResult\n"
        "from crib_plugin.hosts.claude.state import SessionState\n"
        f"state = SessionState(Path({str(tmp_path / 'session.json')!r}), 's')\n"
        "c.HANDLERS['user-prompt-submit'] = lambda hook, db: HookResult('user-prompt-submit', 'remembered: x' * 500, state)\n"
        "def slow(self, environ=None):\n"
        "    time.sleep(5)\n"
        "HookResult.commit = slow\n"
    )
    result, elapsed = run_script(body, tmp_path)
    assert result.returncode == 0 and b"Traceback" not in result.stderr
    context = json.loads(result.stdout)["hookSpecificOutput"]["additionalContext"]
    assert context == "remembered: x" * 500
    assert elapsed < BUDGET + MARGIN, f"took {elapsed:.2f} s"


def test_the_child_is_killed_with_the_process(tmp_path: Path) -> None:
    """The child's work (a sleep in the handler) is cut at the deadline too, and no child is left behind."""
    marker = tmp_path / "child-finished"
    body = (
        "def stuck(hook, db):\n"
        "    time.sleep(4)\n"
        f"    open({str(marker)!r}, 'w').close()\n"
        "c.HANDLERS['user-prompt-submit'] = stuck\n"
    )
    result, elapsed = run_script(body, tmp_path)
    assert result.returncode == 0 and result.stdout == b""
    assert elapsed < BUDGET + MARGIN
    time.sleep(4.5)
    assert not marker.exists(), "the child outlived the hook"


def test_arm_exit_is_only_for_the_main_thread() -> None:
    import threading

    from crib_plugin.core import deadline

    answers: list[bool] = []
    worker = threading.Thread(target=lambda: answers.append(deadline.arm_exit(60.0)))
    worker.start()
    worker.join()
    assert answers == [False]


def test_slow_imports_before_the_hook_runs_are_cut_at_the_deadline(tmp_path: Path) -> None:
    """Importing the hook's modules takes 5 s (a loaded machine, a cold disk): the entry point has
    armed the alarm already, so the process still leaves at the deadline."""
    code = (
        "import sys, time\n"
        "from crib_plugin.hosts.cli import hotpath\n"
        "def slow_import(target, *args, **kwargs):\n"
        "    time.sleep(5)\n"
        "hotpath.run_entry = slow_import\n"
        "sys.argv = ['crib', 'hook', 'user-prompt-submit']\n"
        "hotpath.main()\n"
    )
    env = {**os.environ, "CRIB_HOOK_TIMEOUT": str(BUDGET), "CRIB_DB": str(tmp_path / "crib.db")}
    started = time.monotonic()
    result = subprocess.run([sys.executable, "-c", code], input=b'{"prompt": "x"}', capture_output=True, env=env,
                            timeout=30, check=False)
    elapsed = time.monotonic() - started
    assert result.returncode == 0 and result.stdout == b"" and b"Traceback" not in result.stderr
    assert elapsed < BUDGET + MARGIN, f"took {elapsed:.2f} s"


def test_the_entry_point_arms_the_budget_of_the_hook() -> None:
    """``crib hook user-prompt-submit`` arms the alarm before importing the hook's modules, with
    the hook's own variable, default and cap."""
    from crib_plugin.core.config import specs
    from crib_plugin.hosts.claude import input as hook_input
    from crib_plugin.hosts.cli import hotpath

    assert hotpath.HOOK_BUDGET == (dict(specs())["hook_timeout"].var, hook_input.DEFAULT_TIMEOUT, hook_input.MAX_TIMEOUT)


def test_budget_from_env(monkeypatch: pytest.MonkeyPatch) -> None:
    from crib_plugin.core.deadline import budget_from_env

    for raw, expected in (("", 2.0), ("3", 3.0), ("500", 60.0), ("nan", 2.0), ("-1", 2.0), ("soon", 2.0)):
        monkeypatch.setenv("CRIB_X_TEST", raw)
        assert budget_from_env("CRIB_X_TEST", 2.0, 60.0) == expected


def test_a_test_runner_is_never_ended_by_the_alarm() -> None:
    """A hook run inside a test runner's process (click's CliRunner) must not arm an alarm that
    would end the runner with status 0 mid-run; a process older than any hook counts from now."""
    code = ("import sys\nsys._called_from_test = True\nfrom crib_plugin.core import deadline\n"
            "print(deadline.arm_exit(0.0))\nprint('alive')\n")
    result = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=30, check=False)
    assert result.stdout.split() == ["False", "alive"]
