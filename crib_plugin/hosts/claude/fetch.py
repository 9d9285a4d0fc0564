"""The background model fetch a session start triggers when the offline weights are missing."""

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
        # deferred: the MessageDisplay hook imports this package (claude.input, claude.state) on every streamed batch: subprocess would add 5 modules to it
        import subprocess

        subprocess.Popen(
            [sys.executable, "-c", "from crib_plugin.models.weights import ensure_minilm; ensure_minilm()"],
            stdin=subprocess.DEVNULL,
            stdout=subprocess.DEVNULL,
            stderr=subprocess.DEVNULL,
            start_new_session=True,
        )
    except Exception:  # best effort: the next session start tries again
        pass
