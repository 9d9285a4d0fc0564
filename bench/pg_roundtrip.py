"""A store migrated SQLite → PostgreSQL → SQLite comes back exactly: every row, vector and audit line.

    python bench/pg_roundtrip.py STORE.db postgresql://user:pw@host/postgres [--name crib_roundtrip]

STORE.db is any crib store — e.g. a LoCoMo conversation's, built by ``crib eval`` under
``.state/eval/<fingerprint>/conv-26.db``. The URL names a server where the role may create a
database; ``--name`` is created there (replaced if it exists). Prints the row counts per table and
whether each copy's snapshot (``crib_plugin.store.transfer.snapshot``) equals the original's, with
the time each leg took. Exit 1 when a copy differs.
"""

from __future__ import annotations

import argparse
import shutil
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from crib_plugin.store import open_store  # noqa: E402
from crib_plugin.store.postgres import create_database  # noqa: E402
from crib_plugin.store.transfer import migrate_store, snapshot  # noqa: E402


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("store", type=Path)
    parser.add_argument("server")
    parser.add_argument("--name", default="crib_roundtrip")
    args = parser.parse_args(argv)
    with tempfile.TemporaryDirectory(prefix="crib-roundtrip-") as tmp:
        original = Path(tmp) / "original.db"
        shutil.copy(args.store, original)  # the cached store is never opened for writing
        url = create_database(args.server, args.name, replace=True)
        src, pg, back = open_store(original), open_store(url), open_store(Path(tmp) / "back.db")
        started = time.perf_counter()
        migrate_store(src, pg)
        there = time.perf_counter() - started
        started = time.perf_counter()
        migrate_store(pg, back)
        home = time.perf_counter() - started
        before, on_pg, after = snapshot(src), snapshot(pg), snapshot(back)
        for store in (src, pg, back):
            store.close()
    sizes = ", ".join(f"{table} {len(rows)}" for table, rows in before.items() if isinstance(rows, list))
    vectors = ", ".join(f"{key} {len(rows)}" for key, rows in before["vectors"].items())
    print(f"store {args.store.name}: {sizes}; vectors {vectors}")
    print(f"SQLite → PostgreSQL: {there:.1f} s, identical: {on_pg == before}")
    print(f"PostgreSQL → SQLite: {home:.1f} s, identical: {after == before}")
    return 0 if on_pg == before and after == before else 1


if __name__ == "__main__":
    raise SystemExit(main())
