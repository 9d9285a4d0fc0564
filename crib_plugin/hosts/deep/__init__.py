"""Deep recall: seed 001's recursive-language-model pattern over crib's store.

For questions a prompt's block cannot answer because they need many memories ("every decision we
made about persistence", "how did our deployment set-up change this year?"):

* :mod:`.manifest` — a metadata-first manifest of candidates (ids, dates, types, snippets; about
  4 KB), pooled from the ordinary retrieval, vector neighbours and an expanded full-text search;
* :mod:`.expand` — query expansion: offline, words that co-occur with the question's in the store;
  with a model, the model's terms too;
* :mod:`.grep` — the grep gate: a memory's own text must confirm the terms before a model reads it;
* :mod:`.loop` — graduated dispatch (the best five first, more waves only while gaps remain), a
  synthesis citing the entry ids it rests on, and budgets for calls, tokens and time;
* :mod:`.ollama` — the reader/synthesiser on a local Ollama model (``CRIB_DEEP_MODEL``);
* :mod:`.report` — text and JSON output, saying plainly when nothing synthesised the evidence.

In Claude Code the orchestrator and readers are Claude and its subagents: the plugin's
``agents/deep-recall.md`` runs the same protocol with the MCP tools ``manifest``, ``grep`` and
``show`` (:mod:`crib_plugin.hosts.mcp_server`). Documentation: ``docs/deep-recall.md``.
"""

from __future__ import annotations

from typing import Any

from ...core.config import get_settings
from .loop import DeepResult, deep_recall
from .ollama import OllamaDeep


def configured_model(settings: Any = None) -> Any:
    """The Ollama deep-recall model (``CRIB_DEEP_MODEL``, else ``CRIB_JUDGE_MODEL``); None when neither is set."""
    settings = settings or get_settings()
    name = settings.deep_model or settings.judge_model
    if not name:
        return None

    return OllamaDeep(name, timeout=settings.deep_seconds)


__all__ = ["DeepResult", "deep_recall", "configured_model"]
