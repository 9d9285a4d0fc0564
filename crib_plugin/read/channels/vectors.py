"""The vector channel: sqlite-vec nearest neighbours by cosine distance, behind a relevance floor.

Nearest-neighbour search always returns *something*; the floor is what lets this channel say
"nothing matches" (the open defect of seed 000). The floor is a cosine similarity: a store may
carry a calibrated value (``crib calibrate``) under ``floor:<embedder key>``; otherwise the
embedder's shipped default applies.

**Strength** (each hit's share in the strength-gated fusion, :mod:`crib_plugin.read.fusion`): its
cosine above the floor over the headroom left — or, when the channel is *confident*, relative to
its own best hit, as full text's BM25 is. The channel is confident when its best hit stands
:data:`CONFIDENT_MARGIN` above the prompt's crowd (its 10th-best cosine): a paraphrase's memory is
then as strong in the fusion as full text's best hit, where it used to count a third as much
(the fused ranking was worse than the vector channel alone on coding memory). A crowded top
(LoCoMo's chit-chat) keeps the headroom strength. Issue 12: coding set fused search hit@1
40.7 → 43.2, hit@5 69.1 → 74.1; LoCoMo raw R@5 / R@10 both up (README, Benchmarks).
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import TYPE_CHECKING

from ...core.cues import CUE_DISCOUNT, cue_space_key
from ...core.errors import CribError
from ...core.records import ChannelHit, ChannelResult, Query
from ...plugins.hookspecs import hookimpl
from ...store.base_vectors import to_blob  # noqa: F401 - the channel's wire format, importable from here too
from ..gate.levels import MARGIN_SCALE, vector_floor

if TYPE_CHECKING:  # pragma: no cover
    from ...plugins.contracts import MemoryLike  # the protocol: channels never import the facade


class VectorChannel:
    """k-NN over the store's active embedding space, floored by cosine similarity."""

    name = "vector"
    needs_embedding = True  # run after the other channels, so a prefetch worker has time to answer
    gate = "similarity"  # the relevance gate compares its top score with the store's calibrated gate

    def search(self, memory: "MemoryLike", query: Query, limit: int) -> ChannelResult:
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
        floor = vector_floor(memory)
        table, _dim = space
        hits: list[ChannelHit] = []
        for entry_id, similarity, via_cue in nearest(memory, table, to_blob(query.embedding), limit):
            headroom = max(1e-6, 1.0 - floor)
            hit = ChannelHit(
                entry_id=entry_id,
                rank=len(hits) + 1,
                score=similarity,
                channel=self.name,
                strength=max(0.0, (similarity - floor) / headroom),
                via="cue" if via_cue else "",
            )
            if similarity < floor:
                hit.passed_floor = False
                result.dropped_by_floor += 1
            hits.append(hit)
        confident_strengths(hits, floor)
        result.hits = hits
        return result


def nearest(memory: "MemoryLike", table: str, vector: bytes, limit: int) -> list[tuple[int, float, bool]]:
    """The ``limit`` entries nearest the prompt as ``(entry id, cosine, via its cue)``, best first.

    An entry with a recall cue (:mod:`crib_plugin.core.cues`) has a second vector in the cue space; its
    cosine is the better of the two, so a task phrased like the cue finds it and one phrased like
    the memory still does. A cue's cosine counts :data:`~crib_plugin.core.cues.CUE_DISCOUNT` less: a
    cue names situations in general words, so it sits nearer every prompt than the memory's own
    text. Without a cue space this is the content space's k-NN alone."""
    best: dict[int, tuple[float, bool]] = {}
    for entry_id, distance in memory.store.vector_search(table, vector, limit):
        best[entry_id] = (1.0 - distance, False)
    key = memory.embedder_key()
    cues = memory.store.vector_space(cue_space_key(key))
    if cues is not None:
        discount = CUE_DISCOUNT * MARGIN_SCALE.get(key, 1.0)
        for entry_id, distance in memory.store.vector_search(cues[0], vector, limit):
            cosine = 1.0 - distance - discount
            if cosine > best.get(entry_id, (-2.0, False))[0]:
                best[entry_id] = (cosine, True)
    ranked = sorted(best.items(), key=lambda item: (-item[1][0], item[0]))[:limit]
    return [(entry_id, cosine, via) for entry_id, (cosine, via) in ranked]


CROWD_RANK = 10
"""A prompt's crowd: its this-th best cosine (or the last one on a smaller store)."""
CONFIDENT_MARGIN = 0.25
"""How far above the prompt's crowd the best cosine must stand for full relative strength."""


def crowd_level(cosines: Sequence[float]) -> float | None:
    """The cosine of the prompt's crowd (its :data:`CROWD_RANK`-th best), ``None`` below two hits.

    How far a hit stands above it says whether the prompt resembles that memory or merely the
    whole store (:mod:`crib_plugin.read.gate.specific`, and the strengths below)."""
    if len(cosines) < 2:
        return None
    ordered = sorted(cosines, reverse=True)
    return ordered[min(CROWD_RANK, len(ordered)) - 1]


def confident_strengths(hits: list[ChannelHit], floor: float) -> None:
    """Raise each hit's strength towards its cosine relative to the best hit, as far as the channel
    is confident (its best hit's margin over the crowd, up to :data:`CONFIDENT_MARGIN`)."""
    if not hits:
        return
    best = max(h.score for h in hits)
    crowd = crowd_level([h.score for h in hits])
    confidence = 1.0 if crowd is None else max(0.0, min(1.0, (best - crowd) / CONFIDENT_MARGIN))
    for hit in hits:
        relative = max(0.0, (hit.score - floor) / max(1e-6, best - floor))
        hit.strength = max(hit.strength, relative * confidence)


@hookimpl(trylast=True)
def register_channels(register):  # type: ignore[no-untyped-def]
    register(VectorChannel())
