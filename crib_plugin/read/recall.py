"""The pipeline's first three stages (:mod:`crib_plugin.read.pipeline` runs them in order):
*query* → *channel candidates* → *fused*.

Each takes a :class:`~crib_plugin.core.records.Retrieval` and returns a new one carrying every
channel's own ranking, what each floor dropped and per-stage timings, so ``--explain`` can show why
a memory was (or was not) injected.
"""

from __future__ import annotations

import time
from dataclasses import replace
from typing import TYPE_CHECKING, Iterable, Sequence

from ..core.authorship import readable_entries
from ..core.cues import cue_space_key
from ..core.errors import ConfigError, CribError, StoreUnavailable
from ..core.limits import bound_prompt
from ..core.records import ChannelResult, Fact, Hit, Retrieval, fresh
from ..plugins.trace import swallowed
from . import prefetch
from .fusion import fuse
from .query import prepare
from .rerank import MMR_DEPTH
from .temporal import adjust_hits

if TYPE_CHECKING:  # pragma: no cover
    from ..plugins.contracts import MemoryLike  # the protocol: no import of the facade above

CANDIDATES = 50  # how deep each channel ranks before fusion


def run_channel(memory: "MemoryLike", name: str, query, limit: int) -> ChannelResult:  # type: ignore[no-untyped-def]
    """Run one channel; a failure becomes ``ran=False`` with its reason — except a store that
    stopped answering (:class:`StoreUnavailable`), which would otherwise read as "nothing matched"."""
    channel = memory.registry.channels[name]
    started = time.perf_counter()
    try:
        result = channel.search(memory, query, limit)
    except StoreUnavailable:  # the store itself failed: that is no "nothing matched" (the caller says so)
        raise
    except CribError as exc:
        result = ChannelResult(channel=name, ran=False, note=str(exc))
    except Exception as exc:  # a third-party channel's bug must not break retrieval
        swallowed(f"channel {name!r}", exc)
        result = ChannelResult(channel=name, ran=False, note=f"{type(exc).__name__}: {exc}")
    result.seconds = time.perf_counter() - started
    return result


def select_channels(memory: "MemoryLike", names: Sequence[str] | None) -> list[str]:
    names = list(names or memory.settings.channels or memory.registry.channels)
    unknown = [n for n in names if n not in memory.registry.channels]
    if unknown:
        known = ", ".join(sorted(memory.registry.channels))
        raise ConfigError(f"unknown channel {', '.join(unknown)} (available: {known})")
    return names


def query_stage(text: str) -> Retrieval:
    """Stage 1, *query*: the prompt prepared once (keywords, full-text expression, CJK), its length
    bounded so its cost is bounded too. Returns a retrieval holding only the query."""
    started = time.perf_counter()
    query = prepare(bound_prompt(text))
    return Retrieval(query=query, timings={"prepare": time.perf_counter() - started})


def candidates_stage(memory: "MemoryLike", asked: Retrieval, channels: Sequence[str] | None = None,
                     candidates: int = CANDIDATES) -> Retrieval:
    """Stage 2, *channel candidates*: every selected channel's own ranking of the query (floors marked,
    not applied), reported in the selected order whatever order they ran in."""
    retrieval = fresh(asked)
    query = retrieval.query
    names = select_channels(memory, channels)
    results: dict[str, ChannelResult] = {}
    ahead = False
    for name in sorted(names, key=lambda n: _needs_embedding(memory, n)):
        if not ahead and _needs_embedding(memory, name):
            # the first channel that needs the embedding may wait for the prefetch worker:
            # meanwhile, read ahead what the reranker will need for the hits found so far
            ahead = True
            read_ahead(memory, _rerank_pool(results.values()), query.text)
        results[name] = run_channel(memory, name, query, candidates)
    for name in names:
        result = results[name]
        retrieval.channels.append(result)
        retrieval.timings[name] = result.seconds
        for hit in result.hits:
            if not hit.passed_floor:
                retrieval.dropped.append((hit.entry_id, f"{name} floor"))
    return retrieval


def _rerank_pool(results: Iterable[ChannelResult]) -> list[int]:
    """The entries the offline reranker is likely to compare: each channel's best hits."""
    pool: dict[int, None] = {}
    for result in results:
        for hit in result.hits[:MMR_DEPTH]:
            if hit.passed_floor:
                pool.setdefault(hit.entry_id, None)
    return list(pool)


def read_ahead(memory: "MemoryLike", entry_ids: Sequence[int], text: str) -> None:
    """Use the time a prefetch worker is still embedding the prompt: read ahead what the steps after
    fusion need and the vector does not decide (the gate's term statistics, the hits' stored vectors
    for the reranker); hand the worker the side index's searches, the content space's and the recall
    cues' (a store whose memories have cues searches both for every prompt).

    Does nothing in a warm process (no worker) or once the worker has answered. Vectors are read
    ahead only from the store's one space for this embedder (with several, none is safe). The
    candidates stage calls it before the first channel that waits for the embedding."""
    embedder = memory.embedder() if memory.embedder_loaded else None
    if not (isinstance(embedder, prefetch.PrefetchedEmbedder) and embedder.pending):
        return
    try:
        prefix = f"{memory.embedder_name()}:"
        spaces = memory.store.vector_spaces()
        tables = [table for key, (table, _dim) in spaces.items() if key.startswith(prefix)]
        cues = spaces.get(cue_space_key(memory.embedder_key()))
        prefetch.search_ahead(memory.store, embedder, tables + ([cues[0]] if cues else []))  # run by the worker
        # deferred: the select stage (relevance gate, rerank, per-entry cut), loaded here while the worker
        # embeds rather than after its answer; the SessionStart hook never selects
        from .selection import term_weights
        term_weights(memory, text)
        if len(tables) == 1:
            memory.store.prefetch_vectors(tables[0], entry_ids)
    except CribError:  # reading ahead is an optimisation: the steps after fusion say what failed
        pass


def _needs_embedding(memory: "MemoryLike", name: str) -> bool:
    """Channels that wait for the query embedding run last: in a cold process it is still being
    computed by the prefetch worker (:mod:`crib_plugin.read.prefetch`) while the others run."""
    return bool(getattr(memory.registry.channels[name], "needs_embedding", False))


def fused_stage(memory: "MemoryLike", found: Retrieval, *, only: Sequence[str] | None = None) -> Retrieval:
    """Stage 3, *fused*: the channels' rankings fused into one list of hits (the entries this
    project may read), adjusted for time and type, with the facts the channels matched.

    ``only`` restricts fusion to some of the channels that ran — the evaluation uses it to score
    every channel alone and fused from one run of each channel.
    """
    retrieval = fresh(found)
    mark = time.perf_counter()
    results = [r for r in retrieval.channels if only is None or r.channel in only]
    fused = fuse(results, weights=memory.channel_weights())
    entries = readable_entries(memory.store, [f.entry_id for f in fused], memory.settings.projects)
    hits = [Hit(entries[f.entry_id], f.score, f.channels, f.evidence) for f in fused if f.entry_id in entries]
    retrieval = adjust_hits(memory, replace(retrieval, hits=hits))  # time range boost, newer first on near-ties, successors first
    facts: dict[int, Fact] = {}
    for result in results:
        for fact in result.facts:
            facts.setdefault(fact.id, fact)
    retrieval.timings["fuse"] = time.perf_counter() - mark
    return replace(retrieval, facts=sorted(facts.values(), key=lambda f: -f.score))
