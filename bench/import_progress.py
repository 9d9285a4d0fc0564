"""`crib import` of N entries on a (pseudo-)terminal: does the bar move, and at what rate?

    python bench/import_progress.py [--entries 5000] [--keep DIR]

Writes N synthetic entries (``bench/ingest.py``'s generator) as JSONL, runs the real ``crib import``
with stderr on a pseudo-terminal (so tqdm draws its bar, as it would for a user), and reads what
the terminal received: how many distinct bar frames were drawn, the last frame (count, rate,
ETA) and crib's closing line, which quotes the import rate. The default offline MiniLM embedder
is used unless ``CRIB_EMBEDDER`` says otherwise.
"""

from __future__ import annotations

import argparse
import json
import os
import pty
import re
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import Sequence

from ingest import synthetic_entries  # bench/ is the script directory, so it is on sys.path

FRAME = re.compile(r"import:\s+\d+%\|.*?\|\s*(\d+)/(\d+)")


def run_on_pty(cmd: Sequence[str], env: dict[str, str]) -> tuple[int, str, float]:
    """Run ``cmd`` with stdout and stderr on a pseudo-terminal; return its exit code, output, seconds."""
    master, slave = pty.openpty()
    started = time.perf_counter()
    proc = subprocess.Popen(list(cmd), stdin=subprocess.DEVNULL, stdout=slave, stderr=slave, env=env)
    os.close(slave)
    chunks: list[bytes] = []
    while True:
        try:
            data = os.read(master, 65536)
        except OSError:  # EIO: the child closed the terminal
            break
        if not data:
            break
        chunks.append(data)
    code = proc.wait()
    os.close(master)
    return code, b"".join(chunks).decode("utf-8", "replace"), time.perf_counter() - started


def frames(output: str) -> list[tuple[int, int]]:
    """Every bar state the terminal received, in order (count, total)."""
    return [(int(m.group(1)), int(m.group(2))) for m in FRAME.finditer(output)]


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--entries", type=int, default=5000)
    parser.add_argument("--keep", type=Path, default=None, help="Keep the store and JSONL in this folder.")
    args = parser.parse_args(argv)
    folder = args.keep or Path(tempfile.mkdtemp(prefix="crib-import-progress-"))
    folder.mkdir(parents=True, exist_ok=True)
    source = folder / "entries.jsonl"
    with source.open("w", encoding="utf-8") as out:
        for kind, text in synthetic_entries(args.entries):
            out.write(json.dumps({"type": kind, "content": text}) + "\n")
    db = folder / "crib.db"
    db.unlink(missing_ok=True)
    env = {**os.environ, "CRIB_DB": str(db), "COLUMNS": "100"}
    root = Path(__file__).resolve().parent.parent
    env["PYTHONPATH"] = os.pathsep.join(filter(None, [str(root), env.get("PYTHONPATH", "")]))
    code, output, seconds = run_on_pty([sys.executable, "-m", "crib_plugin", "import", str(source)], env)
    seen = frames(output)
    last_frame = output.replace("\r", "\n").strip().splitlines()
    bar = [line for line in last_frame if line.startswith("import:")]
    closing = [line for line in last_frame if line.startswith("imported ")]
    print("| entries | exit | seconds | bar frames | distinct counts | last bar | closing line |")
    print("|---|---|---|---|---|---|---|")
    print(f"| {args.entries} | {code} | {seconds:.1f} | {len(seen)} | {len({c for c, _ in seen})} "
          f"| `{bar[-1] if bar else '-'}` | `{closing[-1] if closing else '-'}` |")
    return 0 if code == 0 and len({c for c, _ in seen}) > 2 else 1


if __name__ == "__main__":
    sys.exit(main())
