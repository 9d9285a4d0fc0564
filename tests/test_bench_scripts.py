"""The benchmark scripts run end to end in a tiny mode and print their tables.

No timing is asserted: the figures belong to the benchmarks (`bench/README.md`), and a loaded CI
machine would make any threshold flaky. What is proven: the scripts run against the real console
script and the real store, write what they say they write, and print well-formed markdown.
"""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parent.parent
BENCH = ROOT / "bench"


def run_script(name: str, *args: str, timeout: float = 120) -> str:
    result = subprocess.run(
        [sys.executable, str(BENCH / name), *args], capture_output=True, text=True, timeout=timeout
    )
    assert result.returncode == 0, result.stderr
    return result.stdout


def table_rows(output: str) -> list[list[str]]:
    """The data rows of the markdown tables in ``output`` (header and separator lines dropped)."""
    rows = []
    for line in output.splitlines():
        if line.startswith("|") and not line.startswith("|---"):
            rows.append([cell.strip() for cell in line.strip("|").split("|")])
    return [r for r in rows if r[0] not in ("path", "command")]


def bench_module(name: str):  # type: ignore[no-untyped-def]
    """Import a script from bench/ (which is not a package) as a module."""
    sys.path.insert(0, str(BENCH))
    try:
        return __import__(name)
    finally:
        sys.path.remove(str(BENCH))


def test_synthetic_entries_are_deterministic_60_words() -> None:
    synthetic_entries = bench_module("ingest").synthetic_entries
    first, again = synthetic_entries(20), synthetic_entries(20)
    assert first == again
    assert len({text for _, text in first}) == 20
    assert all(len(text.split()) == 60 for _, text in first)
    assert {kind for kind, _ in first} == {"note", "decision", "correction", "error"}


def test_ingest_bench_tiny(tmp_path: Path) -> None:
    out = run_script("ingest.py", "--entries", "8", "--processes", "1", "--keep", str(tmp_path / "ingest"))
    assert "| path | entries | seconds | entries/s | ms/entry | CPU s |" in out
    rows = table_rows(out)
    assert len(rows) == 3
    assert [r[1] for r in rows] == ["8", "8", "1"]
    assert all(float(r[3].strip("*")) > 0 and float(r[5]) > 0 for r in rows)
    from crib_plugin import Memory

    with Memory(tmp_path / "ingest" / "cli.db", create=False) as memory:
        assert memory.store.count_entries() == 2  # warm-up process + one timed process


@pytest.mark.slow
def test_latency_bench_tiny(tmp_path: Path) -> None:
    cache = tmp_path / "bench"
    out = run_script("latency.py", "--entries", "30", "--runs", "2", "--cache", str(cache), "--no-shim")
    assert "| command | runs | median ms | p90 ms | max ms | median CPU ms |" in out
    rows = table_rows(out)
    labels = [r[0] for r in rows]
    assert labels[0].startswith("`crib retrieve`")
    assert any("import numpy" in label for label in labels)
    assert any(label == "`python -c pass`" for label in labels)
    assert all(r[1] == "2" for r in rows)
    assert "failed" not in rows[0][7]
    assert all(float(r[5]) > 0 for r in rows), "child CPU time is measured"
    assert list(cache.glob("latency-30-*.db")) and list(cache.glob("latency-30-*.done"))


def test_path_shim_finds_a_shim_hidden_behind_the_real_script(tmp_path: Path, monkeypatch) -> None:
    """Under `pyenv exec` the real bin dir comes first on PATH; the shim behind it must still be found."""
    latency = bench_module("latency")
    real_dir, shim_dir = tmp_path / "real", tmp_path / "shims"
    for directory in (real_dir, shim_dir):
        directory.mkdir()
        script = directory / "crib"
        script.write_text("#!/bin/sh\n")
        script.chmod(0o755)
    monkeypatch.setenv("PATH", f"{real_dir}:{shim_dir}")
    assert latency.path_shim("crib", real_dir / "crib") == shim_dir / "crib"
    monkeypatch.setenv("PATH", str(real_dir))
    assert latency.path_shim("crib", real_dir / "crib") is None
    assert "PYENV_VERSION" not in latency.shim_env({"PYENV_VERSION": "3.11.7", "CRIB_DB": "x"})


def test_redaction_bench_runs() -> None:
    out = run_script("redaction.py", "--runs", "1")
    assert "| prose, 8,000 chars (one injected block) |" in out and "import detect_secrets" in out


def test_cue_scale_bench_runs_on_sqlite() -> None:
    out = run_script("cue_scale.py", "--size", "300", "--runs", "1")
    lines = [line for line in out.splitlines() if line.startswith("sqlite: '")]
    assert len(lines) == 3 and all("every word" in line and "as the channel searches" in line for line in lines), out
    assert "(50 found)" in lines[0]  # below BIG_STORE the channel searches every word too


@pytest.mark.slow
def test_hostile_bench_quick(tmp_path: Path) -> None:
    out = run_script("hostile.py", "--quick", "--runs", "1", "--keep", str(tmp_path / "stores"), timeout=600)
    rows = [row for row in table_rows(out) if row[0] != "store"]
    assert len(rows) == 8  # 2 stores x 2 inputs x (hook, retrieve)
    assert all(row[5] == "yes" for row in rows), out


def test_gate_fit_learns_a_separable_gate_and_scores_it() -> None:
    """bench/gate_fit.py's regression and AUC (docs/pointers.md, ninth pass): one feature that
    separates the classes gets a positive weight and an AUC of 1; its reverse, 0."""
    import numpy as np

    gate_fit = bench_module("gate_fit")
    x = np.array([[0.1], [0.2], [0.3], [0.7], [0.8], [0.9]])
    y = np.array([0.0, 0.0, 0.0, 1.0, 1.0, 1.0])
    beta = gate_fit.fit(x, y, np.ones(len(y)), l2=0.1)
    assert beta[1] > 0
    scores = np.hstack([np.ones((len(x), 1)), x]) @ beta
    assert gate_fit.auc(scores[y == 1], scores[y == 0]) == 1.0
    assert gate_fit.auc(scores[y == 0], scores[y == 1]) == 0.0


def test_the_mutation_tables_rows_are_current() -> None:
    """Every row of docs/development.md's mutation table (what ``bench/mutations.py`` applies) names
    a module whose text to break occurs exactly once, and a test that exists — a row that went
    stale fails here, in the normal suite, rather than only when the check is run."""
    rows = bench_module("mutations").breakages()
    assert len(rows) >= 3
    for row in rows:
        assert (ROOT / row.module).read_text(encoding="utf-8").count(row.old) == 1, row
        test_file, _, name = row.test.partition("::")
        assert (ROOT / test_file).is_file(), row
        function = name.rsplit("::", 1)[-1].split("[", 1)[0]  # a parametrised test's id names one case
        defined = f"def {function}("  # in the file, or in a shared suite it inherits (store_contract.py)
        assert any(defined in path.read_text(encoding="utf-8") for path in (ROOT / "tests").glob("*.py")), row


@pytest.mark.slow
def test_hook_load_bench_quick(tmp_path: Path) -> None:
    out = run_script("hook_load.py", "--quick", "--keep", str(tmp_path / "stores"), timeout=600)
    rows = [row for row in table_rows(out) if row[0] != "calls"]
    assert len(rows) == 1 and rows[0][0] == "6" and rows[0][-1] == "yes", out
