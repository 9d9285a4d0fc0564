"""The ``crib_plugin`` module graph and size measures, computed from the source with ``ast``: shared
by ``test_layout.py`` (the layout rules) and ``test_import_graph.py`` (which layer imports which).

Every import counts: at module level, inside functions and under ``TYPE_CHECKING`` (a deferred
import is still a dependency).
"""

from __future__ import annotations

import ast
import functools
from pathlib import Path

PACKAGE = Path(__file__).resolve().parent.parent / "crib_plugin"
MAX_MODULE_LINES = 400
MAX_FUNCTION_LINES = 60


@functools.cache
def _parsed(path: Path, mtime_ns: int, size: int) -> ast.Module:
    """The syntax tree of one file, parsed once per process for this version of it (the measures
    below walk every module of the package, and a test process asks for them a dozen times)."""
    return ast.parse(path.read_text(encoding="utf-8"))


def parse(path: Path) -> ast.Module:
    """``ast.parse`` of ``path``'s source (cached; never modify the tree)."""
    stat = path.stat()
    return _parsed(path, stat.st_mtime_ns, stat.st_size)


def modules(root: Path = PACKAGE) -> dict[str, Path]:
    """Dotted module name → file, for every ``.py`` under ``root`` (a package's ``__init__`` is the package)."""
    found: dict[str, Path] = {}
    for path in root.rglob("*.py"):
        parts = list(path.relative_to(root.parent).with_suffix("").parts)
        if parts[-1] == "__init__":
            parts.pop()
        found[".".join(parts)] = path
    return found


def _targets(module: str, path: Path, node: ast.Import | ast.ImportFrom, known: dict[str, Path]) -> list[str]:
    """The known modules one import statement names (``from pkg import mod`` names ``pkg.mod``)."""
    if isinstance(node, ast.Import):
        return [alias.name for alias in node.names if alias.name in known]
    package = module if path.name == "__init__.py" else module.rpartition(".")[0]
    base = node.module or ""
    if node.level:
        anchor = package.split(".")[: len(package.split(".")) - node.level + 1]
        base = ".".join([*anchor, base] if base else anchor)
    out = []
    for alias in node.names:
        if f"{base}.{alias.name}" in known:
            out.append(f"{base}.{alias.name}")
        elif base in known:
            out.append(base)
    return out


def import_graph(root: Path = PACKAGE) -> dict[str, set[str]]:
    """Module → the package modules it imports anywhere in its source (not itself, its own
    packages, or the top-level package, whose ``__init__`` only re-exports)."""
    known = modules(root)
    top = root.name
    graph: dict[str, set[str]] = {name: set() for name in known}
    for name, path in known.items():
        for node in ast.walk(parse(path)):
            if isinstance(node, (ast.Import, ast.ImportFrom)):
                for target in _targets(name, path, node, known):
                    if target not in (name, top) and not name.startswith(target + "."):
                        graph[name].add(target)
    return graph


def cycles(graph: dict[str, set[str]]) -> list[list[str]]:
    """Strongly connected components of more than one module (iterative Tarjan), each sorted."""
    index: dict[str, int] = {}
    low: dict[str, int] = {}
    stack: list[str] = []
    on_stack: set[str] = set()
    found: list[list[str]] = []
    for root in sorted(graph):
        if root in index:
            continue
        index[root] = low[root] = len(index)
        stack.append(root)
        on_stack.add(root)
        work = [(root, iter(sorted(graph[root])))]
        while work:
            node, children = work[-1]
            child = next(children, None)
            if child is not None:
                if child not in index:
                    index[child] = low[child] = len(index)
                    stack.append(child)
                    on_stack.add(child)
                    work.append((child, iter(sorted(graph[child]))))
                elif child in on_stack:
                    low[node] = min(low[node], index[child])
                continue
            work.pop()
            if work:
                low[work[-1][0]] = min(low[work[-1][0]], low[node])
            if low[node] == index[node]:
                component = []
                while True:
                    member = stack.pop()
                    on_stack.discard(member)
                    component.append(member)
                    if member == node:
                        break
                if len(component) > 1:
                    found.append(sorted(component))
    return found


def big_modules(root: Path = PACKAGE) -> dict[str, int]:
    """Modules over the line limit → their length."""
    lengths = {name: len(path.read_text(encoding="utf-8").splitlines()) for name, path in modules(root).items()}
    return {name: n for name, n in sorted(lengths.items()) if n > MAX_MODULE_LINES}


def long_functions(root: Path = PACKAGE) -> dict[str, int]:
    """``module.function`` over the line limit (decorators excluded, docstring included) → its length."""
    out: dict[str, int] = {}
    for name, path in modules(root).items():
        for node in ast.walk(parse(path)):
            if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef)):
                n = (node.end_lineno or node.lineno) - node.lineno + 1
                if n > MAX_FUNCTION_LINES:
                    out[f"{name}.{node.name}"] = n
    return out


#: The folders of ``crib_plugin`` along the data path, lowest first: a module may import its own
#: layer and the layers below it, never one above (``test_layout.test_no_upward_import``).
#: A layer is named by the module prefixes it holds; the longest matching prefix decides.
LAYERS: tuple[tuple[str, tuple[str, ...]], ...] = (
    ("core", ("crib_plugin.core",)),
    ("text", ("crib_plugin.text",)),
    ("store", ("crib_plugin.store",)),
    ("models", ("crib_plugin.models",)),
    ("plugins", ("crib_plugin.plugins",)),
    ("write", ("crib_plugin.write",)),
    ("read", ("crib_plugin.read",)),
    ("output", ("crib_plugin.output",)),
    ("facade", ("crib_plugin.memory", "crib_plugin.scopes")),
    ("hosts", ("crib_plugin.hosts",)),
    ("default_plugins", ("crib_plugin.plugins.default_plugins",)),
    ("entry", ("crib_plugin", "crib_plugin.__main__")),
)


def layer_of(module: str, layers: tuple[tuple[str, tuple[str, ...]], ...] = LAYERS) -> tuple[int, str] | None:
    """(rank, name) of the layer holding ``module``: the one with the longest prefix that matches."""
    best: tuple[int, int, str] | None = None
    for rank, (name, prefixes) in enumerate(layers):
        for prefix in prefixes:
            if (module == prefix or module.startswith(prefix + ".")) and (best is None or len(prefix) > best[0]):
                best = (len(prefix), rank, name)
    return None if best is None else (best[1], best[2])


def upward_imports(graph: dict[str, set[str]], layers: tuple[tuple[str, tuple[str, ...]], ...] = LAYERS) -> set[tuple[str, str]]:
    """Every (importer, imported) pair where the imported module's layer ranks above the importer's."""
    out: set[tuple[str, str]] = set()
    for module, targets in graph.items():
        here = layer_of(module, layers)
        for target in targets:
            there = layer_of(target, layers)
            if here is not None and there is not None and there[0] > here[0]:
                out.add((module, target))
    return out


def private_imports(root: Path = PACKAGE) -> list[str]:
    """``importer: from module import _name`` for every private name imported from another module of the package."""
    known = modules(root)
    out: list[str] = []
    for name, path in known.items():
        package = name if path.name == "__init__.py" else name.rpartition(".")[0]
        for node in ast.walk(parse(path)):
            if not isinstance(node, ast.ImportFrom):
                continue
            base = node.module or ""
            if node.level:
                anchor = package.split(".")[: len(package.split(".")) - node.level + 1]
                base = ".".join([*anchor, base] if base else anchor)
            if base.split(".")[0] != root.name:
                continue
            out.extend(f"{name}: from {base} import {a.name}" for a in node.names
                       if a.name.startswith("_") and not a.name.startswith("__"))
    return sorted(out)
