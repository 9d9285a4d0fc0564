"""``crib mcp`` (and the launcher's stand-in) end cleanly — status 0, at once — on SIGINT, SIGTERM
and a closed stdin, as a real subprocess the way an MCP host runs them (issue 20: Claude Code
logged "SIGINT failed, sending SIGTERM")."""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parent.parent
INITIALIZE = {"jsonrpc": "2.0", "id": 1, "method": "initialize",
              "params": {"protocolVersion": "2025-06-18", "capabilities": {}, "clientInfo": {"name": "test", "version": "1"}}}


def ignore_sigint() -> None:
    """What a host that starts servers in the background hands down: SIGINT ignored."""
    signal.signal(signal.SIGINT, signal.SIG_IGN)


def server(kind: str, tmp_path: Path) -> subprocess.Popen[bytes]:
    env = {**os.environ, "PYTHONPATH": str(ROOT)}
    if kind == "crib mcp":
        args = [sys.executable, "-m", "crib_plugin", "mcp"]
    else:  # the stand-in bin/crib runs while crib installs
        (tmp_path / "pd").mkdir(exist_ok=True)
        args = [sys.executable, str(ROOT / "launcher" / "mcp_stub.py"), str(ROOT / "bin" / "crib"), str(tmp_path / "pd")]
    proc = subprocess.Popen(args, stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=subprocess.PIPE, env=env,
                            preexec_fn=ignore_sigint)
    assert proc.stdin is not None and proc.stdout is not None
    proc.stdin.write((json.dumps(INITIALIZE) + "\n").encode())
    proc.stdin.flush()
    reply = json.loads(proc.stdout.readline())
    assert reply["id"] == 1 and "serverInfo" in reply["result"]
    return proc


@pytest.mark.parametrize("kind", ["crib mcp", "stand-in"])
@pytest.mark.parametrize("how", ["SIGINT", "SIGTERM", "closed stdin"])
def test_the_server_exits_cleanly(kind: str, how: str, tmp_path: Path) -> None:
    proc = server(kind, tmp_path)
    if how == "closed stdin":
        assert proc.stdin is not None
        proc.stdin.close()
    else:
        proc.send_signal(getattr(signal, how))
    try:
        status = proc.wait(timeout=15)
    except subprocess.TimeoutExpired:
        proc.kill()
        raise AssertionError(f"{kind} ignored {how}") from None
    stderr = proc.stderr.read().decode() if proc.stderr else ""
    assert status == 0, stderr
    assert "Traceback" not in stderr
