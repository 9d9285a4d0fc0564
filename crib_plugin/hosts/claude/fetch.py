"""What a session start sets going in the background: the offline weights' fetch when they are
missing, and the warm-up of the local models the prompt path asks (judge, reranker)."""

from __future__ import annotations

import sys
from typing import Any


def fetch_model_in_background(memory: Any) -> None:
    """Start fetching the offline MiniLM weights in a detached process when they are missing.

    The per-prompt hook has a 2-second budget and could never finish a first download itself.
    """
    try:
        if memory.embedder_name() != "minilm":
            return
        # deferred: the MessageDisplay hook imports this package (claude.input, claude.state) on every streamed batch: models.weights would add atomic_dir, weights_fetch and subprocess to it
        from ...models.weights import WEIGHTS_FILE, model_dir

        if (model_dir() / WEIGHTS_FILE).exists():
            return
        _detached("from crib_plugin.models.weights import ensure_minilm; ensure_minilm()")
    except Exception:  # best effort: the next session start tries again
        pass


def warm_models_in_background(memory: Any) -> None:
    """Have Ollama load the judge and reranker models now, in a detached process, so the first
    prompt does not pay a model's load (seconds on a CPU: 2.9 s for a 1.5B model here) inside its
    deadline; each request keeps them loaded for ``CRIB_OLLAMA_KEEP_ALIVE``. Nothing when neither is set."""
    try:
        settings = memory.settings
        if settings.judge_model or settings.rerank_model:
            _detached("from crib_plugin.models.ollama.client import warm_configured; warm_configured()")
    except Exception:  # best effort: the first prompt pays the load instead
        pass


def _detached(code: str) -> None:
    """Run ``python -c code`` detached from the hook (it outlives it; its output goes nowhere)."""
    # deferred: the MessageDisplay hook imports this package (claude.input, claude.state) on every streamed batch: subprocess would add 5 modules to it
    import subprocess

    subprocess.Popen([sys.executable, "-c", code], stdin=subprocess.DEVNULL, stdout=subprocess.DEVNULL,
                     stderr=subprocess.DEVNULL, start_new_session=True)
