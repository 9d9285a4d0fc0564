"""Where a public evaluation set lies: the path its variable names, else the first
``shared/eval/<rel>`` found beside the working folder or a folder above this checkout.

The sets are read where they lie at run time and never copied into the repository (their
licences: docs/benchmarks.md).
"""

from __future__ import annotations

from pathlib import Path


def shared_eval_path(configured: Path | str | None, rel: str) -> Path:
    """``configured`` when given, else ``…/shared/eval/<rel>`` beside the checkout (the first that
    exists, else the one beside the working folder, for the error message)."""
    if configured:
        return Path(configured).expanduser()
    for base in (Path.cwd(), *Path(__file__).resolve().parents):
        candidate = base.parent / "shared" / "eval" / rel
        if candidate.exists():
            return candidate
    return Path.cwd().parent / "shared" / "eval" / rel
