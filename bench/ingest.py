"""Ingest rate: entries per second through ``Memory.write_many`` (batched) and through ``crib write``.

    python bench/ingest.py [--entries 300] [--processes 20] [--keep DIR]

Entries are synthetic but shaped like an agent's memory (decisions, corrections, errors and notes
about a toolchain, with identifiers, numbers and paths), exactly 60 words each, generated
deterministically from their index so every run and every machine writes the same text. The
default (offline MiniLM) embedder is used unless ``CRIB_EMBEDDER`` says otherwise.

Three figures, printed as a markdown table:

* ``write_many`` with fact extraction (the ``crib import`` path), batched;
* ``write_many`` with ``extract=False`` (what the latency bench uses to build its big store);
* one ``crib write`` process per entry (what a hook or a shell loop pays: interpreter start,
  imports, model load, one embedding, one transaction).

The model is loaded and one entry written before the batched timings start, so they measure the
steady state; the per-process figure includes everything, because every process pays it.
"""

from __future__ import annotations

import argparse
import os
import platform
import random
import subprocess
import sys
import tempfile
import time
from dataclasses import dataclass
from pathlib import Path
from typing import Sequence

from common import children_cpu  # bench/ is the script directory, so it is on sys.path

WORDS_PER_ENTRY = 60
GENERATOR_VERSION = "1"  # bump when synthetic_entry changes (the latency bench keys its cache on it)

_TOOLS = [
    "the task queue", "the log writer", "the prompt classifier", "the memory extractor", "the persona loader",
    "the policy hook", "the scheduler", "the config loader", "the HTTP client", "the test harness",
    "the backup job", "the release script", "the embedding cache", "the search index", "the CLI parser",
    "the migration runner", "the metrics exporter", "the sandbox", "the git wrapper", "the retry wrapper",
]
_CHOICES = [
    "write one SQLite file per repository", "keep its state under .state/", "use a JSON schema for model output",
    "retry only on 5xx answers", "pin every dependency in the lockfile", "log to stderr and never to stdout",
    "run in the background after the session ends", "refuse input larger than one megabyte",
    "store timestamps as UTC ISO 8601 strings", "batch writes in transactions of 256 rows",
    "read settings from the environment once", "fail open with an empty answer",
]
_REASONS = [
    "two concurrent writers corrupted the old format", "the hook has a two second budget",
    "the model answered differently on every run", "users on macOS cannot load extensions",
    "the nightly job kept timing out", "the previous approach leaked a token into a backup",
    "profiling showed most time went to imports", "a reviewer could not reproduce the failure",
    "the old code path was never tested", "bisecting regressions took a whole afternoon",
]
_SITUATIONS = [
    "two workers claimed the same job", "the input contained a single quote", "the disk was full",
    "the server restarted mid-request", "the config had a number written as a string",
    "the prompt was only two words long", "the clock on the runner was in local time",
    "the cache directory was read-only", "the lock was held for more than five seconds",
    "an upstream API returned HTTP 429",
]
_FIXES = [
    "fixed with a compare-and-swap update", "fixed by quoting the argument with shlex", "now checks free space first",
    "now retries twice with backoff", "the loader now names the offending key", "short prompts skip the model",
    "all dates are converted to UTC on write", "the cache falls back to a temporary directory",
    "the timeout was lowered to one second", "requests are now spaced by the Retry-After header",
]
_WRONG = [
    "poll every second", "delete superseded facts", "embed entries synchronously", "read the README for defaults",
    "rotate its log files", "cache answers across sessions", "run on every keystroke", "store secrets encrypted",
]
_RIGHT = [
    "polls every 250 ms while work is pending", "keeps superseded facts with valid_until set",
    "queues embeddings and fills them on reindex", "takes defaults from the settings module",
    "prunes rows older than thirty days", "starts every session with an empty cache",
    "runs once per submitted prompt", "redacts secrets before anything is stored",
]
_DETAILS = [
    "The change shipped in release {v}.", "It took {n} minutes to find.", "See {path} for the details.",
    "The test in tests/test_{word}.py covers it now.", "Measured on {n} runs the median moved by {m} ms.",
    "This affected {n} users before the fix.", "The error code is ERR_{WORD}_{n}.",
    "Nobody noticed for {n} days.", "The flag {word}_enabled controls it.", "Discussed with the team on {date}.",
    "The old behaviour is kept behind --legacy-{word}.", "It only happened on the {word} runner.",
]
_FILLER_WORDS = [
    "queue", "index", "cache", "persona", "schema", "runner", "lockfile", "backup", "hook", "prompt", "token",
    "vector", "session", "worker", "extract", "scrub", "budget", "release", "config", "ledger",
]


def synthetic_entry(index: int, *, words: int = WORDS_PER_ENTRY) -> tuple[str, str]:
    """Entry ``index`` as ``(type, text)``: deterministic, realistic, exactly ``words`` words."""
    rng = random.Random(f"crib-bench-{index}")
    tool = rng.choice(_TOOLS)
    kind = ("decision", "error", "correction", "note")[index % 4]
    if kind == "decision":
        lead = f"Decided that {tool} should {rng.choice(_CHOICES)} because {rng.choice(_REASONS)}."
    elif kind == "error":
        code = f"ERR_{rng.choice(_FILLER_WORDS).upper()}_{rng.randint(100, 9999)}"
        lead = f"{tool.capitalize()} failed with {code} when {rng.choice(_SITUATIONS)}; {rng.choice(_FIXES)}."
    elif kind == "correction":
        lead = f"Correction: {tool} does not {rng.choice(_WRONG)}; it {rng.choice(_RIGHT)}."
    else:
        lead = f"Note on {tool}: it should {rng.choice(_CHOICES)}, since {rng.choice(_REASONS)}."
    parts = [lead]
    details = rng.sample(_DETAILS, len(_DETAILS))  # each detail sentence at most once per entry
    while sum(len(p.split()) for p in parts) < words:
        word = rng.choice(_FILLER_WORDS)
        template = details.pop() if details else "It was logged under {word}."
        parts.append(
            template.format(
                v=f"0.{rng.randint(1, 30)}.{rng.randint(0, 9)}",
                n=rng.randint(2, 400),
                m=rng.randint(1, 90),
                path=f"docs/{word}/{rng.randint(1, 60)}.md",
                word=word,
                WORD=word.upper(),
                date=f"2026-{rng.randint(1, 12):02d}-{rng.randint(1, 28):02d}",
            )
        )
    text = " ".join(" ".join(parts).split()[:words])
    return kind, text.rstrip(".,;") + "."


def synthetic_entries(count: int, *, start: int = 0) -> list[tuple[str, str]]:
    return [synthetic_entry(i) for i in range(start, start + count)]


def crib_executable() -> Path:
    """The real console script beside this interpreter (not a version-manager shim)."""
    return Path(sys.executable).with_name("crib")


def crib_command() -> list[str]:
    """argv prefix that runs crib in a fresh process: the console script, else ``python -m crib_plugin``."""
    exe = crib_executable()
    return [str(exe)] if exe.exists() else [sys.executable, "-m", "crib_plugin"]


def load_note() -> str:
    """The 1-minute load average: cold-process timings on 2 cores are only comparable when it is low."""
    try:
        return f"load average {os.getloadavg()[0]:.1f}"
    except (AttributeError, OSError):  # pragma: no cover - Windows
        return "load average n/a"


@dataclass
class Row:
    """One measured ingest path."""

    path: str
    entries: int
    seconds: float
    cpu_seconds: float = 0.0  # user+sys of every thread (and child) that did the work

    @property
    def rate(self) -> float:
        return self.entries / self.seconds if self.seconds else 0.0

    def line(self) -> str:
        per_cpu = f"{self.entries / self.cpu_seconds:.1f}" if self.cpu_seconds else "n/a"
        return (f"| {self.path} | {self.entries} | {self.seconds:.2f} | **{self.rate:.1f}** | "
                f"{1000 * self.seconds / self.entries:.1f} | {self.cpu_seconds:.2f} | {per_cpu} |")


def time_write_many(db: Path, count: int, *, extract: bool, batch: int = 256) -> Row:
    """Batched ``Memory.write_many`` of ``count`` fresh entries (model loaded beforehand, not timed)."""
    from dataclasses import replace

    from crib_plugin.core.config import load_settings
    from crib_plugin.memory import Memory, NewEntry

    with Memory(db, settings=replace(load_settings(), db=db)) as memory:
        memory.write("Warm-up entry: loads the embedder and creates the schema.", extract=extract)
        items = [NewEntry(text, kind) for kind, text in synthetic_entries(count, start=1_000_000 * (2 if extract else 3))]
        started, cpu = time.perf_counter(), time.process_time()
        for offset in range(0, len(items), batch):
            memory.write_many(items[offset:offset + batch], dedupe=False, extract=extract)
        seconds, cpu = time.perf_counter() - started, time.process_time() - cpu
    label = "`Memory.write_many`, batched, facts extracted" if extract else "`Memory.write_many`, batched, `extract=False`"
    return Row(label, count, seconds, cpu)


def time_processes(db: Path, count: int) -> Row:
    """``count`` separate ``crib write`` processes, one entry each (one untimed warm-up first)."""
    argv = [*crib_command(), "write"]
    env = dict(os.environ, CRIB_DB=str(db))
    texts = synthetic_entries(count + 1, start=4_000_000)

    def run(kind: str, text: str) -> None:
        result = subprocess.run(argv, input=f"type={kind} {text}", env=env, capture_output=True, text=True)
        if result.returncode != 0:
            raise SystemExit(f"crib write failed ({result.returncode}): {result.stderr.strip()}")

    run(*texts[0])
    started, cpu = time.perf_counter(), children_cpu()
    for kind, text in texts[1:]:
        run(kind, text)
    return Row("one `crib write` process per entry", count, time.perf_counter() - started, children_cpu() - cpu)


def environment_line() -> str:
    from crib_plugin.core.config import load_settings

    embedder = load_settings().embedder or "minilm"
    extractor = os.environ.get("CRIB_EXTRACTOR") or "auto"
    return (
        f"Python {platform.python_version()}, {os.cpu_count()} CPUs, embedder {embedder}, "
        f"extractor {extractor}, {WORDS_PER_ENTRY}-word synthetic entries, {load_note()} at the end"
    )


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--entries", type=int, default=300, help="entries per batched measurement (default 300)")
    parser.add_argument("--processes", type=int, default=20, help="crib write processes (default 20; 0 skips)")
    parser.add_argument("--keep", type=Path, default=None, help="write the databases here instead of a temporary directory")
    args = parser.parse_args(argv)

    with tempfile.TemporaryDirectory(prefix="crib-ingest-") as tmp:
        base = args.keep or Path(tmp)
        base.mkdir(parents=True, exist_ok=True)
        for name in ("extract.db", "plain.db", "cli.db"):
            for suffix in ("", "-wal", "-shm"):
                Path(str(base / name) + suffix).unlink(missing_ok=True)
        rows = [
            time_write_many(base / "extract.db", args.entries, extract=True),
            time_write_many(base / "plain.db", args.entries, extract=False),
        ]
        if args.processes > 0:
            rows.append(time_processes(base / "cli.db", args.processes))

    print(f"Ingest rate ({environment_line()})")
    print()
    print("| path | entries | seconds | entries/s | ms/entry | CPU s | entries per CPU-second |")
    print("|---|---|---|---|---|---|---|")
    for row in rows:
        print(row.line())
    return 0


if __name__ == "__main__":
    sys.exit(main())
