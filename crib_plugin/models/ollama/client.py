"""Shared plumbing of the Ollama backend: defaults, timeouts, and the lazily built client that maps its errors.

Split from :mod:`crib_plugin.models.ollama_models` (which re-exports the backend's public names);
the embedder, extractor and reranker in :mod:`.embedder`, :mod:`.extractor` and
:mod:`.reranker` build on :class:`OllamaBase`.
"""

from __future__ import annotations

import time
from typing import Any, Callable, TypeVar

import httpx
import ollama
import pydantic

from ...core.config import get_settings
from ...core.errors import ConfigError, ModelError, ModelUnavailable
from ..ollama_host import (
    is_loopback,
    ollama_host,
    one_line,
)

EMBED_TIMEOUT = 2.0

RERANK_TIMEOUT = 2.0

EXTRACT_TIMEOUT = 30.0

SEED = 42
"""Fixed sampling seed for every generation (with temperature 0, the output is reproducible)."""

MAX_FACTS = 32
"""At most this many facts are kept from one extraction (the rest are dropped, in model order)."""

EMBED_BATCH = 32
"""Texts per ``/api/embed`` request, so one request stays well inside its timeout."""

RERANK_WORKERS = 1
"""Concurrent pointwise rerank requests. One: Ollama's default for a CPU-only server is one slot
(``OLLAMA_NUM_PARALLEL``), where parallel requests only queue, each waiting out the others within its
own timeout; raise it (``OllamaReranker(workers=…)``) for a server with more slots."""

DEFAULT_KEEP_ALIVE = "30m"
"""``keep_alive`` sent with every request (``CRIB_OLLAMA_KEEP_ALIVE``): how long Ollama keeps the
model loaded after it. Ollama's own default (5 minutes) unloads a model between two prompts a
few minutes apart, and the next one pays the load (seconds on a CPU) inside its deadline."""

T = TypeVar("T")


def tokens_spent(response: Any, prompt_chars: int, reply_chars: int) -> int:
    """Tokens one chat cost: Ollama's ``prompt_eval_count`` + ``eval_count``, each estimated at four
    characters a token when the server left it out (``prompt_eval_count`` is missing when the
    whole prompt came from Ollama's cache, in some versions)."""
    prompt = getattr(response, "prompt_eval_count", None)
    reply = getattr(response, "eval_count", None)
    return int(prompt if prompt else prompt_chars // 4) + int(reply if reply else reply_chars // 4)


def configured(name: str) -> Any:
    """A model setting (``embedding_model``…) from :func:`crib_plugin.core.config.get_settings`."""
    return getattr(get_settings(), name)


class OllamaBase:
    """Holds host, model and timeout, builds the ``ollama.Client`` lazily and maps its errors."""

    name = "ollama"
    role = "model"

    def __init__(self, model: str, host: str | None, timeout: float) -> None:
        if not model or not model.strip():
            raise ConfigError(f"empty Ollama {self.role} model name")
        self.model = model.strip()
        self.host = ollama_host(host)
        self.timeout = float(timeout)
        self._client: ollama.Client | None = None

    @property
    def client(self) -> "ollama.Client":
        """The ``ollama.Client`` (created on first use)."""
        if self._client is None:
            # Loopback never goes through an HTTP proxy (httpx would otherwise honour HTTP_PROXY), and
            # plain http on loopback needs no TLS context (building the default one costs ~100 ms).
            loopback = is_loopback(self.host)
            plain = loopback and self.host.startswith("http://")
            self._client = ollama.Client(
                host=self.host,
                timeout=httpx.Timeout(self.timeout, connect=min(self.timeout, 1.0)),
                trust_env=not loopback,
                **({"verify": False} if plain else {}),
            )
        return self._client

    @property
    def keep_alive(self) -> str:
        """``keep_alive`` for every request (``CRIB_OLLAMA_KEEP_ALIVE``, default :data:`DEFAULT_KEEP_ALIVE`)."""
        return str(configured("ollama_keep_alive") or DEFAULT_KEEP_ALIVE)

    def chat(self, what: str, messages: list[dict[str, str]], schema: Any, options: dict[str, Any]) -> Any:
        """One non-streamed, schema-constrained ``/api/chat`` request, errors mapped by :meth:`_call`."""
        return self._call(what, lambda: self.client.chat(
            model=self.model, messages=messages, format=schema, options=options, stream=False, keep_alive=self.keep_alive,
        ))

    def warm(self) -> float:
        """Ask Ollama to load the model now (a chat with no messages: Ollama's load request) and keep it
        for :attr:`keep_alive`; the seconds the request took. Raises like any request."""
        started = time.monotonic()
        self._call("warm-up", lambda: self.client.chat(model=self.model, messages=[], stream=False, keep_alive=self.keep_alive))
        return time.monotonic() - started

    def close(self) -> None:
        """Close the HTTP connection pool (optional; it is also closed when garbage-collected)."""
        if self._client is not None:
            self._client.close()
            self._client = None

    def __repr__(self) -> str:
        return f"{type(self).__name__}(model={self.model!r}, host={self.host!r}, timeout={self.timeout:g})"

    def _call(self, what: str, fn: Callable[[], T]) -> T:
        """Run one client request, turning every failure into a one-line ModelError/ModelUnavailable."""
        try:
            return fn()
        except ollama.ResponseError as exc:
            status = exc.status_code
            message = one_line(exc.error)
            if status == 404 or "not found" in message.lower():
                raise ModelUnavailable(
                    f"ollama model {self.model!r} not found at {self.host}: run `ollama pull {self.model}`"
                ) from None
            raise ModelError(f"ollama {what} with {self.model!r} failed: HTTP {status}: {message}") from None
        except httpx.TimeoutException:
            raise ModelUnavailable(
                f"ollama at {self.host} did not answer the {what} request within {self.timeout:g}s"
            ) from None
        except ConnectionError:  # the client's translation of httpx.ConnectError
            raise ModelUnavailable(f"ollama is not reachable at {self.host} (connection refused)") from None
        except httpx.HTTPError as exc:
            raise ModelUnavailable(
                one_line(f"ollama at {self.host} dropped the {what} request: {type(exc).__name__}: {exc}")
            ) from None
        except (ValueError, pydantic.ValidationError) as exc:  # JSONDecodeError is a ValueError
            raise ModelError(
                one_line(f"ollama {what} with {self.model!r} returned a malformed reply: {type(exc).__name__}")
            ) from None
        except ollama.RequestError as exc:
            raise ModelError(one_line(f"ollama {what} request rejected: {exc}")) from None
        except OSError as exc:
            raise ModelUnavailable(one_line(f"ollama at {self.host}: {exc}")) from None


def warm_configured(timeout: float = 300.0) -> dict[str, Any]:
    """Load each model the prompt path asks (``CRIB_JUDGE_MODEL``, ``CRIB_RERANK_MODEL``) now, each
    once: ``{model: seconds taken, or why not}``. What a session start runs in the background."""
    out: dict[str, Any] = {}
    for name in dict.fromkeys(m for m in (configured("judge_model"), configured("rerank_model")) if m):
        try:
            out[name] = round(OllamaBase(name, None, timeout).warm(), 3)
        except (ModelError, ModelUnavailable, ConfigError) as exc:
            out[name] = str(exc)
    return out
