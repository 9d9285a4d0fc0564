"""Per-prompt hook time on each agent host (cold processes), and Gemini's per-chunk output filter.

    python bench/host_hooks.py [--entries 300] [--runs 15] [--chunks 60]

What it does:

1. Builds a throwaway repository store of ``--entries`` short synthetic memories (``crib write``
   through the Python API, no fact extraction) under a temporary directory.
2. Times ``--runs`` fresh processes of ``python -m crib_plugin hook user-prompt-submit --host H``
   for H = claude, codex, gemini, opencode, round-robin, each with that host's hook JSON and a new
   session per run (so the block is built every time), after one untimed warm-up each; and
   ``python -c pass`` (the interpreter alone) as the floor.
3. Gemini runs ``AfterModel`` once per streamed chunk: times ``crib hook after-model --host gemini``
   over a ``--chunks``-chunk answer (one process per chunk, as Gemini runs it), with a 40,000-
   character request in every chunk's JSON (Gemini sends the whole request each time): plain text
   (nothing to do: printed nothing), and an answer echoing a memory block split over chunks, with
   ``python -c pass`` run between the chunks (the floor under the same load). Prints median / p90
   per chunk and the whole answer's added time.

No threshold is asserted: numbers live in benchmarks, not tests.
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

HOSTS = ("claude", "codex", "gemini", "opencode")
EVENT = {"claude": "UserPromptSubmit", "codex": "UserPromptSubmit", "gemini": "BeforeAgent", "opencode": "UserPromptSubmit"}
PROMPTS = ["which database do the invoices use?", "why did the nightly export fail?", "how do we deploy the billing service?"]


def build(root: Path, entries: int) -> None:
    from crib_plugin import Memory

    topics = ["invoices", "billing", "exports", "deploys", "the cache", "auth tokens", "the search index", "CI"]
    with Memory(str(root / ".state" / "crib" / "crib.db")) as memory:
        for i in range(entries):
            topic = topics[i % len(topics)]
            memory.write(f"Memory {i}: for {topic} we decided option {i % 7} because benchmark {i} showed it was faster",
                         type="decision" if i % 5 == 0 else "note", extract=False)


def timed(argv: list[str], data: str, env: dict[str, str], cwd: Path) -> tuple[float, str]:
    started = time.perf_counter()
    done = subprocess.run(argv, input=data, capture_output=True, text=True, env=env, cwd=str(cwd))
    return (time.perf_counter() - started) * 1000, done.stdout


def row(name: str, values: list[float]) -> str:
    values = sorted(values)
    p90 = values[min(len(values) - 1, int(len(values) * 0.9))]
    return f"| {name} | {statistics.median(values):.0f} | {p90:.0f} |"


def prompt_hooks(root: Path, env: dict[str, str], runs: int) -> None:
    crib = [sys.executable, "-m", "crib_plugin", "hook", "user-prompt-submit", "--host"]
    times: dict[str, list[float]] = {h: [] for h in HOSTS}
    times["python -c pass"] = []
    injected = {h: 0 for h in HOSTS}
    for run in range(-1, runs):
        for host in HOSTS:
            event = {"session_id": f"bench-{host}-{run}-{time.time_ns()}", "prompt": PROMPTS[run % len(PROMPTS)],
                     "cwd": str(root), "hook_event_name": EVENT[host]}
            took, out = timed([*crib, host], json.dumps(event), env, root)
            if run >= 0:
                times[host].append(took)
                injected[host] += bool(out.strip())
        took, _ = timed([sys.executable, "-c", "pass"], "", env, root)
        if run >= 0:
            times["python -c pass"].append(took)
    print(f"\nPer-prompt hook, cold process, {runs} runs each (ms):\n\n| host | median | p90 |\n|---|---|---|")
    for name, values in times.items():
        print(row(name, values))
    print(f"\nruns that injected a block: {injected}")


def chunk_json(text: str, final: bool, session: str, request: list[dict[str, str]], root: Path) -> str:
    candidate: dict[str, object] = {"content": {"role": "model", "parts": [text]}, "index": 0}
    if final:
        candidate["finishReason"] = "STOP"
    return json.dumps({"session_id": session, "cwd": str(root), "hook_event_name": "AfterModel", "timestamp": "2026-11-28T00:00:00Z",
                       "llm_request": {"model": "gemini-2.5-flash", "messages": request},
                       "llm_response": {"text": text, "candidates": [candidate]}})


def after_model(root: Path, env: dict[str, str], chunks: int) -> None:
    crib = [sys.executable, "-m", "crib_plugin", "hook", "after-model", "--host", "gemini"]
    request = [{"role": "user", "content": "x" * 20_000}, {"role": "model", "content": "y" * 20_000}]
    plain = [f"Line {i} of an ordinary answer, with code like Vec<Memory> in it.\n" for i in range(chunks)]
    echo = list(plain)
    block = '<memory-context context_time="2026-11-20T12:00:00Z">\n- [2026-11-20 note] echoed\n</memory-context>'
    middle = chunks // 2
    echo[middle - 1] += block[:20]
    echo[middle] = block[20:] + echo[middle]
    floor: list[float] = []
    for name, answer in (("plain text (printed nothing)", plain), ("echoed block split over two chunks", echo)):
        session = f"bench-{time.time_ns()}"
        timed(crib, chunk_json("warm-up", True, "warm", request, root), env, root)
        took = []
        for i, text in enumerate(answer):  # the interpreter alone, interleaved: the same machine load
            took.append(timed(crib, chunk_json(text, i == len(answer) - 1, session, request, root), env, root)[0])
            floor.append(timed([sys.executable, "-c", "pass"], "", env, root)[0])
        print(row(f"AfterModel per chunk, {name}", took) + f" whole answer: {sum(took) / 1000:.1f} s for {len(answer)} chunks")
    print(row("python -c pass, between the chunks", floor))


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--entries", type=int, default=300)
    parser.add_argument("--runs", type=int, default=15)
    parser.add_argument("--chunks", type=int, default=60)
    args = parser.parse_args()
    with tempfile.TemporaryDirectory(prefix="crib-host-bench-") as tmp:
        root = Path(tmp) / "repo"
        subprocess.run(["git", "init", "-q", str(root)], check=True)
        env = {k: v for k, v in os.environ.items() if not k.startswith("CRIB_")}
        env.update({"CRIB_GLOBAL_DB": str(Path(tmp) / "global.db"), "CRIB_EXTRACTOR": "rules", "CRIB_ERROR_LOG": str(Path(tmp) / "crib.log")})
        os.environ.update(env)
        os.environ.pop("CRIB_DB", None)
        build(root, args.entries)
        prompt_hooks(root, env, args.runs)
        print("\nGemini AfterModel (one process per streamed chunk; 40,000-character request in each chunk's JSON), ms:\n")
        print("| case | median | p90 |\n|---|---|---|")
        after_model(root, env, args.chunks)


if __name__ == "__main__":
    main()
