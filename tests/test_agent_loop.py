"""The example agent loop runs offline and the user never sees the memory block the model echoed."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

EXAMPLE = Path(__file__).resolve().parent.parent / "examples" / "agent_loop.py"


def test_agent_loop_example_scrubs_the_echoed_memory_block(tmp_path: Path) -> None:
    result = subprocess.run(
        [sys.executable, str(EXAMPLE)], capture_output=True, text=True, timeout=120, cwd=tmp_path
    )
    assert result.returncode == 0, result.stderr
    shown, log = result.stdout, result.stderr
    # the model did get crib's block (and the plugin's note) as context …
    assert "[agent] stored decision as entry 1" in log
    assert "[agent] injected 2 context blocks" in log
    assert "<memory-context" in log and "Chose SQLite for storage. Zero dependencies." in log
    # … and echoed it, but the user sees only the reply around it
    assert shown.startswith("Let me check my notes.\n")
    assert "Project note: the team prefers boring, well-understood technology." in shown
    assert shown.rstrip().endswith("We chose SQLite for storage: it has zero dependencies.")
    for leaked in ("memory-context", "Note from crib", "Zero dependencies.", "</memory", "<memory"):
        assert leaked not in shown, f"{leaked!r} reached the user"
    assert not list(tmp_path.iterdir()), "the example must not leave files in the working directory"
