"""``crib --help`` lists every command without importing any of them (it took 2–6 s when it
imported the MCP SDK, numpy and the evaluations to read each command's help), and lists them with
the very lines click would have printed after importing them."""

from __future__ import annotations

import subprocess
import sys

SCRIPT = """
import sys, io, contextlib
from crib_plugin.hosts.cli import app
out = io.StringIO()
with contextlib.redirect_stdout(out):
    try:
        app.main(["--help"])
    except SystemExit:
        pass
lazy = [spec.partition(":")[0] for spec in app.cli.lazy.values()]
loaded = sorted(m for m in lazy if (m if "." in m else "crib_plugin.hosts.cli." + m) in sys.modules)
heavy = sorted(m for m in ("mcp", "numpy", "crib_eval", "apsw") if m in sys.modules)
print(out.getvalue())
print("LOADED", loaded)
print("HEAVY", heavy)
"""


def _run(code: str) -> str:
    return subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True, timeout=120).stdout


def test_help_imports_no_command_module_nor_the_heavy_stacks() -> None:
    out = _run(SCRIPT)
    assert "LOADED []" in out, out
    assert "HEAVY []" in out, out
    for name in ("write", "retrieve", "mcp", "eval", "doctor", "show"):
        assert f"\n  {name} " in out, out


def test_help_lines_are_those_click_prints_with_every_command_loaded() -> None:
    lazy_help = _run(SCRIPT).split("LOADED")[0]
    eager = SCRIPT.replace("app.main([\"--help\"])", "app.load_plugin_commands(); [app.cli.get_command(None, n) for n in app.cli.list_commands(None)]; app.main([\"--help\"])")
    eager_help = _run(eager).split("LOADED")[0]
    assert lazy_help == eager_help
