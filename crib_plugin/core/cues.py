"""Recall cues: the writer's own line saying *when* a memory should come back.

A coding agent's prompts are tasks ("install httpx for the billing service"); the memory that
matters ("the user's package manager is uv") rarely shares their words or their embedding. The
agent that writes the memory knows when it will matter, so it may say so, the way a Claude Code
skill's ``description`` says when to use the skill: ``crib write --when "installing or adding a
Python package; running Python tools"``, the MCP ``remember`` tool's ``when``, or
``metadata={"when": ...}`` from Python.

The cue is kept in the entry's metadata under :data:`CUE_KEY` and embedded into a vector space of
its own (:func:`cue_space_key`), beside the content's; the vector channel scores an entry by the
better of its two cosines, so a task phrased like the cue finds the memory, and everything after
the channel (gate, per-entry evidence, fusion) treats that cosine like any other. A cue is never
injected: the block shows what the memory says, not when it applies. Entries without a cue (every
LoCoMo turn, anything written before cues existed) are scored exactly as before.

This module is a leaf (the store, the vector channel and the per-entry evidence all read it);
cleaning a cue on the way in is the write path's (:func:`crib_plugin.write.clean.with_clean_cue`).

Measured on the coding set with cues written blind, from the memories alone, by an agent
following the skill: vector channel hit@10 79.6 → 90.1 (README, Benchmarks).
"""

from __future__ import annotations

from typing import Any, Mapping, Sequence

CUE_KEY = "when"
"""The metadata key that holds an entry's recall cue."""

CUE_BY_KEY = "when_by"
"""The metadata key naming the model that wrote the cue (absent when the agent wrote it)."""

MAX_CUE_CHARS = 500
"""A cue is one line of situations, not a second memory."""

CUE_DISCOUNT = 0.06
"""How much less a cue's cosine counts than the same cosine of the memory's text (MiniLM's scale;
``MARGIN_SCALE`` in :mod:`crib_plugin.read.gate.levels` carries it to other embedders). A cue
names situations in general words, so it sits nearer every prompt. Chosen on the coding set's dev
split: 0 / 0.03 / 0.06 / 0.10 gave precision 64.5 / 67.7 / 69.8 / 69.5 at hit 81.9 / 81.9 / 80.7 /
80.7 and silence 68.8 / 75.0 / 81.2 / 81.2."""


def cue_space_key(embedder_key: str) -> str:
    """The vector-space key of cues embedded by ``embedder_key``'s model.

    Prefixed (not suffixed) so no space of a model named like the embedder is mistaken for it:
    the read-ahead in ``recall.read_ahead`` picks the content space by its ``name:`` prefix."""
    return f"{CUE_KEY}:{embedder_key}"


def cue_of(metadata: Mapping[str, Any] | None) -> str | None:
    """The entry's cue, or ``None`` when it has none (or a value that is not text)."""
    value = metadata.get(CUE_KEY) if isinstance(metadata, Mapping) else None
    return value.strip() or None if isinstance(value, str) else None


def with_cue(metadata: Mapping[str, Any], cue: str | None, by: str | None = None) -> dict[str, Any]:
    """A copy of ``metadata`` whose cue is ``cue`` (written by the model ``by``, when given); an
    empty or ``None`` cue leaves none. The one place a cue is put into metadata."""
    out = {k: v for k, v in metadata.items() if k not in (CUE_KEY, CUE_BY_KEY)}
    if cue:
        out[CUE_KEY] = cue
        if by:
            out[CUE_BY_KEY] = by
    return out


def embed_cues(memory: Any, cues: Sequence[str | None], notes: list[str]) -> list[Any] | None:
    """Vectors of the cues given (``None`` where there is none); ``None`` when the embedder failed.
    ``memory`` is the ``Memory`` facade (its ``embed_texts``); not imported, so this module stays a leaf."""
    present = [c for c in cues if c]
    if not present:
        return [None] * len(cues)
    vectors = memory.embed_texts(present, [None] * len(present), notes)
    if vectors is None:
        return None
    found = iter(vectors)
    return [next(found) if c else None for c in cues]


def evidence_text(entry: Any, limit: int | None = None) -> str:
    """The words an entry's per-entry evidence is read from: its content (the first ``limit``
    characters), its type and its cue — a task that shares the cue's words ("tests", "migration")
    bears on the memory as much as one that shares the memory's."""
    cue = cue_of(getattr(entry, "metadata", None))
    content = entry.content if limit is None else entry.content[:limit]
    return f"{content}\n{entry.type}" + (f"\n{cue}" if cue else "")
