"""The cosine levels of the vector evidence, per embedder: the relevance *gate* and the per-hit *floor*.

The gate is the cosine a prompt's best vector hit must reach for the vector channel alone to open
the relevance gate (:mod:`crib_plugin.read.gate.relevance`); the floor is the cosine below which a
hit is no evidence at all (the vector channel marks such hits; the per-entry cut and the pointer
tier measure from it). Both are a store's calibrated values (``crib calibrate`` stores them under
``gate:<embedder key>`` and ``floor:<embedder key>``), else the shipped defaults below.

This module imports nothing of the read layer, so the vector channel, the gate, the per-entry cut
and the pointer tier all ask it directly, and no stage calls back up into the ``Memory`` facade.
"""

from __future__ import annotations

import math
from typing import TYPE_CHECKING

if TYPE_CHECKING:  # pragma: no cover
    from ...plugins.contracts import MemoryLike  # the protocol: no import of the facade above

# Margins on the prompt path are on MiniLM's cosine scale. multilingual-e5-small squeezes every
# cosine into a narrow band (unrelated prompts' top neighbour ≈ 0.80, relevant memories ≈
# 0.85–0.90), so its margins (the gate's small-store drop, the cue discount) shrink by the ratio of
# the two embedders' spreads (median answerable top minus median no-answer top, measured by
# bench/embedder_gate.py; README "Embedders").
MARGIN_SCALE: dict[str, float] = {
    "e5:multilingual-e5-small-q4:384": 0.15,  # LoCoMo 0.055 vs 0.484 (0.11), coding set 0.044 vs 0.221 (0.20)
}

# Shipped vector gates (cosine similarity of the best neighbour), per embedder identity.
# MiniLM: LoCoMo questions' top neighbour p5 = 0.48; unrelated prompts' p95 = 0.35 (LoCoMo
# stores); `crib calibrate` on a LoCoMo store gives 0.40. The gate values here (0.42, coverage
# 0.6, agreement 0.5) were chosen by a sweep over LoCoMo questions and the no-answer set: they
# keep 99.7% of LoCoMo recall@10 and shut the gate on 98.5% of unrelated prompts. nomic-embed-text is not measurable here (no Ollama): its value is
# a conservative guess; run `crib calibrate` with Ollama up.
DEFAULT_GATES: dict[str, float] = {
    "minilm:all-MiniLM-L6-v2:384": 0.42,
    "ollama:nomic-embed-text:768": 0.60,
    # e5 (bench/embedder_gate.py): its unrelated and answerable top cosines overlap (LoCoMo no-answer
    # p95 0.841, answerable p5 0.831). 0.85 shut 98% of LoCoMo's no-answer prompts but cost 6.5
    # points of injected R@10 on conv-26 (72.4 vs 78.4 raw); 0.84 keeps 77.2 of 77.9.
    "e5:multilingual-e5-small-q4:384": 0.84,
}
FALLBACK_GATE = 0.45
FULL_SIZE = 200  # entries at which a store gets the full gate
SMALL_STORE_DROP = 0.14  # how much lower the gate of a one-entry store is
FLOOR_BELOW_GATE = 0.10  # per-hit floor = gate − this, so neighbours of a relevant prompt survive
# Margins above are on MiniLM's cosine scale; MARGIN_SCALE (which also scales the vector channel's
# cue discount) carries them to other embedders.


# The per-hit floor is set by where relevant memories sit, not by the spread: MiniLM's floor
# (0.32) is the 5th percentile of LoCoMo's evidence-turn cosines; e5's is 0.79 (coding set 0.805),
# so its floor sits 0.06 below its gate (0.78) (a 0.015 margin cut half of LoCoMo's evidence: R@10 49 vs 58).
FLOOR_MARGINS: dict[str, float] = {
    "e5:multilingual-e5-small-q4:384": 0.06,
}


def floor_below_gate(key: str) -> float:
    """How far below the gate an embedder's per-hit floor sits (its own cosine scale)."""
    return FLOOR_MARGINS.get(key, FLOOR_BELOW_GATE * MARGIN_SCALE.get(key, 1.0))


def default_gate(key: str, entries: int) -> float:
    """The shipped gate for an embedder, scaled to the store's size.

    The nearest memory of an unrelated prompt gets closer as a store grows — it is the best of N
    chances (off-topic probes' best cosine, p95: 0.23 on a 40-entry coding memory, 0.44 on a
    600-turn LoCoMo conversation). So a small store gets a lower gate, rising log-linearly to
    the full value at ``FULL_SIZE`` entries. One memory about "SQLite for storage" is then found by
    "which storage engine did we pick?" (cosine 0.30), which a 600-entry store could not afford.
    """
    full = DEFAULT_GATES.get(key, FALLBACK_GATE)
    if entries >= FULL_SIZE:
        return full
    share = math.log(max(1, entries)) / math.log(FULL_SIZE)
    return full - SMALL_STORE_DROP * MARGIN_SCALE.get(key, 1.0) * (1.0 - share)


def vector_gate(memory: MemoryLike) -> float:
    """The gate for the active embedder: the shipped default for this store size, or a calibrated
    value when that is higher (an older calibration that lowered it no longer does)."""
    key = memory.embedder_key()
    shipped = default_gate(key, memory.store.count_entries())
    stored = memory.store.gate(key)
    if stored is not None:
        return max(stored, shipped)  # a calibration may raise the gate, never lower it
    return shipped


def vector_floor(memory: MemoryLike) -> float:
    """Per-hit cosine floor for ``memory``'s embedder: the calibrated value, else the gate minus a fixed margin.

    Raises what the embedder or the store raise (:class:`~crib_plugin.core.errors.CribError`)."""
    key = memory.embedder_key()
    stored = memory.store.vector_floor(key)
    if stored is not None:
        return stored
    return vector_gate(memory) - floor_below_gate(key)
