"""All SQL lives in ``crib_plugin/store/``: code above the store talks to the ``Store`` contract.

An AST scan of every other ``crib_plugin`` module: no ``.execute(``/``.executemany(`` call (the
backend's statement runner is not part of the contract), and no string literal that is an SQL
statement. A second backend (PostgreSQL) can only be written if nothing else speaks SQLite.
"""

from __future__ import annotations

import ast
import re
from pathlib import Path

import crib_plugin

PACKAGE = Path(crib_plugin.__file__).parent
STORE = PACKAGE / "store"
RUNNERS = {"execute", "executemany", "executescript"}
STATEMENT = re.compile(
    r"^\s*(SELECT\s.+\sFROM\s|INSERT\s+(OR\s+\w+\s+)?INTO\s|UPDATE\s+\w+\s+SET\s|DELETE\s+FROM\s"
    r"|CREATE\s+(VIRTUAL\s+|TEMP\s+)?(TABLE|INDEX|TRIGGER|VIEW)\s|PRAGMA\s|DROP\s+(TABLE|INDEX)\s|BEGIN\b|COMMIT\b|ROLLBACK\b)",
    re.DOTALL,
)


def _modules() -> list[Path]:
    return sorted(p for p in PACKAGE.rglob("*.py") if STORE not in p.parents)


def _strings(node: ast.AST) -> list[str]:
    """The literal text of a str constant or an f-string's constant parts."""
    if isinstance(node, ast.Constant) and isinstance(node.value, str):
        return [node.value]
    if isinstance(node, ast.JoinedStr):
        return ["".join(v.value if isinstance(v, ast.Constant) and isinstance(v.value, str) else "x" for v in node.values)]
    return []


def sql_offences(source: str, name: str) -> list[str]:
    """``file:line what`` for every statement runner call and SQL string literal in ``source``."""
    found = []
    tree = ast.parse(source)
    parts = {id(v) for node in ast.walk(tree) if isinstance(node, ast.JoinedStr) for v in node.values}
    for node in ast.walk(tree):
        if id(node) in parts:  # judged as part of its f-string
            continue
        if isinstance(node, ast.Call) and isinstance(node.func, ast.Attribute) and node.func.attr in RUNNERS:
            found.append(f"{name}:{node.lineno} calls .{node.func.attr}(")
        for text in _strings(node):
            if STATEMENT.match(text):
                found.append(f"{name}:{getattr(node, 'lineno', 0)} SQL literal {text[:40]!r}")
    return found


def test_no_sql_outside_the_store() -> None:
    offences = []
    for path in _modules():
        offences += sql_offences(path.read_text(encoding="utf-8"), str(path.relative_to(PACKAGE)))
    assert offences == [], "SQL outside crib_plugin/store/:\n" + "\n".join(offences)


def test_the_scan_finds_sql() -> None:
    """The scanner itself is not blind: each kind of offence is caught."""
    assert sql_offences('memory.store.execute("x")', "m.py") == ['m.py:1 calls .execute(']
    assert sql_offences('q = f"SELECT id FROM {t} WHERE a = ?"', "m.py") == ["m.py:1 SQL literal 'SELECT id FROM x WHERE a = ?'"]
    assert sql_offences('q = "DELETE FROM settings WHERE key = ?"', "m.py")
    assert sql_offences('q = "Select the entries you want to keep"', "m.py") == []
