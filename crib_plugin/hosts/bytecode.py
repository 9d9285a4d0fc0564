"""crib's own compiled bytecode: written by ``crib init``, checked by ``crib doctor``.

Why: the per-prompt commands start a fresh interpreter each time, and compiling crib's ~11,000
lines from source costs a cold ``crib retrieve`` about 100 ms — a third of its budget. pip writes
the bytecode when it installs a wheel; an editable install writes it on first import, *unless*
``PYTHONDONTWRITEBYTECODE`` is set (as in many containers and CI images), in which case every
process compiles everything again. ``compileall`` writes it regardless of that variable.
"""

from __future__ import annotations

import compileall
import importlib.util
from pathlib import Path

PACKAGE_DIR = Path(__file__).resolve().parent.parent  # crib_plugin/


def sources(root: Path = PACKAGE_DIR) -> list[Path]:
    """Every module of the package (tests and benchmarks live elsewhere)."""
    return sorted(p for p in root.rglob("*.py") if "__pycache__" not in p.parts)


def stale(root: Path = PACKAGE_DIR) -> list[Path]:
    """Modules whose bytecode is missing or older than the source (timestamp-checked .pyc)."""
    out: list[Path] = []
    for source in sources(root):
        cached = Path(importlib.util.cache_from_source(str(source)))
        try:
            if cached.stat().st_mtime < source.stat().st_mtime:
                out.append(source)
        except OSError:
            out.append(source)
    return out


def compile_package(root: Path = PACKAGE_DIR) -> bool:
    """Write current bytecode for every module under ``root``; False if some could not be written
    (a read-only install is fine: its installer compiled it)."""
    return bool(compileall.compile_dir(str(root), quiet=2, workers=1))


def status(root: Path = PACKAGE_DIR) -> dict[str, object]:
    """The doctor's section: never fails the check (crib works without bytecode, only slower)."""
    missing = stale(root)
    report: dict[str, object] = {"current": not missing, "stale_modules": len(missing), "ok": True}
    if missing:
        report["hint"] = "run `crib init` (each cold `crib retrieve` compiles these modules again)"
    return report
