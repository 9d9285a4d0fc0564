"""The vector channel: sqlite-vec nearest neighbours by cosine distance, behind a relevance floor.

Nearest-neighbour search always returns *something*; the floor is what lets this channel say
"nothing matches" (the open defect of seed 000). The floor is a cosine similarity: a store may
carry a calibrated value (``crib calibrate``) under ``floor:<embedder key>``; otherwise the
embedder's shipped default applies.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from ..errors import CribError
from ..hookspecs import hookimpl
from ..records import ChannelHit, ChannelResult, Query

if TYPE_CHECKING:  # pragma: no cover
    from ..contracts import MemoryLike as Memory  # the protocol: channels never import the facade


def to_blob(vector: Any) -> bytes:
    """float32 little-endian bytes, the format vec0 expects.

    Bytes pass through untouched: that is how a vector arrives from the prefetch worker
    (:mod:`crib_plugin.prefetch`), and it keeps numpy out of a process that never embeds.
    """
    if isinstance(vector, (bytes, bytearray, memoryview)):
        return bytes(vector)
    import numpy as np

    return np.asarray(vector, dtype="<f4").tobytes()


class VectorChannel:
    """k-NN over the store's active embedding space, floored by cosine similarity."""

    name = "vector"
    needs_embedding = True  # run after the other channels, so a prefetch worker has time to answer
    gate = "similarity"  # the relevance gate compares its top score with the store's calibrated gate

    def search(self, memory: "Memory", query: Query, limit: int) -> ChannelResult:
        result = ChannelResult(channel=self.name)
        try:
            embedder = memory.embedder()
            if query.cjk and not getattr(embedder, "multilingual", True):
                # all-MiniLM-L6-v2 was trained on English: any two CJK texts look alike to it.
                result.ran = False
                result.note = f"{embedder.model} is English-only; CJK prompts use the full-text channel"
                return result
            space = memory.store.vector_space(memory.embedder_key())
            if space is None:
                result.note = "no vectors stored yet"
                return result
            if query.embedding is None:
                query.embedding = embedder.embed_query(query.text)
        except CribError as exc:
            result.ran = False
            result.note = str(exc)
            return result
        floor = memory.vector_floor()
        table, _dim = space
        hits: list[ChannelHit] = []
        for entry_id, distance in memory.store.vector_search(table, to_blob(query.embedding), limit):
            similarity = 1.0 - distance
            headroom = max(1e-6, 1.0 - floor)
            hit = ChannelHit(
                entry_id=entry_id,
                rank=len(hits) + 1,
                score=similarity,
                channel=self.name,
                strength=max(0.0, (similarity - floor) / headroom),
            )
            if similarity < floor:
                hit.passed_floor = False
                result.dropped_by_floor += 1
            hits.append(hit)
        result.hits = hits
        return result


@hookimpl(trylast=True)
def register_channels(register):  # type: ignore[no-untyped-def]
    register(VectorChannel())
