"""Every dotted ``crib_plugin.…`` reference in the code's docstrings and comments, and in the
Markdown (ARCHITECTURE.md, README.md, docs/), names a module or attribute that exists.

Modules move between folders as the layout changes; a docstring that still says
``crib_plugin.specific`` sends a reader nowhere. Resolved statically (no import: optional stacks
stay unloaded): the longest prefix that is a module file, then each attribute as a name that
module defines or imports at its top level (a class's attribute inside its body).
"""

from __future__ import annotations

import ast
import functools
import re
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parent.parent
REFERENCE = re.compile(r"(?<![\w./-])crib_plugin(?:\.[A-Za-z_]\w*)+")
SOURCES = sorted([*ROOT.glob("crib_plugin/**/*.py"), *ROOT.glob("crib_eval/**/*.py"), ROOT / "ARCHITECTURE.md",
                  ROOT / "README.md", *ROOT.glob("docs/*.md")])


def module_file(parts: list[str]) -> Path | None:
    base = ROOT.joinpath(*parts)
    for path in (base.with_suffix(".py"), base / "__init__.py"):
        if path.is_file():
            return path
    return None


@functools.cache
def top_level(path: Path) -> dict[str, ast.AST | None]:
    """The names ``path`` binds at its top level, also under ``if``/``try`` (TYPE_CHECKING, fallbacks);
    a class maps to its node, a ``from .x import Y`` to Y's node in ``x`` when found; the names a
    PEP 562 ``__getattr__`` serves lazily (string keys of the module) count too."""
    tree = ast.parse(path.read_text(encoding="utf-8"))
    names: dict[str, ast.AST | None] = {}
    for node in tree.body:
        for inner in ast.walk(node) if isinstance(node, (ast.If, ast.Try)) else [node]:
            names.update(bound(inner, path))
    if "__getattr__" in names:
        names.update({c.value: None for c in ast.walk(tree) if isinstance(c, ast.Constant) and isinstance(c.value, str)
                      and c.value.isidentifier() and c.value not in names})
    return names


def bound(node: ast.AST, path: Path) -> dict[str, ast.AST | None]:
    if isinstance(node, ast.ClassDef):
        return {node.name: node}
    if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef)):
        return {node.name: None}
    if isinstance(node, ast.ImportFrom) and node.level:  # a relative import: follow it to the class it names
        package = path.parent.relative_to(ROOT).parts[: len(path.parent.relative_to(ROOT).parts) - node.level + 1]
        source = module_file([*package, *(node.module or "").split(".")]) if node.module else None
        return {a.asname or a.name: (top_level(source).get(a.name) if source is not None and source != path else None)
                for a in node.names}
    if isinstance(node, (ast.Import, ast.ImportFrom)):
        return {(a.asname or a.name).split(".")[0]: None for a in node.names}
    targets = node.targets if isinstance(node, ast.Assign) else [node.target] if isinstance(node, ast.AnnAssign) else []
    return {t.id: None for t in targets if isinstance(t, ast.Name)}


def class_has(node: ast.ClassDef, name: str, names: dict[str, ast.AST | None]) -> bool:
    """Whether class ``node`` (or a base class of it named in its module, ``names``) has ``name``:
    in its body, or as ``self.name = …`` in a method."""
    if any(name in bound(item, ROOT) for item in node.body if not isinstance(item, ast.ImportFrom)):
        return True
    if any(isinstance(t, ast.Attribute) and t.attr == name for item in node.body if isinstance(item, ast.FunctionDef)
           for sub in ast.walk(item) if isinstance(sub, ast.Assign) for t in sub.targets):
        return True
    bases = [names.get(b.id) for b in node.bases if isinstance(b, ast.Name)]
    return any(isinstance(base, ast.ClassDef) and class_has(base, name, {}) for base in bases)


def resolves(reference: str) -> bool:
    parts = reference.split(".")
    for end in range(len(parts), 0, -1):
        path = module_file(parts[:end])
        if path is None:
            continue
        attrs = parts[end:]
        if not attrs:
            return True
        names = top_level(path)
        if attrs[0] not in names:
            return False
        owner = names[attrs[0]]
        return len(attrs) == 1 or not isinstance(owner, ast.ClassDef) or class_has(owner, attrs[1], names)
    return False


def references() -> list[tuple[str, str]]:
    found = []
    for path in SOURCES:
        for number, line in enumerate(path.read_text(encoding="utf-8").splitlines(), 1):
            for match in REFERENCE.finditer(line):
                found.append((f"{path.relative_to(ROOT)}:{number}", match.group(0).rstrip(".")))
    return found


def test_references_are_found() -> None:
    assert len(references()) > 200  # the pattern still matches what the code writes


def test_every_crib_plugin_reference_names_something_real() -> None:
    broken = [f"{where}: {reference}" for where, reference in references() if not resolves(reference)]
    assert not broken, "references to modules or attributes that do not exist:\n" + "\n".join(broken)


@pytest.mark.parametrize("reference, real", [
    ("crib_plugin.read.gate.specific.facts_bear", True),
    ("crib_plugin.read.channels.base.Channel", True),
    ("crib_plugin.core.records.Retrieval.hits", True),
    ("crib_plugin.Memory", True),
    ("crib_plugin.specific", False),
    ("crib_plugin.channels.base.Channel", False),
    ("crib_plugin.read.gate.specific.no_such_function", False),
    ("crib_plugin.core.records.Retrieval.no_such_field", False),
])
def test_the_resolver_tells_real_from_gone(reference: str, real: bool) -> None:
    assert resolves(reference) is real
