"""The plugin's launcher (``bin/crib``) driven as Claude Code drives it, in a throwaway HOME.

The environment is built by a fake, fast installer (``CRIB_TEST_INSTALLER``: a venv without pip
whose ``.pth`` points at this checkout and the test interpreter's packages), so the install's
locking, detaching, renaming and recovery are exercised for real in seconds; only pip is left out.
What is checked is what issue 20 found broken on first use: a killed first install, a machine
with only Python 3.9, the Bash tool without ``CLAUDE_PLUGIN_DATA``, and an MCP client that must
get its ``initialize`` answer while the install runs.
"""

from __future__ import annotations

import json
import os
import shutil
import signal
import subprocess
import sys
import time
from pathlib import Path
from typing import Any, Callable

import anyio
import pytest
from mcp import ClientSession, StdioServerParameters
from mcp.client.stdio import stdio_client

ROOT = Path(__file__).resolve().parent.parent
LAUNCHER = ROOT / "bin" / "crib"
TOOLS = {"remember", "recall", "search", "show", "manifest", "grep", "list_memories", "correct", "cue", "forget"}
FAKE_INSTALLER = """#!/bin/sh
# $1 python (ignored: the test interpreter builds it), $2 target, $3 plugin root
set -e
echo "fake install into $2" >&2
sleep "${{FAKE_SLEEP:-0}}"
"{python}" -m venv --without-pip "$2"
site="$("$2/bin/python" -c 'import sysconfig; print(sysconfig.get_paths()["purelib"])')"
printf '%s\\n' "$3" {paths} > "$site/crib_test.pth"
"""


def wait_for(check: Callable[[], bool], seconds: float, what: str) -> None:
    deadline = time.monotonic() + seconds
    while not check():
        if time.monotonic() > deadline:
            raise AssertionError(f"timed out after {seconds} s waiting for {what}")
        time.sleep(0.1)


@pytest.fixture
def env(tmp_path: Path) -> dict[str, str]:
    """A Claude Code-like environment: throwaway HOME and plugin data, the fake installer."""
    installer = tmp_path / "fake-installer"
    paths = " ".join(f"'{p}'" for p in sys.path if p and os.path.isdir(p) and "'" not in p)
    installer.write_text(FAKE_INSTALLER.format(python=sys.executable, paths=paths))
    installer.chmod(0o755)
    home = tmp_path / "home"
    home.mkdir()
    out = {k: v for k, v in os.environ.items() if not k.startswith("CLAUDE_")}
    out.update({"HOME": str(home), "XDG_DATA_HOME": str(home / ".local" / "share"),
                "CLAUDE_PLUGIN_DATA": str(tmp_path / "plugin-data"), "CRIB_TEST_INSTALLER": str(installer),
                "CRIB_BOOTSTRAP_PYTHON": sys.executable, "CRIB_HOOK_TIMEOUT": "60", "FAKE_SLEEP": "0"})
    return out


def run(args: list[str], env: dict[str, str], input: str = "{}", launcher: Path = LAUNCHER, timeout: float = 120) -> subprocess.CompletedProcess[str]:
    return subprocess.run(["bash", str(launcher), *args], input=input, capture_output=True, text=True, env=env, timeout=timeout)


def hook(event: str, env: dict[str, str], prompt: str = "which database did we choose for storage?") -> subprocess.CompletedProcess[str]:
    name = {"session-start": "SessionStart", "user-prompt-submit": "UserPromptSubmit"}[event]
    payload = {"session_id": f"s-{time.monotonic_ns()}", "hook_event_name": name, "prompt": prompt,
               "source": "startup", "cwd": os.getcwd()}
    return run(["hook", event], env, input=json.dumps(payload))


def context(result: subprocess.CompletedProcess[str]) -> str:
    return str(json.loads(result.stdout)["hookSpecificOutput"]["additionalContext"]) if result.stdout.strip() else ""


def lock_owner(data: Path) -> int | None:
    try:
        return int(os.readlink(data / "install.lock").split("@")[0])
    except OSError:
        return None


def log_text(data: Path) -> str:
    log = data / "install.log"
    return log.read_text() if log.exists() else ""


def installs(data: Path) -> int:
    return log_text(data).count("installing crib from")


@pytest.mark.slow
def test_a_killed_first_install_is_taken_over_at_once_and_the_next_hook_has_memory(env: dict[str, str], tmp_path: Path) -> None:
    data = Path(env["CLAUDE_PLUGIN_DATA"])
    started = time.monotonic()
    first = hook("session-start", {**env, "FAKE_SLEEP": "60"})
    assert first.returncode == 0 and time.monotonic() - started < 10, "a hook never waits for the install"
    assert "installing" in context(first)
    wait_for(lambda: "fake install into" in log_text(data), 20, "the detached install to be building")
    owner = lock_owner(data)
    assert owner is not None
    os.killpg(owner, signal.SIGKILL)  # what a client's timeout or a closed terminal does to it
    wait_for(lambda: subprocess.run(["ps", "-p", str(owner), "-o", "stat="], capture_output=True, text=True).stdout.strip() in ("", "Z"),
             10, "the killed install to be gone")
    assert not (data / "venv").exists(), "a killed install leaves no half environment"

    started = time.monotonic()
    assert hook("user-prompt-submit", env).stdout == ""  # takes the stale lock over and reinstalls
    wait_for(lambda: (data / "venv" / ".crib-installed").exists(), 30, "the reinstall")
    assert time.monotonic() - started < 30
    assert "took over the lock of a stopped install" in (data / "install.log").read_text()
    assert not list(data.glob("venv.new.*")) and not (data / "install.lock").exists()

    wrote = run(["write", "type=decision Chose SQLite for storage: one file, zero dependencies."], env)
    assert wrote.returncode == 0, wrote.stderr
    assert "Chose SQLite" in context(hook("user-prompt-submit", env))
    assert installs(data) == 2


@pytest.mark.slow
def test_an_install_killed_while_swapping_leaves_the_old_environment(env: dict[str, str]) -> None:
    data = Path(env["CLAUDE_PLUGIN_DATA"])
    assert run(["write", "type=note first install"], env).returncode == 0
    (data / "venv").rename(data / "venv.old.12345")  # killed between its two renames
    assert run(["write", "type=note second"], env).returncode == 0
    assert (data / "venv" / ".crib-installed").exists() and not list(data.glob("venv.old.*"))
    assert "restored the previous environment" in (data / "install.log").read_text()


def sandbox_path(tmp_path: Path, extra: dict[str, str]) -> str:
    """A PATH with the system's tools but no Python and no uv, plus the scripts in ``extra``."""
    tools = tmp_path / "sandbox-bin"
    tools.mkdir(exist_ok=True)
    for folder in ("/usr/bin", "/bin"):
        if not os.path.isdir(folder):
            continue
        for name in os.listdir(folder):
            if name.startswith(("python", "uv", "pyenv", "pip")) or (tools / name).exists():
                continue
            (tools / name).symlink_to(os.path.join(folder, name))
    for name, text in extra.items():
        (tools / name).unlink(missing_ok=True)
        (tools / name).write_text(text)
        (tools / name).chmod(0o755)
    return str(tools)


PYTHON39 = "#!/bin/sh\n# what macOS's /usr/bin/python3 answers\necho '3.9.18 venv'\nexit 1\n"


def test_only_python_3_9_on_path_says_so_once_and_does_not_retry_every_hook(env: dict[str, str], tmp_path: Path) -> None:
    data = Path(env["CLAUDE_PLUGIN_DATA"])
    env = {k: v for k, v in env.items() if k != "CRIB_BOOTSTRAP_PYTHON"}
    env["PATH"] = sandbox_path(tmp_path, {"python3": PYTHON39})

    said = context(hook("session-start", env))
    assert "Python 3.10 or newer" in said and "python3 3.9.18" in said and "brew install" in said
    marker = data / "python-missing"
    seen = marker.stat().st_mtime_ns
    for _ in range(3):
        quiet = hook("user-prompt-submit", env)
        assert (quiet.returncode, quiet.stdout) == (0, "")
    assert context(hook("session-start", env)) == said  # every session start says it (one line)...
    assert marker.stat().st_mtime_ns == seen  # ...from what it remembered: nothing probed or retried
    assert installs(data) == 0 and not (data / "install.lock").exists()

    doctor = run(["doctor"], env)
    assert doctor.returncode == 1 and "Python 3.10 or newer" in doctor.stdout and "not installed" in doctor.stdout
    assert "3.10" in run(["list"], env).stderr

    # A new Python on PATH is noticed by the next hook, which installs.
    sandbox_path(tmp_path, {"python3.12": f'#!/bin/sh\nexec "{sys.executable}" "$@"\n'})
    assert hook("user-prompt-submit", env).stdout == ""
    wait_for(lambda: (data / "venv" / ".crib-installed").exists(), 30, "the install with the new Python")
    assert not marker.exists()


def installed_layout(tmp_path: Path, home: Path) -> tuple[Path, Path]:
    """The plugin as Claude Code installs it from a marketplace: (plugin root, the data folder it sets)."""
    plugins = home / ".claude" / "plugins"
    root = plugins / "cache" / "crib" / "crib" / "0.1.0"
    copy_plugin(root)
    return root, plugins / "data" / "crib-crib"


def copy_plugin(root: Path) -> None:
    (root / "bin").mkdir(parents=True)
    shutil.copy2(LAUNCHER, root / "bin" / "crib")
    shutil.copytree(ROOT / "launcher", root / "launcher")
    shutil.copytree(ROOT / ".claude-plugin", root / ".claude-plugin")
    shutil.copy2(ROOT / "pyproject.toml", root / "pyproject.toml")


@pytest.mark.slow
@pytest.mark.parametrize("layout", ["installed", "in place"])
def test_the_bash_tool_without_plugin_variables_uses_the_hooks_environment(env: dict[str, str], tmp_path: Path, layout: str) -> None:
    home = Path(env["HOME"])
    if layout == "installed":
        root, data = installed_layout(tmp_path, home)
    else:  # a marketplace added from a local clone: Claude Code runs the plugin where it is
        root, data = tmp_path / "clone", home / ".claude" / "plugins" / "data" / "crib-crib"
        copy_plugin(root)
    launcher = root / "bin" / "crib"
    hook_env = {**env, "CLAUDE_PLUGIN_ROOT": str(root), "CLAUDE_PLUGIN_DATA": str(data)}
    assert run(["write", "type=decision Chose SQLite for storage."], hook_env, launcher=launcher).returncode == 0
    assert run(["hook", "session-start"], hook_env, launcher=launcher).returncode == 0

    bash_env = {k: v for k, v in env.items() if not k.startswith("CLAUDE_")}
    doctor = run(["doctor"], bash_env, launcher=launcher)
    assert f"plugin data:  {data} " in doctor.stdout, doctor.stdout
    listed = run(["list"], bash_env, launcher=launcher)
    assert listed.returncode == 0 and "Chose SQLite" in listed.stdout
    assert installs(data) == 1, "one environment: the Bash tool did not install a second"
    assert not (home / ".local" / "share" / "crib-plugin" / "venv").exists()


def test_outside_a_plugin_the_launcher_uses_the_user_data_folder(env: dict[str, str], tmp_path: Path) -> None:
    root = tmp_path / "clone"
    copy_plugin(root)
    bash_env = {k: v for k, v in env.items() if not k.startswith("CLAUDE_")}
    doctor = run(["doctor"], bash_env, launcher=root / "bin" / "crib")
    assert f"plugin data:  {env['HOME']}/.local/share/crib-plugin (not an installed plugin" in doctor.stdout


def stub_session(env: dict[str, str]) -> StdioServerParameters:
    return StdioServerParameters(command="bash", args=[str(LAUNCHER), "mcp"], env=env, cwd=os.getcwd())


@pytest.mark.slow
def test_mcp_answers_at_once_while_installing_then_hands_over_to_crib(env: dict[str, str]) -> None:
    data = Path(env["CLAUDE_PLUGIN_DATA"])
    env = {**env, "FAKE_SLEEP": "6"}

    async def scenario() -> dict[str, Any]:
        out: dict[str, Any] = {}
        with open(os.devnull, "w") as errlog:
            async with stdio_client(stub_session(env), errlog=errlog) as (read, write):
                async with ClientSession(read, write) as client:
                    started = time.monotonic()
                    with anyio.fail_after(10):
                        await client.initialize()
                    out["initialize_s"] = time.monotonic() - started
                    out["tools"] = {t.name for t in (await client.list_tools()).tools}
                    early = await client.call_tool("remember", {"text": "Chose SQLite for storage."})
                    out["early"] = (early.is_error, early.content[0].text)
                    with anyio.fail_after(60):
                        while not (data / "venv" / ".crib-installed").exists():
                            await anyio.sleep(0.2)
                    late = await client.call_tool("remember", {"text": "Chose SQLite for storage."})
                    out["late"] = (late.is_error, late.structured_content)
                    recalled = await client.call_tool("recall", {"query": "which database for storage?"})
                    out["recall"] = recalled.content[0].text
        return out

    out = anyio.run(scenario)
    assert out["initialize_s"] < 5, out  # ~0.1 s; generous for a loaded machine, far under a client's 30 s
    assert out["tools"] == TOOLS
    assert out["early"][0] is True and "still installing" in out["early"][1]
    assert out["late"][0] is False and out["late"][1]["id"] == 1, out["late"]
    assert "Chose SQLite" in out["recall"]


def test_the_stand_in_lists_the_tools_crib_mcp_lists() -> None:
    """The stand-in reads the manifest crib ships (crib_plugin/hosts/mcp_manifest.json), which
    tests/test_mcp_front.py keeps equal to what the real server lists."""
    sys.path.insert(0, str(ROOT / "launcher"))
    try:
        import mcp_stub
    finally:
        sys.path.remove(str(ROOT / "launcher"))
    manifest = json.loads((ROOT / "crib_plugin" / "hosts" / "mcp_manifest.json").read_text())
    assert mcp_stub.static_tools() == manifest["tools"] and {t["name"] for t in manifest["tools"]} == TOOLS


def test_the_stand_in_says_why_when_python_is_too_old(env: dict[str, str], tmp_path: Path) -> None:
    data = Path(env["CLAUDE_PLUGIN_DATA"])
    data.mkdir()
    (data / "python-missing").write_text("id\ncrib needs Python 3.10 or newer; PATH offers python3 3.9.18.\n")
    stub = subprocess.Popen([sys.executable, str(ROOT / "launcher" / "mcp_stub.py"), str(LAUNCHER), str(data)],
                            stdin=subprocess.PIPE, stdout=subprocess.PIPE, text=True)
    assert stub.stdin is not None and stub.stdout is not None
    for message in ({"jsonrpc": "2.0", "id": 1, "method": "initialize", "params": {"protocolVersion": "2025-06-18"}},
                    {"jsonrpc": "2.0", "id": 2, "method": "tools/call", "params": {"name": "recall", "arguments": {"query": "x"}}}):
        stub.stdin.write(json.dumps(message) + "\n")
        stub.stdin.flush()
        reply = json.loads(stub.stdout.readline())
    assert reply["result"]["isError"] is True and "Python 3.10 or newer" in reply["result"]["content"][0]["text"]
    stub.send_signal(signal.SIGTERM)
    assert stub.wait(timeout=10) == 0


def test_terminal_help_names_a_working_route(env: dict[str, str]) -> None:
    text = run(["--terminal-help"], env).stdout
    assert f'uv tool install "{ROOT}"' in text and f'pipx install "{ROOT}"' in text


@pytest.mark.slow
@pytest.mark.skipif(os.environ.get("CRIB_REAL_INSTALL") != "1",
                    reason="a real pip install of crib takes 60-80 s and its dependencies' download: set CRIB_REAL_INSTALL=1")
def test_a_real_install_renamed_into_place_runs_crib(env: dict[str, str]) -> None:
    """No fake: python -m venv + pip install of this checkout into venv.new.<pid>, renamed to venv
    (a venv's interpreter finds its packages after the rename; its console scripts are not used)."""
    data = Path(env["CLAUDE_PLUGIN_DATA"])
    env = {k: v for k, v in env.items() if k != "CRIB_TEST_INSTALLER"}
    wrote = run(["write", "type=decision Chose SQLite for storage."], env, timeout=900)
    assert wrote.returncode == 0, wrote.stderr + log_text(data)
    assert (data / "venv" / ".crib-installed").exists() and not list(data.glob("venv.new.*"))
    assert "Chose SQLite" in run(["list"], env).stdout
