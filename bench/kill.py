"""Crash safety: SIGKILL `crib import`, a stream of writes and `crib reindex` at random moments.

    python bench/kill.py                 # 50 kills
    python bench/kill.py --kills 5 --lines 40

Each cycle picks the next action (import of a new JSONL file, a process writing entries one by one,
or reindex after some vectors were removed), starts it as its own process against one store and
sends it SIGKILL at a random moment: one cycle in four at a random delay from its start (often
while it starts up or computes its first batch), the others a random 0–3 s after the store shows
its first progress (a committed batch or write), so the kill lands in the middle of the work —
while embedding the next batch or inside a transaction. A run that finished first is not counted
as a kill. After each kill:

* ``PRAGMA integrity_check`` and FTS5 ``integrity-check`` of the word, trigram and CJK indexes
  (an index row without its entry, or an entry without its index rows, fails it);
* orphans: vectors, ``relation_sources`` and ``pending_embeddings`` rows whose entry is gone;
* then the action is rerun to completion (the resume) and duplicates are counted: entries with the
  same type, content and metadata. Also counted: entries left with neither a vector nor a queue row
  (work lost), and how much of the import the killed run had already kept.

Printed: kills, integrity failures, orphans, duplicates after resume (target 0 / 0 / 0).
Exit status 1 when any of those is not 0.
"""

from __future__ import annotations

import argparse
import json
import os
import random
import signal
import subprocess
import sys
import tempfile
import time
from dataclasses import dataclass, field
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
ACTIONS = ("import", "writes", "reindex")
WRITER_SCRIPT = """
import sys
from crib_plugin import Memory
texts = [line.rstrip("\\n") for line in open(sys.argv[1], encoding="utf-8")]
with Memory() as memory:
    for text in texts:
        memory.write(text, metadata={"thread": "kill-writes"})
"""


@dataclass
class Totals:
    kills: int = 0
    finished_first: int = 0
    integrity_failures: int = 0
    orphans: int = 0
    duplicates: int = 0
    unaccounted: int = 0
    kept_before_resume: int = 0
    resume_failures: int = 0
    by_action: dict[str, int] = field(default_factory=lambda: {a: 0 for a in ACTIONS})
    problems: list[str] = field(default_factory=list)


def child_env(db: Path) -> dict[str, str]:
    env = dict(os.environ)
    env["CRIB_DB"] = str(db)
    env.setdefault("CRIB_EXTRACTOR", "rules")
    env["PYTHONPATH"] = os.pathsep.join(p for p in (str(ROOT), env.get("PYTHONPATH", "")) if p)
    return env


def connect(db: Path):  # type: ignore[no-untyped-def]
    """A plain read-write connection with sqlite-vec loaded (the checks read the vec0 tables)."""
    import apsw

    sys.path.insert(0, str(ROOT))
    from crib_plugin.store.sqlite import vec_extension_path

    conn = apsw.Connection(str(db))
    conn.setbusytimeout(30000)
    conn.enable_load_extension(True)
    conn.load_extension(vec_extension_path())
    return conn


def check(db: Path) -> tuple[int, int, list[str]]:
    """(integrity failures, orphan rows, descriptions) of the store as the killed process left it."""
    import apsw

    if not db.exists():
        return 0, 0, []
    problems: list[str] = []
    failures = 0
    orphans = 0
    conn = connect(db)
    try:
        result = str(list(conn.execute("PRAGMA integrity_check"))[0][0])
        if result != "ok":
            failures += 1
            problems.append(f"integrity_check: {result}")
        tables = {str(r[0]) for r in conn.execute("SELECT name FROM sqlite_master WHERE type = 'table'")}
        if "entries" not in tables:
            return failures, orphans, problems
        for index in ("entries_fts", "entries_trigram", "entries_cjk"):
            if index not in tables:
                continue
            try:
                conn.execute(f"INSERT INTO {index}({index}, rank) VALUES ('integrity-check', 1)")
            except apsw.Error as exc:
                failures += 1
                problems.append(f"{index}: {exc}")
        queries = {
            "relation_sources": "SELECT count(*) FROM relation_sources WHERE entry_id NOT IN (SELECT id FROM entries)",
            "pending_embeddings": "SELECT count(*) FROM pending_embeddings WHERE entry_id NOT IN (SELECT id FROM entries)",
        }
        for (table,) in conn.execute("SELECT table_name FROM vector_spaces"):
            queries[str(table)] = f"SELECT count(*) FROM {table} WHERE rowid NOT IN (SELECT id FROM entries)"
        for name, sql in queries.items():
            count = int(list(conn.execute(sql))[0][0])
            if count:
                orphans += count
                problems.append(f"{count} {name} rows without an entry")
    finally:
        conn.close()
    return failures, orphans, problems


def duplicates_and_unaccounted(db: Path) -> tuple[int, int]:
    """Entries stored twice; entries with neither a vector nor a queued embedding."""
    conn = connect(db)
    try:
        dups = int(list(conn.execute(
            "SELECT coalesce(sum(n - 1), 0) FROM (SELECT count(*) AS n FROM entries GROUP BY type, content_hash, metadata)"
        ))[0][0])
        spaces = [str(r[0]) for r in conn.execute("SELECT table_name FROM vector_spaces")]
        have = " AND ".join(f"id NOT IN (SELECT rowid FROM {t})" for t in spaces) or "1"
        unaccounted = int(list(conn.execute(
            f"SELECT count(*) FROM entries WHERE {have} AND id NOT IN "
            "(SELECT entry_id FROM pending_embeddings WHERE space != 'extract')"
        ))[0][0])
    finally:
        conn.close()
    return dups, unaccounted


def entry_count(db: Path) -> int:
    if not db.exists():
        return 0
    conn = connect(db)
    try:
        return int(list(conn.execute("SELECT count(*) FROM entries"))[0][0]) if list(
            conn.execute("SELECT 1 FROM sqlite_master WHERE name = 'entries'")) else 0
    finally:
        conn.close()


def make_import(path: Path, cycle: int, lines: int, rng: random.Random) -> None:
    words = ["sqlite", "deploy", "cache", "parser", "review", "latency", "rollback", "index", "budget", "queue"]
    with path.open("w", encoding="utf-8") as fh:
        for i in range(lines):
            record: dict[str, object] = {
                "content": f"cycle {cycle} line {i}: {' '.join(rng.sample(words, 4))} — Alice decided on {rng.choice(words)} v{i}",
                "type": rng.choice(["note", "decision", "note"]),
            }
            if i % 3 == 0:
                record["metadata"] = {"thread": f"kill-{cycle}-{i // 12}"}
            fh.write(json.dumps(record, ensure_ascii=False) + "\n")


def make_writes(path: Path, cycle: int, lines: int) -> None:
    with path.open("w", encoding="utf-8") as fh:
        for i in range(lines):
            fh.write(f"cycle {cycle} write {i}: the queue drains at {i} per second after the rollback\n")


def drop_vectors(db: Path, count: int, rng: random.Random) -> int:
    """Remove ``count`` random vectors (queueing them, as a failed embedding would) for reindex."""
    conn = connect(db)
    try:
        spaces = [(str(k), str(t)) for k, t in conn.execute("SELECT key, table_name FROM vector_spaces")]
        if not spaces:
            return 0
        key, table = spaces[0]
        ids = [int(r[0]) for r in conn.execute(f"SELECT rowid FROM {table}")]
        chosen = rng.sample(ids, min(count, len(ids)))
        with conn:
            for entry_id in chosen:
                conn.execute(f"DELETE FROM {table} WHERE rowid = ?", (entry_id,))
                conn.execute(
                    "INSERT OR IGNORE INTO pending_embeddings(entry_id, space, reason, queued_at) VALUES (?, ?, 'bench', '')",
                    (entry_id, key.split(":")[0]),
                )
        return len(chosen)
    finally:
        conn.close()


def progress_marker(db: Path) -> int:
    """Entries stored plus queue rows: changes with every committed write or reindex batch."""
    if not db.exists():
        return 0
    import apsw

    try:
        conn = apsw.Connection(str(db), flags=apsw.SQLITE_OPEN_READONLY)
        conn.setbusytimeout(5000)
        try:
            return int(list(conn.execute(
                "SELECT (SELECT count(*) FROM entries) * 100003 + (SELECT count(*) FROM pending_embeddings)"))[0][0])
        finally:
            conn.close()
    except apsw.Error:
        return 0


def kill_at_random_moment(proc: "subprocess.Popen[bytes]", db: Path, rng: random.Random, early: bool, max_delay: float) -> tuple[bool, float]:
    """SIGKILL ``proc`` at a random moment; returns (finished before the kill, seconds it ran)."""
    started = time.monotonic()
    if early:
        deadline = started + rng.uniform(0.2, max_delay)
    else:
        first = progress_marker(db)
        deadline = None
        while proc.poll() is None:
            if progress_marker(db) != first:
                deadline = time.monotonic() + rng.uniform(0.0, 3.0)
                break
            time.sleep(0.1)
    if deadline is not None:
        while proc.poll() is None and time.monotonic() < deadline:
            time.sleep(0.02)
    if proc.poll() is not None:
        return True, time.monotonic() - started
    proc.send_signal(signal.SIGKILL)
    proc.wait()
    return False, time.monotonic() - started


def command_for(action: str, work: Path) -> list[str]:
    if action == "import":
        return [sys.executable, "-m", "crib_plugin", "import", str(work)]
    if action == "writes":
        return [sys.executable, "-c", WRITER_SCRIPT, str(work)]
    return [sys.executable, "-m", "crib_plugin", "reindex"]


def run(kills: int, lines: int, db: Path, seed: int, log: bool, until: float = float("inf")) -> Totals:
    rng = random.Random(seed)
    env = child_env(db)
    totals = Totals()
    max_delay = {"import": 6.0, "writes": 6.0, "reindex": 4.0}
    cycle = 0
    work_dir = db.parent
    while totals.kills < kills and time.monotonic() < until:
        action = ACTIONS[cycle % len(ACTIONS)] if db.exists() else "import"
        work = work_dir / f"cycle-{cycle}.{'jsonl' if action == 'import' else 'txt'}"
        if action == "import":
            make_import(work, cycle, lines, rng)
        elif action == "writes":
            make_writes(work, cycle, max(10, lines // 4))
        elif drop_vectors(db, lines, rng) == 0:
            cycle += 1
            continue
        before = entry_count(db)
        early = cycle % 4 == 3
        proc = subprocess.Popen(command_for(action, work), env=env, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE)
        finished, delay = kill_at_random_moment(proc, db, rng, early, max_delay[action])
        if finished:
            totals.finished_first += 1
            max_delay[action] = max(0.5, max_delay[action] * 0.7)
            if proc.returncode != 0:
                totals.problems.append(f"{action} exited {proc.returncode} before the kill: {proc.stderr.read().decode()[-200:] if proc.stderr else ''}")
        else:
            totals.kills += 1
            totals.by_action[action] += 1
            grow = 1.1 if action == "reindex" or entry_count(db) > before else 1.5  # killed before any work: wait longer
            max_delay[action] = min(30.0, max_delay[action] * grow)
        if proc.stderr:
            proc.stderr.close()
        failures, orphans, problems = check(db)
        totals.integrity_failures += failures
        totals.orphans += orphans
        totals.problems.extend(f"cycle {cycle} ({action}): {p}" for p in problems)
        kept = entry_count(db) - before
        resume = subprocess.run(command_for(action, work), env=env, capture_output=True, text=True)
        if resume.returncode != 0:
            totals.resume_failures += 1
            totals.problems.append(f"cycle {cycle} resume of {action} exited {resume.returncode}: {resume.stderr.strip()[-200:]}")
        dups, unaccounted = duplicates_and_unaccounted(db)
        totals.duplicates = dups  # cumulative in the store: the latest count is the total
        totals.unaccounted = unaccounted
        if action != "reindex":
            totals.kept_before_resume += max(0, kept)
        if log:
            state = "finished before the kill" if finished else f"killed after {delay:.2f}s{' (early)' if early else ''}"
            print(f"cycle {cycle:>3} {action:<8} {state:<26} kept {kept:>4}, duplicates {dups}, unaccounted {unaccounted}, "
                  f"integrity failures {failures}, orphans {orphans}", file=sys.stderr, flush=True)
        cycle += 1
    return totals


def report(totals: Totals, db: Path) -> str:
    kinds = ", ".join(f"{a} {n}" for a, n in totals.by_action.items())
    lines = [
        f"kill: {totals.kills} SIGKILLs ({kinds}); {totals.finished_first} runs finished before their kill (not counted)",
        "",
        "| kills | integrity failures | orphans | duplicates after resume | entries without vector or queue row | resume failures | entries kept by killed runs |",
        "|---|---|---|---|---|---|---|",
        f"| {totals.kills} | {totals.integrity_failures} | {totals.orphans} | {totals.duplicates} | {totals.unaccounted} "
        f"| {totals.resume_failures} | {totals.kept_before_resume} |",
        "",
        f"entries in the store at the end: {entry_count(db)}; load average {os.getloadavg()[0]:.2f}",
    ]
    lines.extend(f"problem: {p}" for p in totals.problems[:20])
    return "\n".join(lines)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--kills", type=int, default=50)
    parser.add_argument("--lines", type=int, default=200, help="records per import (writes: a quarter of it)")
    parser.add_argument("--seed", type=int, default=10)
    parser.add_argument("--quiet", action="store_true", help="no per-cycle line on stderr")
    parser.add_argument("--max-minutes", type=float, default=None, help="start no new cycle after this long; report what was done")
    args = parser.parse_args(argv)
    started = time.perf_counter()
    with tempfile.TemporaryDirectory(prefix="crib-kill-") as tmp:
        db = Path(tmp) / "crib.db"
        until = time.monotonic() + args.max_minutes * 60 if args.max_minutes else float("inf")
        totals = run(args.kills, args.lines, db, args.seed, not args.quiet, until)
        print(report(totals, db), flush=True)
    print(f"wall {time.perf_counter() - started:.0f} s", flush=True)
    bad = totals.integrity_failures or totals.orphans or totals.duplicates or totals.unaccounted or totals.resume_failures
    return 1 if bad else 0


if __name__ == "__main__":
    raise SystemExit(main())
