"""``crib calibrate``: derive this store's vector gate from data rather than guessing a constant.

Peers pick a fixed cosine cut-off (0.5, 0.55, 0.6) or none at all. The right value depends on the
embedder *and* on the store: the nearest memory of an unrelated prompt gets closer as a store
grows or narrows in topic. crib measures it: off-topic probe prompts (``hosts/probes.txt``) are
run against the store, and the gate is set just above what they reach (the 95th percentile of
their best cosine, plus a small margin). For contrast it also reports a pseudo-relevant
distribution: each sampled memory's first half used as a query against the store.

The result is written to the store's settings (``gate:<embedder key>``); the per-hit floor
follows it at ``FLOOR_BELOW_GATE`` below. Stores under ``MIN_ENTRIES`` keep the shipped default:
a handful of memories says too little about the noise.

Calibration only ever *raises* the gate above the shipped, size-scaled default
(:func:`crib_plugin.read.gate.levels.default_gate`), never lowers it: on a 20-entry store the off-topic
probes' best cosine is low simply because there are few memories to be near, and a gate set from
it let through paraphrase-looking noise (issue 12: injection got noisier after calibrating). A
store whose topic is narrow (probes come close) still gets the higher gate it needs.
"""

from __future__ import annotations

import random
from importlib import resources
from typing import TYPE_CHECKING, Any

import numpy as np

from ..core.errors import InputError
from ..read.gate.levels import MARGIN_SCALE, default_gate, floor_below_gate, vector_gate

if TYPE_CHECKING:  # pragma: no cover
    from ..memory import Memory

MIN_ENTRIES = 20
QUANTILE = 95
MARGIN = 0.02
BOUNDS = (0.25, 0.75)
SAMPLE = 200


def probe_prompts() -> list[str]:
    text = resources.files("crib_plugin.hosts").joinpath("probes.txt").read_text(encoding="utf-8")
    return [line.strip() for line in text.splitlines() if line.strip() and not line.startswith("#")]


def _store_vectors(memory: "Memory") -> tuple[list[int], np.ndarray]:
    space = memory.store.vector_space(memory.embedder_key())
    if space is None:
        raise InputError("this store has no vectors yet: write some memories first")
    table, dim = space
    rows = memory.store.all_vectors(table)
    ids = [entry_id for entry_id, _blob in rows]
    matrix = np.stack([np.frombuffer(blob, dtype="<f4") for _id, blob in rows]) if rows else np.zeros((0, dim), "f4")
    return ids, matrix


def _percentiles(values: np.ndarray) -> dict[str, float]:
    if values.size == 0:
        return {}
    return {f"p{p}": round(float(np.percentile(values, p)), 3) for p in (5, 25, 50, 75, 95)}


def _embed(embedder: Any, texts: list[str], on_progress: Any, done: int, total: int) -> np.ndarray:
    """``embed_documents`` in batches of 32, reporting ``(done, total)`` after each."""
    parts = []
    for start in range(0, len(texts), 32):
        parts.append(embedder.embed_documents(texts[start:start + 32]))
        if on_progress is not None:
            on_progress(done + min(start + 32, len(texts)), total)
    return np.concatenate(parts) if parts else np.zeros((0, 0), "f4")


def calibrate(memory: "Memory", *, write: bool = True, on_progress: Any = None) -> dict[str, Any]:
    """Measure, choose and (with ``write``) store the gate; return a JSON-ready report.
    ``on_progress(done, total)`` follows the texts embedded (probes, then sampled entries)."""
    embedder = memory.embedder()
    key = memory.embedder_key()
    ids, matrix = _store_vectors(memory)
    before = vector_gate(memory)
    report: dict[str, Any] = {"embedder": key, "entries": len(ids), "gate_before": round(before, 3)}
    prompts = probe_prompts()
    total = len(prompts) + min(SAMPLE, len(ids))
    # probes stand for prompts: embedded as queries (e5 prefixes queries and entries differently)
    probes = np.stack([embedder.embed_query(p) for p in prompts]) if prompts else np.zeros((0, 0), "f4")
    if on_progress is not None:
        on_progress(len(prompts), total)
    off_topic = (matrix @ probes.T).max(axis=0) if len(ids) else np.zeros(0)
    report["off_topic_best_cosine"] = _percentiles(off_topic)

    rng = random.Random(0)
    sample = rng.sample(ids, min(SAMPLE, len(ids)))
    entries = memory.store.get_entries(sample)
    halves = [e.content[: max(12, len(e.content) // 2)] for e in entries.values()]
    if halves:
        own = _embed(embedder, halves, on_progress, len(prompts), total)
        positions = {entry_id: i for i, entry_id in enumerate(ids)}
        related = np.array([float(matrix[positions[e]] @ own[i]) for i, e in enumerate(entries)])
        report["pseudo_relevant_cosine"] = _percentiles(related)

    if len(ids) < MIN_ENTRIES:
        report.update(gate=round(before, 3), written=False, reason=f"fewer than {MIN_ENTRIES} entries: kept the default")
        return report
    scale = MARGIN_SCALE.get(key, 1.0)  # e5's narrow cosine band: its own margin, and room above 0.75
    upper = BOUNDS[1] if scale == 1.0 else 0.95
    measured = float(np.clip(np.percentile(off_topic, QUANTILE) + MARGIN * scale, BOUNDS[0], upper))
    shipped = default_gate(key, len(ids))
    gate = max(measured, shipped)  # calibration only ever raises the gate (see the module docstring)
    report["measured"] = round(measured, 3)
    report.update(gate=round(gate, 3), floor=round(gate - floor_below_gate(key), 3))
    if "pseudo_relevant_cosine" in report:
        report["pseudo_relevant_below_gate"] = round(float((related < gate).mean()), 3)
    if write:
        memory.store.set_gate(key, gate)
    report["written"] = write
    return report
