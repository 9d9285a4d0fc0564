"""The HTTP half of the Ollama probe: ``/api/version`` and ``/api/tags`` over ``urllib``.

Kept apart from :mod:`crib_plugin.models.ollama_host` because ``urllib.request`` costs ≈ 24 ms
to import, and :func:`~crib_plugin.models.ollama_host.probe_ollama` only needs it once something
answers on Ollama's port.
"""

from __future__ import annotations

import json
import urllib.error
import urllib.request
from typing import Any


def ask_ollama(base: str, timeout: float, *, direct: bool) -> dict[str, Any]:
    """``{"version", "models", "reachable", "error"}`` from the server at ``base``: ``error`` is a
    reason (the caller makes it one line) when it did not answer as Ollama does. Raises ``TimeoutError`` on a read timeout
    (and whatever an unexpected answer raises: the caller turns both into its error line).
    ``direct`` bypasses any proxy (a loopback server is never behind one)."""
    handlers: list[Any] = [urllib.request.ProxyHandler({})] if direct else []
    opener = urllib.request.build_opener(*handlers)

    def get(path: str) -> Any:
        with opener.open(base + path, timeout=timeout) as resp:
            return json.loads(resp.read().decode("utf-8"))

    found: dict[str, Any] = {"version": None, "models": [], "reachable": False, "error": None}
    try:
        try:
            version = get("/api/version")
            if isinstance(version, dict) and isinstance(version.get("version"), str):
                found["version"] = version["version"]
        except urllib.error.HTTPError:
            pass  # an old or proxied server without /api/version can still list models
        tags = get("/api/tags")
    except urllib.error.HTTPError as exc:
        return {**found, "error": f"HTTP {exc.code} from {base}"}
    except urllib.error.URLError as exc:
        return {**found, "error": f"cannot reach {base}: {exc.reason}"}
    if not isinstance(tags, dict) or not isinstance(tags.get("models"), list):
        return {**found, "error": "ValueError: /api/tags did not return a model list"}
    found["models"] = [
        str(m.get("name") or m.get("model")) for m in tags["models"] if isinstance(m, dict) and (m.get("name") or m.get("model"))
    ]
    found["reachable"] = True
    return found
