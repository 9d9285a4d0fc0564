"""Imports at the top of the module; an import inside a function says why (issue 21).

A deferred import is any ``import``/``from … import`` statement inside a function (at any depth,
nested functions included), and any call to ``importlib.import_module(…)``, ``import_module(…)`` or
``__import__(…)`` inside one: switching to importlib does not hide one. Each must carry a comment
starting ``# deferred:`` that gives the measured reason — trailing on its first line, or on the line
just before it; a run of deferred imports one after another may share the comment above the first.
The convention is in docs/development.md ("Imports").
"""

from __future__ import annotations

import ast
from dataclasses import dataclass
from pathlib import Path

PACKAGE = Path(__file__).resolve().parent.parent / "crib_plugin"

# The count may only go down, but for a new host's per-call path. It was 59; the agent hosts added
# four, each with its reason: Gemini's AfterModel filter runs once per streamed chunk, and a plain
# chunk imports nothing else of crib (hosts/stream.py: 154 ms -> the interpreter's own start, see
# docs/benchmarks.md "Agent hosts"), and `crib doctor --models` alone loads the Ollama client (0.5 s).
# The ones left are listed, with their measured cost, by `python -m pytest
# tests/test_deferred_imports.py -q -rA` (see the report test).
MAX_DEFERRED = 63
MARK = "# deferred:"
_IMPORT_CALLS = {"import_module", "__import__"}


@dataclass(frozen=True)
class Site:
    """One deferred import: where it is and whether its reason is given."""

    path: str
    line: int
    text: str
    reasoned: bool


def _is_import_call(node: ast.AST) -> bool:
    if not isinstance(node, ast.Call):
        return False
    func = node.func
    name = func.attr if isinstance(func, ast.Attribute) else func.id if isinstance(func, ast.Name) else ""
    return name in _IMPORT_CALLS


def deferred_sites(source: str, path: str = "<string>") -> list[Site]:
    """Every import statement or import call inside a function of ``source``, in line order."""
    tree = ast.parse(source)
    lines = source.splitlines()
    found: list[ast.AST] = []

    def walk(node: ast.AST, in_function: bool) -> None:
        for child in ast.iter_child_nodes(node):
            inside = in_function or isinstance(child, (ast.FunctionDef, ast.AsyncFunctionDef, ast.Lambda))
            if in_function and (isinstance(child, (ast.Import, ast.ImportFrom)) or _is_import_call(child)):
                found.append(child)
            walk(child, inside)

    walk(tree, False)
    found.sort(key=lambda node: (node.lineno, node.col_offset))
    sites: list[Site] = []
    reasoned_lines: set[int] = set()  # statement lines whose reason is given (a run shares one comment)
    for node in found:
        first, last = node.lineno, getattr(node, "end_lineno", node.lineno) or node.lineno
        trailing = any(MARK in lines[i - 1] for i in range(first, last + 1))
        above = lines[first - 2].strip() if first >= 2 else ""
        run = first - 1 in reasoned_lines and isinstance(node, (ast.Import, ast.ImportFrom))
        reasoned = trailing or above.startswith(MARK) or (above.startswith("#") and _comment_block_has_mark(lines, first - 2)) or run
        if reasoned:
            reasoned_lines.update(range(first, last + 1))
        sites.append(Site(path, first, lines[first - 1].strip(), reasoned))
    return sites


def _comment_block_has_mark(lines: list[str], index: int) -> bool:
    """Whether the block of ``#`` lines ending at ``lines[index]`` starts with the mark (a reason
    that wraps onto more comment lines)."""
    while index >= 0 and lines[index].strip().startswith("#"):
        if lines[index].strip().startswith(MARK):
            return True
        index -= 1
    return False


def package_sites(root: Path = PACKAGE) -> list[Site]:
    sites: list[Site] = []
    for path in sorted(root.rglob("*.py")):
        sites.extend(deferred_sites(path.read_text(encoding="utf-8"), str(path.relative_to(root.parent))))
    return sites


def test_counter_sees_statements_calls_and_reasons() -> None:
    source = (
        "import os\n"
        "def f():\n"
        "    import json\n"
        "    # deferred: numpy costs 60 ms\n"
        "    import numpy\n"
        "    import numpy.linalg\n"
        "    x = 1\n"
        "    from a import b  # deferred: a cycle\n"
        "    def g():\n"
        "        return importlib.import_module('m')\n"
        "    h = lambda: __import__('n')\n"
        "class C:\n"
        "    import re\n"
        "    def m(self):\n"
        "        # a comment that is not a reason\n"
        "        from . import z\n"
    )
    sites = deferred_sites(source)
    assert [(s.line, s.reasoned) for s in sites] == [
        (3, False), (5, True), (6, True), (8, True), (10, False), (11, False), (16, False)
    ]


def test_in_function_imports_are_few() -> None:
    sites = package_sites()
    assert len(sites) <= MAX_DEFERRED, (
        f"{len(sites)} imports inside functions (at most {MAX_DEFERRED}): put new imports at the top of the module"
    )


def test_every_deferred_import_says_why() -> None:
    missing = [f"{s.path}:{s.line}: {s.text}" for s in package_sites() if not s.reasoned]
    assert not missing, (
        f"imports inside functions without a `{MARK} <measured reason>` comment (move them to the top of the "
        "module, or say what deferring saves):\n" + "\n".join(missing)
    )


def test_the_viewer_stack_stays_off_the_hook_path() -> None:
    """``crib ui``'s web stack (Starlette, uvicorn, multipart) and the management mixin load only for
    that command: ``import crib_plugin``, the prompt hook's modules and a retrieval load none of it."""
    import subprocess
    import sys

    code = (
        "import sys, crib_plugin, crib_plugin.hosts.claude, crib_plugin.hosts.cli.hotpath, crib_plugin.hosts.cli.app\n"
        "from crib_plugin.plugins.default_plugins import hooks\n"
        "bad = sorted(m for m in sys.modules if m.split('.')[0] in ('starlette', 'uvicorn', 'multipart', 'python_multipart')\n"
        "             or m.startswith(('crib_plugin.hosts.ui', 'crib_plugin.read.ops', 'crib_plugin.hosts.cli.ui')))\n"
        "assert not bad, bad\n"
    )
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=60)
    assert done.returncode == 0, done.stderr
