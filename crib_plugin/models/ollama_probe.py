"""Is Ollama there, with this model? A per-process cached answer for the hot paths.

The write path (choosing the fact extractor) and ``crib doctor`` ask this; the probe itself
(:func:`crib_plugin.models.ollama_host.probe_ollama`) uses only the standard library, so neither
pays for importing the ``ollama`` client just to learn that Ollama is not running.
"""

from __future__ import annotations

from functools import lru_cache

from .ollama_host import DEFAULT_RERANK_MODEL, model_available, probe_ollama  # noqa: F401 - DEFAULT_RERANK_MODEL for read.rerank
from .ollama_host import ollama_host as _ollama_host


def ollama_host() -> str:
    """``OLLAMA_HOST`` as a URL (scheme and port filled in), default ``http://127.0.0.1:11434``."""
    return _ollama_host()


@lru_cache(maxsize=8)
def list_models(host: str, timeout: float = 0.5) -> tuple[str, ...] | None:
    """Model names Ollama serves at ``host``, or ``None`` when it does not answer (cached)."""
    found = probe_ollama(host, timeout)
    return tuple(found["models"]) if found["reachable"] else None


def ollama_has_model(model: str, host: str | None = None) -> bool:
    """True when Ollama answers and serves ``model`` (``name`` or ``name:latest``)."""
    names = list_models(host or ollama_host())
    return bool(names) and model_available(model, names or ())
