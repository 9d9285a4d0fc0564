"""The layout rules of issue 11, item 1, computed from the source with ``ast``.

* no import cycle among ``crib_plugin`` modules — every import counts: at module level, inside
  functions and under ``TYPE_CHECKING`` (a deferred import is still a dependency);
* no module over 400 lines; no function over 60 lines.

The three rule tests are plain tests: the second re-layout pass (ARCHITECTURE.md) left no
violation. The helper tests below prove the checks can fail.
"""

from __future__ import annotations

from pathlib import Path

from module_graph import MAX_FUNCTION_LINES, big_modules, cycles, import_graph, long_functions


def _write(root: Path, files: dict[str, str]) -> Path:
    package = root / "pkg"
    for rel, text in files.items():
        (package / rel).parent.mkdir(parents=True, exist_ok=True)
        (package / rel).write_text(text, encoding="utf-8")
    return package


def test_the_graph_counts_function_level_type_checking_and_relative_imports(tmp_path: Path) -> None:
    package = _write(tmp_path, {
        "__init__.py": "from .a import x\n",
        "a.py": "def f():\n    from .sub import b\n",
        "sub/__init__.py": "",
        "sub/b.py": "from typing import TYPE_CHECKING\nif TYPE_CHECKING:\n    from ..c import y\n",
        "c.py": "import pkg.a\n",
        "d.py": "from . import c\n",
    })
    graph = import_graph(package)
    assert graph["pkg.a"] == {"pkg.sub.b"}
    assert graph["pkg.sub.b"] == {"pkg.c"}
    assert graph["pkg.c"] == {"pkg.a"}
    assert graph["pkg.d"] == {"pkg.c"}
    assert graph["pkg"] == {"pkg.a"}
    assert cycles(graph) == [["pkg.a", "pkg.c", "pkg.sub.b"]]


def test_the_size_checks_see_long_modules_and_functions(tmp_path: Path) -> None:
    body = "".join(f"    x{i} = {i}\n" for i in range(MAX_FUNCTION_LINES))
    package = _write(tmp_path, {"__init__.py": "", "long.py": "def f():\n" + body, "big.py": "x = 1\n" * 401})
    assert long_functions(package) == {"pkg.long.f": MAX_FUNCTION_LINES + 1}
    assert big_modules(package) == {"pkg.big": 401}


def test_no_import_cycles() -> None:
    found = cycles(import_graph())
    assert found == [], "import cycles:\n" + "\n".join(" <-> ".join(c) for c in found)


def test_no_module_over_400_lines() -> None:
    assert big_modules() == {}


def test_no_function_over_60_lines() -> None:
    assert long_functions() == {}
