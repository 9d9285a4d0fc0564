"""The model that writes a memory's recall cue when ``CRIB_CUE_MODEL`` names one (opt-in).

Used by the write path (a memory stored without a cue) and ``crib reindex --write-cues``. The
backend is picked here, at run time, from the configuration: a process with no cue model set —
every ``crib write`` by default — never imports the Ollama client (httpx, ollama, pydantic).
"""

from __future__ import annotations

from typing import Protocol


class CueWriter(Protocol):
    """Writes the recall cue (``when``) of one memory; raises ``ModelError`` when it cannot."""

    def write_cue(self, text: str, type: str) -> str: ...  # pragma: no cover


def cue_writer(model: str) -> CueWriter:
    """The cue writer for ``model`` (an Ollama model name)."""
    # deferred: the cue-writer backend, by configuration (CRIB_CUE_MODEL): the Ollama client costs
    # `crib write` 4.4x `import numpy` (measured in write.manage's import, loaded machine) and only
    # a configured cue model needs it
    from ..models.ollama.cue_writer import OllamaCueWriter

    return OllamaCueWriter(model)
