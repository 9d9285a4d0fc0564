"""A small mutation check: break each promised feature once and confirm its test fails.

    python bench/mutations.py [--only SUBSTRING] [--keep]

The breakages are the table under "Mutation check" in ``docs/development.md`` (the one list; this
script reads it, so the table and the check cannot drift apart). Each row names a module, a
one-line breakage (``old`` → ``new``, both in backticks) and the test that must fail. For each row:

1. the tracked files of this checkout (with their uncommitted edits) are copied to a temporary
   folder, so the working tree is never touched, whatever happens;
2. the test is run there unchanged — it must pass, or the row proves nothing;
3. ``old`` (which must occur exactly once in the module) is replaced by ``new`` and the test is run
   again — it must fail.

The copy is imported ahead of the editable install (``PYTHONPATH``), so the test and every ``crib``
process it starts run the broken code. Prints one markdown row per breakage; exits 1 when a
breakage went unnoticed (or a row is stale: its ``old`` text is gone or its test does not pass).
Not part of the normal suite: each row runs its test twice (seconds to a minute).
"""

from __future__ import annotations

import argparse
import os
import re
import shutil
import subprocess
import sys
import tempfile
from dataclasses import dataclass
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
DOC = ROOT / "docs" / "development.md"
HEADING = "## Mutation check"


@dataclass(frozen=True)
class Breakage:
    module: str  # a path from the repository root
    old: str  # the line's text as it is
    new: str  # the broken text
    test: str  # a pytest node id


def breakages(doc: Path = DOC) -> list[Breakage]:
    """The rows of the table under :data:`HEADING` in ``doc``."""
    text = doc.read_text(encoding="utf-8")
    section = text.split(HEADING, 1)[1].split("\n## ", 1)[0]
    rows: list[Breakage] = []
    for line in section.splitlines():
        cells = [c.strip() for c in line.strip().strip("|").split(" | ")] if line.startswith("| `") else []
        if len(cells) != 3:
            continue
        change = re.fullmatch(r"`(.+)` → `(.*)`", cells[1])
        if change is None:
            raise SystemExit(f"{doc}: a breakage must read `old` → `new`: {cells[1]}")
        rows.append(Breakage(cells[0].strip("`"), change.group(1), change.group(2), cells[2].strip("`")))
    return rows


def tracked_copy(into: Path) -> None:
    """The checkout's tracked files as they are now (uncommitted edits included) under ``into``."""
    names = subprocess.run(["git", "-C", str(ROOT), "ls-files", "-z"], capture_output=True, check=True).stdout
    for name in filter(None, names.decode().split("\0")):
        source = ROOT / name
        if source.is_file():
            target = into / name
            target.parent.mkdir(parents=True, exist_ok=True)
            shutil.copy2(source, target)


def run_test(copy: Path, test: str) -> bool:
    """Whether ``test`` passes in ``copy``."""
    env = {**os.environ, "PYTHONPATH": str(copy), "PYTHONDONTWRITEBYTECODE": "1"}
    result = subprocess.run(
        [sys.executable, "-m", "pytest", "-q", "-x", "-p", "no:randomly", "-p", "no:cacheprovider", "-n", "0", test],
        cwd=copy, env=env, capture_output=True, text=True, timeout=900,
    )
    return result.returncode == 0


def check(breakage: Breakage, keep: bool = False) -> str:
    """One row's verdict: ``caught``, or why not."""
    folder = Path(tempfile.mkdtemp(prefix="crib-mutation-"))
    try:
        tracked_copy(folder)
        module = folder / breakage.module
        source = module.read_text(encoding="utf-8")
        if source.count(breakage.old) != 1:
            return f"stale: the text to break occurs {source.count(breakage.old)} times"
        if not run_test(folder, breakage.test):
            return "stale: the test fails before the breakage"
        module.write_text(source.replace(breakage.old, breakage.new), encoding="utf-8")
        return "caught" if not run_test(folder, breakage.test) else "NOT CAUGHT"
    finally:
        if keep:
            print(f"kept {folder}", file=sys.stderr)
        else:
            shutil.rmtree(folder, ignore_errors=True)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--only", default="", help="only rows whose module or test contains this")
    parser.add_argument("--keep", action="store_true", help="keep each temporary copy (its path goes to stderr)")
    args = parser.parse_args(argv)
    rows = [b for b in breakages() if args.only in b.module or args.only in b.test]
    print("| module | test | verdict |\n|---|---|---|")
    failed = 0
    for breakage in rows:
        verdict = check(breakage, keep=args.keep)
        failed += verdict != "caught"
        print(f"| `{breakage.module}` | `{breakage.test}` | {verdict} |", flush=True)
    return 1 if failed or not rows else 0


if __name__ == "__main__":
    raise SystemExit(main())
