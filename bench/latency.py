"""Cold-process ``crib retrieve`` latency on a 10,000-entry store, beside ``python -c "import numpy"``.

    python bench/latency.py [--entries 10000] [--runs 20] [--cache .state/bench] [--rebuild] [--cues]

What it does:

1. Builds (once; cached under ``--cache`` keyed by entry count, embedder, schema version and
   generator version) a store of synthetic 60-word agent memories (``bench/ingest.py``'s
   generator) with the default embedder. The build uses batched ``Memory.write_many`` with
   ``extract=False`` — no fact triples — to keep it to a few minutes; the facts channel therefore
   has nothing to find in this store, and the FTS and vector channels carry the timing.
2. Times ``--runs`` fresh processes of each command, round-robin so drifting machine load hits
   them all alike, after one untimed warm-up each (page cache):

   * ``crib retrieve`` through the real console script beside this interpreter
     (``Path(sys.executable).with_name("crib")``), prompt on stdin — what a hook should call —
     as shipped (the prompt embeds in a forked worker while the rest runs, :mod:`crib_plugin.prefetch`)
     and with ``CRIB_PARALLEL=0`` (everything in one process);
   * ``crib hook user-prompt-submit`` with Claude Code's hook JSON, a new session per run (the
     per-prompt path inside Claude Code: the same retrieval plus session state and the JSON reply);
   * the same through ``crib`` as found on ``PATH`` when that is a different file (a pyenv or
     asdf shim): the difference is what the shim adds to every prompt;
   * ``python -c "import numpy"`` (the floor any numpy-based embedder pays) and ``python -c pass``
     (the interpreter alone), with this interpreter, and ``python -c pass`` through the ``PATH``
     shim when there is one.

   Before timing, crib's bytecode is compiled if stale (what ``crib init`` does): with
   ``PYTHONDONTWRITEBYTECODE`` set, as on this machine, an editable install would otherwise
   compile every module in every process.

   Prompts cycle through a mix: keyword, paraphrase, an exact error code, a no-answer prompt,
   Chinese, and a long multi-sentence prompt.

   With ``--cues`` every memory is written with a recall cue (``when``: its first twelve words),
   so each prompt runs a second k-NN over the cue space (:mod:`crib_plugin.cues`): the row
   difference is what cues cost a store where every memory has one.
3. Prints median / p90 / max in milliseconds as a markdown table (the CPU column is the timed
   process's own user+sys time as its parent sees it; it leaves out the prefetch worker, which the
   process does not wait to reap), and how many retrieve runs
   injected something (a run that failed open would print nothing and look fast).

No threshold is asserted: numbers live in benchmarks, not tests.
"""

from __future__ import annotations

import argparse
import os
import statistics
import subprocess
import sys
import time
from dataclasses import dataclass, field
from pathlib import Path
from typing import Sequence

sys.path.insert(0, str(Path(__file__).resolve().parent))
from ingest import GENERATOR_VERSION, crib_command, crib_executable, load_note, synthetic_entries  # noqa: E402

from common import children_cpu  # noqa: E402

PROMPTS = [
    "what happens when the task queue fails with a duplicate job?",
    "how do we keep the model's answers the same from run to run?",
    "ERR_BUDGET_5860",
    "how long should sourdough proof?",
    "数据库备份应该多久做一次？",
    (
        "I'm refactoring the config loader and want to know what we decided earlier about reading settings "
        "from the environment, whether timestamps are stored in UTC, and which tests cover the loader. "
        "Also remind me of any errors we hit with numbers written as strings in the config file."
    ),
    "why did the release script break last time?",
    "which runner had the flaky backup job?",
]


def store_path(cache: Path, entries: int, cues: bool = False) -> Path:
    from crib_plugin.core.config import load_settings
    from crib_plugin.store.schema import latest_version

    embedder = load_settings().embedder or "minilm"
    return cache / f"latency-{entries}-{embedder}-s{latest_version()}-g{GENERATOR_VERSION}{'-cues' if cues else ''}.db"


def build_store(db: Path, entries: int, *, batch: int = 256, cues: bool = False) -> float:
    """Write ``entries`` synthetic memories with batched ``write_many(extract=False)``; returns seconds.
    ``cues``: each with a recall cue (its first twelve words)."""
    from dataclasses import replace

    from crib_plugin.core.config import load_settings
    from crib_plugin.memory import Memory, NewEntry

    db.parent.mkdir(parents=True, exist_ok=True)
    for suffix in ("", "-wal", "-shm"):
        Path(str(db) + suffix).unlink(missing_ok=True)
    items = [NewEntry(text, kind, metadata={"when": " ".join(text.split()[:12])} if cues else {})
             for kind, text in synthetic_entries(entries)]
    started = time.perf_counter()
    with Memory(db, settings=replace(load_settings(), db=db)) as memory:
        for offset in range(0, len(items), batch):
            memory.write_many(items[offset:offset + batch], dedupe=False, extract=False)
            done = min(offset + batch, len(items))
            if done % 2048 < batch or done == len(items):
                print(f"built {done}/{len(items)} entries ({time.perf_counter() - started:.0f}s)", file=sys.stderr)
        memory.store.execute("PRAGMA wal_checkpoint(TRUNCATE)")
    return time.perf_counter() - started


@dataclass
class Command:
    """One thing to time: argv, optional stdin prompts (cycled), and the measured wall times."""

    label: str
    argv: list[str]
    prompts: list[str] | None = None
    env: dict[str, str] | None = None
    times: list[float] = field(default_factory=list)
    cpu: list[float] = field(default_factory=list)  # user+sys seconds of the child: far less load-sensitive than wall time
    injected: int = 0
    failures: list[str] = field(default_factory=list)

    def run(self, index: int) -> float:
        stdin = self.prompts[index % len(self.prompts)] if self.prompts else None
        cpu_before = children_cpu()
        started = time.perf_counter()
        result = subprocess.run(self.argv, input=stdin, capture_output=True, text=True, env=self.env)
        elapsed = time.perf_counter() - started
        self.cpu.append(children_cpu() - cpu_before)
        if result.returncode != 0:
            self.failures.append(f"exit {result.returncode}: {result.stderr.strip()[:200]}")
        elif self.prompts is not None and result.stdout.strip():
            self.injected += 1
        return elapsed

    def median(self) -> float:
        return statistics.median(self.times)

    def row(self, numpy_median: float | None = None) -> str:
        ms = [1000 * t for t in self.times]
        p90 = statistics.quantiles(ms, n=10, method="inclusive")[8] if len(ms) > 1 else ms[0]
        cpu = 1000 * statistics.median(self.cpu[-len(self.times):])
        ratio = f"{self.median() / numpy_median:.1f}×" if numpy_median else ""
        note = f"{self.injected}/{len(ms)} injected" if self.prompts is not None else ""
        if self.failures:
            note += f"; {len(self.failures)} failed: {self.failures[0]}"
        return (f"| {self.label} | {len(ms)} | {statistics.median(ms):.0f} | {p90:.0f} | {max(ms):.0f} | "
                f"{cpu:.0f} | {ratio} | {note} |")


def hook_inputs(count: int) -> list[str]:
    """Claude Code ``UserPromptSubmit`` inputs cycling through :data:`PROMPTS`, each in a session of
    its own (a session does not repeat what it was already shown, which would make runs unequal)."""
    import json

    return [
        json.dumps({"session_id": f"bench-{os.getpid()}-{i}", "hook_event_name": "UserPromptSubmit",
                    "prompt": PROMPTS[i % len(PROMPTS)], "cwd": os.getcwd(), "permission_mode": "default"})
        for i in range(count)
    ]


def path_shim(name: str, real: Path) -> Path | None:
    """The first ``name`` on ``PATH`` that is not the file ``real`` (e.g. a pyenv shim), if any.

    Under ``pyenv exec`` the version's own bin directory is prepended to ``PATH``, so
    ``shutil.which`` would find the real file; walking every entry finds the shim behind it.
    """
    for directory in os.environ.get("PATH", "").split(os.pathsep):
        candidate = Path(directory or ".") / name
        if not (candidate.is_file() and os.access(candidate, os.X_OK)):
            continue
        try:
            if candidate.resolve() != real.resolve():
                return candidate
        except OSError:
            continue
    return None


def shim_env(env: dict[str, str]) -> dict[str, str]:
    """``env`` without the variables ``pyenv exec`` sets, so the shim resolves its version as a fresh shell does."""
    return {k: v for k, v in env.items() if k not in ("PYENV_VERSION", "PYENV_DIR")}


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--entries", type=int, default=10_000, help="store size (default 10000)")
    parser.add_argument("--runs", type=int, default=20, help="timed processes per command (default 20)")
    parser.add_argument("--cache", type=Path, default=Path(".state/bench"), help="where the store is built and reused")
    parser.add_argument("--rebuild", action="store_true", help="rebuild the store even if cached")
    parser.add_argument("--no-shim", action="store_true", help="skip the rows that go through a PATH shim")
    parser.add_argument("--cues", action="store_true", help="every memory written with a recall cue (a second k-NN per prompt)")
    args = parser.parse_args(argv)

    db = store_path(args.cache, args.entries, args.cues)
    done = db.with_suffix(".done")
    build_note = "cached"
    if args.rebuild or not done.exists():
        seconds = build_store(db, args.entries, cues=args.cues)
        done.write_text(f"{seconds:.1f}\n")
        build_note = f"built now in {seconds:.0f}s ({args.entries / seconds:.0f} entries/s)"
    else:
        build_note = f"cached (built in {float(done.read_text() or 0):.0f}s)"

    from crib_plugin.hosts.bytecode import compile_package, stale

    stale_modules = len(stale())
    compile_package()  # as `crib init` does: a cold process must not compile crib's source each time
    bytecode_note = f"crib's bytecode compiled before timing ({stale_modules} modules were stale)" if stale_modules else "crib's bytecode current"

    env = dict(os.environ, CRIB_DB=str(db.resolve()))
    crib = crib_executable()
    python = Path(sys.executable)
    label = "console script beside the interpreter" if crib.exists() else "`python -m crib_plugin`: no console script found"
    commands = [
        Command(f"`crib retrieve` ({label})", [*crib_command(), "retrieve"], PROMPTS, env),
        Command("`crib retrieve`, `CRIB_PARALLEL=0` (no prefetch worker: all in one process)",
                [*crib_command(), "retrieve"], PROMPTS, dict(env, CRIB_PARALLEL="0")),
        Command("`crib hook user-prompt-submit` (Claude Code's hook JSON, a new session each run)",
                [*crib_command(), "hook", "user-prompt-submit"], hook_inputs(args.runs + 1), env),
    ]
    crib_shim = path_shim("crib", crib) if crib.exists() and not args.no_shim else None
    shimmed = None
    if crib_shim:
        shimmed = Command(f"`crib retrieve` via PATH shim ({crib_shim})", [str(crib_shim), "retrieve"], PROMPTS, shim_env(env))
        commands.append(shimmed)
    commands += [
        Command('`python -c "import numpy"`', [str(python), "-c", "import numpy"]),
        Command("`python -c pass`", [str(python), "-c", "pass"]),
    ]
    python_shim = None if args.no_shim else path_shim("python", python)
    if python_shim:
        commands.append(Command(f"`python -c pass` via PATH shim ({python_shim})", [str(python_shim), "-c", "pass"], env=shim_env(dict(os.environ))))

    for command in commands:  # warm-up: page cache, .pyc files
        command.run(0)
        command.injected, command.failures, command.cpu = 0, [], []
    for index in range(args.runs):
        for command in commands:
            command.times.append(command.run(index))

    print(f"Cold-process latency, {args.runs} runs each, store of {args.entries} entries{' with a recall cue each' if args.cues else ''} ({build_note}; `extract=False`), "
          f"{os.cpu_count()} CPUs, {load_note()} at the end; {bytecode_note}")
    print()
    print("| command | runs | median ms | p90 ms | max ms | median CPU ms | median ÷ `import numpy` | notes |")
    print("|---|---|---|---|---|---|---|---|")
    numpy_median = next(c.median() for c in commands if "import numpy" in c.label)
    for command in commands:
        print(command.row(numpy_median))
    if shimmed is not None:
        shim = statistics.median(shimmed.times) - statistics.median(commands[0].times)
        print()
        print(f"The PATH shim adds about {1000 * shim:.0f} ms to every `crib retrieve` (median difference); "
              f"hooks should call {crib} directly.")
    return 0


if __name__ == "__main__":
    sys.exit(main())
