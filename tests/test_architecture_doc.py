"""ARCHITECTURE.md is the true map: every file or folder it names in backticks exists, and every
folder of ``crib_plugin/`` (and every module at its top level) is described there."""

from __future__ import annotations

import re
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
PACKAGE = ROOT / "crib_plugin"
DOC = ROOT / "ARCHITECTURE.md"
#: A backticked path: ``core/``, ``store/base.py``, ``plugins/manager.py: DEFAULT_PLUGINS``, ``tests/x.py``.
PATH = re.compile(r"`([A-Za-z_][\w./]*(?:/|\.py|\.md))(?::[^`]*)?`")


def named_paths(text: str) -> list[str]:
    return sorted({m.group(1) for m in PATH.finditer(text)})


def resolves(name: str) -> bool:
    """Relative to the repository, to ``crib_plugin/``, or to a folder of it (a table row names
    ``sqlite.py`` in the ``store/`` row, so a bare file name may live in any package folder)."""
    bases = [ROOT, PACKAGE, *[p for p in PACKAGE.rglob("*") if p.is_dir() and p.name != "__pycache__"]]
    return any((base / name.rstrip("/")).exists() for base in bases)


def test_the_path_pattern_finds_names_and_the_check_can_fail(tmp_path: Path) -> None:
    text = "see `core/` and `store/base.py: Store`, `tests/test_x.py`, not `Memory.retrieve` or `crib eval`"
    assert named_paths(text) == ["core/", "store/base.py", "tests/test_x.py"]
    assert resolves("store/base.py") and resolves("sqlite.py") and not resolves("nowhere/gone.py")


def test_every_path_the_map_names_exists() -> None:
    text = DOC.read_text(encoding="utf-8")
    names = named_paths(text)
    assert len(names) > 30
    missing = [n for n in names if not resolves(n)]
    assert missing == [], f"ARCHITECTURE.md names paths that do not exist: {missing}"


def test_every_folder_and_top_level_module_is_described() -> None:
    text = DOC.read_text(encoding="utf-8")
    folders = sorted(str(p.relative_to(PACKAGE)) + "/" for p in PACKAGE.rglob("*")
                     if p.is_dir() and p.name != "__pycache__" and (p / "__init__.py").exists())
    top_modules = sorted(p.name for p in PACKAGE.glob("*.py"))
    undescribed = [f for f in folders if f"`{f}`" not in text and f"`{f.rsplit('/', 2)[-2]}/`" not in text]
    undescribed += [m for m in top_modules if m not in text]
    assert undescribed == [], f"ARCHITECTURE.md does not describe: {undescribed}"


def layer_row(text: str, folder: str) -> str:
    """The layer table's row for ``folder`` (``core/``, ``read/``…)."""
    return next(line for line in text.splitlines() if line.startswith("| ") and f"| `{folder}` |" in line)


def test_every_module_directly_in_a_layer_folder_is_named_in_its_row() -> None:
    """Each layer row names the modules sitting directly in its folder (a glob such as
    ``sqlite*.py`` or ``base*.py`` counts for the modules it matches)."""
    text = DOC.read_text(encoding="utf-8")
    unnamed = []
    for folder in ("core", "text", "store", "models", "plugins", "write", "read", "output", "hosts"):
        row = layer_row(text, f"{folder}/")
        globs = [g.removesuffix(".py") for g in re.findall(r"`([\w*]+\*[\w*]*)(?:\.py)?`", row)]
        for module in sorted(p.stem for p in (PACKAGE / folder).glob("*.py") if p.stem != "__init__"):
            named = re.search(rf"`{module}(?:\.py)?[`(: ]", row) or any(re.fullmatch(g.replace("*", r"\w*"), module) for g in globs)
            if not named:
                unnamed.append(f"{folder}/{module}.py")
    assert unnamed == [], f"ARCHITECTURE.md's layer table does not name: {unnamed}"


def test_core_names_its_one_third_party_dependency() -> None:
    """core/ imports only the standard library — and platformdirs (where a store and caches live)."""
    import ast

    imported: set[str] = set()
    for path in (PACKAGE / "core").glob("*.py"):
        for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
            if isinstance(node, ast.ImportFrom) and not node.level and node.module:
                imported.add(node.module.split(".")[0])
            elif isinstance(node, ast.Import):
                imported.update(a.name.split(".")[0] for a in node.names)
    third_party = sorted(imported - set(__import__("sys").stdlib_module_names) - {"__future__"})
    row = layer_row(DOC.read_text(encoding="utf-8"), "core/")
    assert third_party == ["platformdirs"] and "platformdirs" in row


def test_the_channel_signature_is_the_hookspecs() -> None:
    """The map's "A channel" recipe and the ``register_channels`` hookspec spell ``search`` as the
    Channel protocol does."""
    import inspect

    from crib_plugin.plugins.hookspecs import register_channels
    from crib_plugin.read.channels.base import Channel

    spelled = f"search({', '.join(list(inspect.signature(Channel.search).parameters)[1:])})"
    assert spelled in DOC.read_text(encoding="utf-8") and spelled in (register_channels.__doc__ or ""), spelled
