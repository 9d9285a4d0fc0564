"""What the layers below the ``Memory`` facade need from it, as a Protocol.

The channels, the recall pipeline (recall, relevance, evidence, rerank, supersede, prefetch), the
write path, ``manage``, ``session`` and the hook specifications all take "the open memory" as an
argument. They annotate it with :class:`MemoryLike` instead of importing
:class:`crib_plugin.memory.Memory`, so imports flow one way — the facade imports the pipeline, never
the reverse — and the module graph has no cycle through ``memory`` (tests/test_import_graph.py).
``Memory`` satisfies the protocol structurally; nothing registers against it.
"""

from __future__ import annotations

from pathlib import Path
from typing import TYPE_CHECKING, Any, Protocol, Sequence

if TYPE_CHECKING:  # pragma: no cover - annotations only; both are leaves below this one
    from ..core.config import Settings
    from ..core.records import Retrieval, Triple
    from ..core.write_types import NewEntry
    from ..store.base import Store


class MemoryLike(Protocol):
    """The members of :class:`crib_plugin.memory.Memory` the lower layers use."""

    settings: Settings
    path: Path

    @property
    def store(self) -> Store: ...  # pragma: no cover

    @property
    def registry(self) -> Any: ...  # pragma: no cover

    def embedder_name(self) -> str: ...  # pragma: no cover

    @property
    def embedder_loaded(self) -> bool: ...  # pragma: no cover

    def embedder(self) -> Any: ...  # pragma: no cover

    def embedder_key(self) -> str: ...  # pragma: no cover

    def channel_weights(self) -> dict[str, float]: ...  # pragma: no cover

    def extractor(self) -> Any: ...  # pragma: no cover

    def write(
        self,
        text: str,
        type: str | None = None,
        created_at: str | None = None,
        metadata: dict[str, Any] | None = None,
        *,
        dedupe: bool = True,
        extract: bool = True,
    ) -> int: ...  # pragma: no cover

    def recall(self, text: str, *, channels: Sequence[str] | None = None) -> Retrieval: ...  # pragma: no cover

    def select(self, retrieval: Retrieval, *, budget: int | None = None, max_items: int = ..., exclude: Any = ...,
               per_entry: bool = True, pointed: Any = ...) -> Retrieval: ...  # pragma: no cover

    def render(self, retrieval: Retrieval, *, template: str = ...) -> str: ...  # pragma: no cover

    def embed_texts(self, contents: Sequence[str], previous: Sequence[str | None], notes: list[str]) -> list[Any] | None: ...  # pragma: no cover

    def extract_facts(self, content: str, notes: list[str]) -> list[Triple]: ...  # pragma: no cover

    def previous_in_thread(self, items: Sequence[NewEntry]) -> list[str | None]: ...  # pragma: no cover
