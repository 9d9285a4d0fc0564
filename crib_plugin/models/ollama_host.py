"""Where Ollama is and whether it answers: the host URL, the request timeout, and a probe.

Split from :mod:`crib_plugin.models.ollama_models` (the embedder, extractor and reranker), which
re-exports these names; the probe is what ``crib doctor`` and the per-process cache in
:mod:`crib_plugin.models.ollama_probe` call.
"""

from __future__ import annotations

import ipaddress
import socket
import time
import urllib.parse
from typing import Any, Sequence

from ..core.config import get_settings
from ..core.errors import ConfigError

DEFAULT_HOST = "http://127.0.0.1:11434"
DEFAULT_PORT = 11434

#: Default model per role (``CRIB_EMBEDDING_MODEL`` / ``CRIB_EXTRACTION_MODEL`` / ``CRIB_RERANK_MODEL``
#: override them). Kept here, beside the host, so the reranker stage can name its default without
#: importing the Ollama models themselves (numpy, and the backend's import cycle).
DEFAULT_EMBEDDING_MODEL = "nomic-embed-text"
DEFAULT_EXTRACTION_MODEL = "gemma3:1b"
DEFAULT_RERANK_MODEL = "gemma3:1b"


# ----------------------------------------------------------------------------------------------
# Configuration
# ----------------------------------------------------------------------------------------------


def ollama_host(host: str | None = None) -> str:
    """The Ollama base URL: ``host`` if given, else ``$OLLAMA_HOST``, else ``http://127.0.0.1:11434``.

    Normalised the way the ``ollama`` CLI reads ``OLLAMA_HOST``: no scheme means ``http://``; no port
    means 11434 (80/443 when a scheme is given); ``:PORT`` means localhost; the bind-all addresses
    ``0.0.0.0`` / ``::`` (which people set so the *server* listens everywhere) mean loopback for a client;
    a trailing slash is dropped. A non-numeric port raises ConfigError.
    """
    if host is None:
        host = get_settings().ollama_host or ""
    raw = host.strip()
    if not raw:
        return DEFAULT_HOST
    scheme = "http"
    default_port = DEFAULT_PORT
    if "://" in raw:
        scheme, raw = raw.split("://", 1)
        scheme = scheme.lower() or "http"
        default_port = 443 if scheme == "https" else 80
    netloc, _, path = raw.partition("/")
    path = path.rstrip("/")
    hostname, port = netloc, ""
    if netloc.startswith("["):  # [ipv6]:port
        end = netloc.find("]")
        hostname, rest = netloc[1:end], netloc[end + 1 :]
        port = rest[1:] if rest.startswith(":") else ""
    elif netloc.count(":") == 1:
        hostname, port = netloc.split(":")
    elif netloc.count(":") > 1:  # bare ipv6 without brackets
        hostname = netloc
    hostname = hostname or "127.0.0.1"
    if hostname in ("0.0.0.0", "::"):
        hostname = "127.0.0.1"
    if not port:
        port = str(default_port)
    if not port.isdigit():
        raise ConfigError(f"OLLAMA_HOST has an invalid port: {port!r}")
    if ":" in hostname:
        hostname = f"[{hostname}]"
    url = f"{scheme}://{hostname}:{port}"
    return f"{url}/{path}" if path else url


def ollama_timeout(default: float) -> float:
    """Per-request timeout in seconds: ``$CRIB_OLLAMA_TIMEOUT`` when set, else ``default``.

    A value that is not a positive number is a configuration error (loud, rather than silently
    falling back to a timeout the user did not ask for).
    """
    value = get_settings().ollama_timeout
    return default if value is None else float(value)


def is_loopback(url: str) -> bool:
    hostname = urllib.parse.urlsplit(url).hostname or ""
    if hostname == "localhost":
        return True
    try:
        return ipaddress.ip_address(hostname).is_loopback
    except ValueError:
        return False


def _full_name(model: str) -> str:
    last = model.rsplit("/", 1)[-1]
    return model if ":" in last else f"{model}:latest"


def base_name(model: str) -> str:
    """``"library/nomic-embed-text:v1.5"`` → ``"nomic-embed-text"``."""
    return model.rsplit("/", 1)[-1].split(":", 1)[0].lower()


def model_available(model: str, models: Sequence[str]) -> bool:
    """Whether ``model`` is among ``models`` (names from ``/api/tags``), treating no tag as ``:latest``."""
    wanted = _full_name(model)
    return any(_full_name(m) == wanted for m in models)


def one_line(text: Any, limit: int = 200) -> str:
    line = " ".join(str(text).split())
    return line if len(line) <= limit else line[: limit - 1] + "…"


# ----------------------------------------------------------------------------------------------
# Probe
# ----------------------------------------------------------------------------------------------


def knock(base: str, timeout: float) -> str | None:
    """``None`` when something accepts a TCP connection on ``base``'s host and port, else why not
    (one line): the probe's first step for a loopback host, with nothing but :mod:`socket`."""
    parts = urllib.parse.urlsplit(base)
    try:
        with socket.create_connection((parts.hostname or "127.0.0.1", parts.port or DEFAULT_PORT), timeout=timeout):
            return None
    except TimeoutError:
        return f"no answer from {base} within {timeout:g}s"
    except OSError as exc:
        return one_line(f"cannot reach {base}: {exc.strerror or exc}")


def probe_ollama(host: str | None = None, timeout: float = 0.5) -> dict[str, Any]:
    """Ask an Ollama server whether it is there, which version it is and which models it has.

    Returns ``{"host", "reachable", "version", "models", "error", "seconds"}``: ``models`` is the list
    of model names from ``/api/tags``; ``error`` is a one-line reason (None when reachable). Never
    raises and caches nothing (each call asks again); each of its two GETs has ``timeout`` seconds.
    Uses only the standard library so ``crib doctor`` and hooks do not pay for importing ``ollama``;
    a loopback host is first knocked on with a bare TCP connect, so the usual offline case (nothing
    listening on 11434) is answered without importing ``urllib.request`` at all.
    """
    started = time.monotonic()
    result: dict[str, Any] = {"host": None, "reachable": False, "version": None, "models": [], "error": None}
    try:
        base = ollama_host(host)
        result["host"] = base
        direct = is_loopback(base)  # a loopback server is never behind a proxy
        result["error"] = knock(base, timeout) if direct else None
        if result["error"] is None:
            # deferred: urllib.request costs ≈ 24 ms (-X importtime, ≈ 20 % of `import numpy`) and a
            # write or SessionStart with no Ollama listening (the offline default) never gets here
            from .ollama_http import ask_ollama

            result.update(ask_ollama(base, timeout, direct=direct))
            result["error"] = result["error"] and one_line(result["error"])
    except TimeoutError:
        result["error"] = f"no answer from {result['host']} within {timeout:g}s"
    except Exception as exc:  # noqa: BLE001 - a probe never raises
        result["error"] = one_line(f"{type(exc).__name__}: {exc}")
    result["seconds"] = round(time.monotonic() - started, 4)
    return result


