"""A fast, dependency-free check of whether Ollama answers — without importing the ollama client.

Importing the official client (httpx, pydantic) costs about 0.3 s, too much to pay on every write
just to learn that Ollama is not running. This uses urllib with a short timeout and remembers the
answer for the life of the process.
"""

from __future__ import annotations

import json
import os
import urllib.error
import urllib.request
from functools import lru_cache
from typing import Any

DEFAULT_HOST = "http://127.0.0.1:11434"


def ollama_host() -> str:
    """``OLLAMA_HOST`` as a URL (``host:port`` and ``0.0.0.0`` forms accepted), default localhost:11434."""
    raw = (os.environ.get("OLLAMA_HOST") or "").strip()
    if not raw:
        return DEFAULT_HOST
    if "://" not in raw:
        raw = "http://" + raw
    scheme, rest = raw.split("://", 1)
    hostport = rest.split("/", 1)[0]
    if hostport.startswith("0.0.0.0"):
        hostport = "127.0.0.1" + hostport[len("0.0.0.0"):]
    if ":" not in hostport.rsplit("]", 1)[-1]:
        hostport += ":11434"
    return f"{scheme}://{hostport}"


@lru_cache(maxsize=8)
def list_models(host: str, timeout: float = 0.5) -> tuple[str, ...] | None:
    """Model names Ollama serves at ``host``, or ``None`` when it does not answer (cached)."""
    try:
        with urllib.request.urlopen(f"{host}/api/tags", timeout=timeout) as response:  # noqa: S310
            data: Any = json.loads(response.read().decode("utf-8"))
    except (urllib.error.URLError, OSError, ValueError):
        return None
    models = data.get("models") if isinstance(data, dict) else None
    if not isinstance(models, list):
        return None
    return tuple(str(m.get("name") or m.get("model") or "") for m in models if isinstance(m, dict))


def ollama_has_model(model: str, host: str | None = None) -> bool:
    """True when Ollama answers and serves ``model`` (``name`` or ``name:latest``)."""
    names = list_models(host or ollama_host())
    if not names:
        return False
    wanted = {model, f"{model}:latest"} if ":" not in model else {model}
    return any(n in wanted for n in names)
