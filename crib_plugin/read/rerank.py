"""Rerank fused candidates — only when they do not all fit the budget — without touching their text.

When every fused hit fits in the character budget and ``max_items`` the order does not matter (all
of them are injected), so nothing runs. When they do not fit, the order decides what is injected,
and one of two rerankers sets it:

* **A model reranker** (Ollama: ``CRIB_RERANK_MODEL=<model>`` or ``CRIB_RERANK=ollama``; or any
  reranker a plugin registers, ``CRIB_RERANK=<name>``). The top :data:`MODEL_DEPTH` candidates are
  graded pointwise (0–10, JSON schema, temperature 0) and ordered by grade, then by fused score;
  the rest follow in fused order. The model only *reads* the candidates: the ``Hit`` objects are
  reordered, their entries are never replaced or edited (the original plugin let a model replace
  the whole block with its own prose). Grading stops at :data:`DEADLINE` seconds overall
  (``CRIB_RERANK_DEADLINE``). Any error or a missed deadline fails open: the fused order is kept and
  a note says why. When Ollama does not answer or lacks the model, the offline reranker runs.
* **Offline (default): gentle MMR plus a recency prior.** Maximal marginal relevance (Carbonell &
  Goldstein, 1998) picks, at each step, the candidate maximising
  ``λ·relevance − (1−λ)·redundancy`` with ``λ =`` :data:`MMR_LAMBDA`. Relevance is the fused evidence
  (:mod:`crib_plugin.read.fusion`) relative to the best, plus :data:`RECENCY_WEIGHT` × the candidate's recency (newest 1, oldest 0).
  Redundancy is the candidate's similarity to what is already picked — cosine of the stored vectors
  when the store has them, word-set Jaccard otherwise — counted only *above*
  :data:`DUPLICATE_SIMILARITY`: classic MMR (threshold 0) pushes down every memory that shares a
  topic with a better one, which on LoCoMo costs recall (turns of one conversation are all alike);
  above the threshold it only removes near-duplicates, which waste budget by saying the same
  thing twice. The measured numbers are in the README and in ``bench/locomo.py``'s table.

Settings: ``CRIB_RERANK`` = ``auto`` (default: the Ollama model when ``CRIB_RERANK_MODEL`` is set,
else offline), ``ollama`` / a plugin reranker's name, ``mmr`` (offline), or ``off`` (keep fused order).
"""

from __future__ import annotations

import time
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any, Sequence

from ..core.config import get_settings, load_settings
from ..core.deadline import call_within, capped
from ..core.limits import MAX_SCAN_CHARS
from ..text.words import STOP_WORDS, split_words
from .fusion import fit_budget

if TYPE_CHECKING:  # pragma: no cover
    from ..core.records import Hit, Retrieval
    from ..plugins.contracts import MemoryLike  # the protocol: no import of the facade above

__all__ = [
    "rerank_candidates",
    "over_budget",
    "mmr_order",
    "reranker_choice",
    "MODEL_DEPTH",
    "MMR_LAMBDA",
    "DUPLICATE_SIMILARITY",
    "RECENCY_WEIGHT",
]

MODEL_DEPTH = 20
"""How many of the best fused candidates a model grades (each grade is one model call)."""

MMR_DEPTH = 60
"""How many of the best fused candidates the offline reranker orders; the rest keep fused order."""

MMR_LAMBDA = 0.7
"""Relevance vs redundancy in MMR."""

DUPLICATE_SIMILARITY = 0.95
"""Similarity above which a candidate counts as redundant with one already picked (0 = classic MMR)."""

RECENCY_WEIGHT = 0.01
"""Relevance bonus for the newest candidate (linear in recency rank down to 0 for the oldest): a
tie-breaker between nearly equal candidates, not a decay that buries old memories."""

DEADLINE = 3.0
"""Seconds a model reranker may take in all, before the fused order is kept instead."""



@dataclass
class RerankReport:
    """What the reranker did: the method used and notes (``(entry_id, text)``; 0 = the retrieval)."""

    method: str = "none"
    notes: list[tuple[int, str]] = field(default_factory=list)


# -- when and which ------------------------------------------------------------------------------


def over_budget(hits: Sequence["Hit"], budget: int, max_items: int | None, overhead: int = 300) -> bool:
    """Whether ``hits`` do not all fit (more than ``max_items`` or over ``budget`` characters)."""
    if max_items is not None and len(hits) > max_items:
        return True
    _kept, dropped = fit_budget([h.entry.content for h in hits], budget, overhead=overhead, max_items=max_items)
    return bool(dropped)


def reranker_choice(environ: dict[str, str] | None = None) -> str:
    """``"off"``, ``"mmr"``, or the name of a model reranker, from ``CRIB_RERANK`` / ``CRIB_RERANK_MODEL``."""
    settings = get_settings() if environ is None else load_settings(environ)
    wanted = settings.rerank
    if wanted in ("off", "none", "no", "0", "false"):
        return "off"
    if wanted in ("mmr", "offline"):
        return "mmr"
    if wanted == "auto":
        return "ollama" if settings.rerank_model else "mmr"
    return wanted


def _deadline() -> float:
    """``CRIB_RERANK_DEADLINE``, or less when the running hook's own deadline comes sooner."""
    return capped(float(get_settings().rerank_deadline))


def _model_reranker(memory: "MemoryLike", name: str, report: RerankReport) -> Any | None:
    """The model reranker to use, or None (with a note) when it is not available right now."""
    if name == "ollama":
        # deferred: the Ollama probe (socket, ≈ 6 ms with -X importtime), only when CRIB_RERANKER=ollama:
        # the default reranker is offline and `crib retrieve` never loads it
        from ..models.ollama_probe import DEFAULT_RERANK_MODEL, ollama_has_model

        model = get_settings().rerank_model or DEFAULT_RERANK_MODEL
        if not ollama_has_model(model):
            report.notes.append((0, f"rerank: Ollama model {model} not answering; offline MMR instead"))
            return None
    reranker, why = memory.registry.try_make("rerankers", name)
    if reranker is None:
        report.notes.append((0, f"rerank: reranker {name!r} unavailable ({why}); offline MMR instead"))
    return reranker


# -- the model path --------------------------------------------------------------------------------


def _grade(reranker: Any, query: str, texts: list[str], deadline: float) -> list[float]:
    """Grades for ``texts`` from ``reranker.score``, in batches, within ``deadline`` seconds overall.

    Batches are as large as the reranker's worker pool, so each batch takes about one call's time
    and the deadline is checked between them; a batch still running at the deadline is abandoned
    (in a daemon thread) and raises TimeoutError.
    """
    batch = max(1, int(getattr(reranker, "workers", 4) or 4))
    started = time.monotonic()
    grades: list[float] = []
    for offset in range(0, len(texts), batch):
        left = deadline - (time.monotonic() - started)
        if left <= 0:
            raise TimeoutError(f"no grades within {deadline:g}s")
        chunk = texts[offset:offset + batch]

        def score(chunk: list[str] = chunk) -> list[float]:
            return list(reranker.score(query, chunk))

        try:
            found = call_within(left, score, name="crib-rerank")
        except TimeoutError:
            raise TimeoutError(f"no grades within {deadline:g}s") from None
        chunk_grades = [float(g) for g in found]
        if len(chunk_grades) != len(chunk):
            raise ValueError(f"reranker returned {len(chunk_grades)} grades for {len(chunk)} texts")
        grades.extend(chunk_grades)
    return grades


def model_order(reranker: Any, query: str, hits: list["Hit"], report: RerankReport,
                *, depth: int = MODEL_DEPTH, deadline: float | None = None) -> list["Hit"]:
    """The top ``depth`` hits ordered by the model's grade (then fused order), the rest after.

    Fails open: on any error the fused order comes back unchanged, with a note.
    """
    top = hits[:depth]
    name = getattr(reranker, "model", None) or getattr(reranker, "name", type(reranker).__name__)
    try:
        grades = _grade(reranker, query, [h.entry.content[:MAX_SCAN_CHARS] for h in top], _deadline() if deadline is None else deadline)
    except Exception as exc:
        report.method = "fused order (reranker failed)"
        report.notes.append((0, f"rerank failed open, fused order kept: {type(exc).__name__}: {exc}"))
        return list(hits)
    order = sorted(range(len(top)), key=lambda i: (-grades[i], i))  # fused order breaks equal grades
    for i in order:
        report.notes.append((top[i].entry.id, f"rerank grade {grades[i]:g}/10 by {name} (was #{i + 1})"))
    report.method = f"model {name}"
    return [top[i] for i in order] + list(hits[depth:])


# -- the offline path ------------------------------------------------------------------------------


def _stored_similarities(memory: "MemoryLike", ids: Sequence[int]) -> tuple[dict[int, int], list[list[float]]]:
    """Cosine similarities of the stored vectors of ``ids`` in the store's active space.

    Returns ``(position, sims)``: each id that has a vector maps to its row in ``sims``
    (``({}, [])`` when none do). The arithmetic runs inside SQLite (sqlite-vec), so the
    per-prompt process never imports numpy.
    """
    try:
        space = memory.store.vector_space(memory.embedder_key())
        if space is None or not ids:
            return {}, []
        table, _dim = space
        have, sims = memory.store.vector_similarities(table, ids)
    except Exception:  # no embedder, no sqlite-vec: the word fallback still works
        return {}, []
    return {entry_id: k for k, entry_id in enumerate(have)}, sims


def _words(text: str) -> frozenset[str]:
    """The content words of ``text`` (crib's one tokenizer, stop words out), for word overlap."""
    return frozenset(w for w in split_words(text) if w not in STOP_WORDS)


def _jaccard(a: frozenset[str], b: frozenset[str]) -> float:
    if not a or not b:
        return 0.0
    return len(a & b) / len(a | b)


def similarity_matrix(memory: "MemoryLike | None", hits: Sequence["Hit"]) -> tuple[list[list[float]], str]:
    """Pairwise similarity of ``hits``: vector cosine where both have stored vectors, else word Jaccard.

    A plain ``n × n`` list of lists (``sims[i][j]``; 1.0 on the diagonal) and its kind:
    ``"cosine"``, ``"jaccard"`` or ``"cosine+jaccard"``. Pure Python: ``n`` is at most
    :data:`MMR_DEPTH`, and the cosines come from SQLite.
    """
    n = len(hits)
    ids = [h.entry.id for h in hits]
    position, stored = _stored_similarities(memory, ids) if memory is not None else ({}, [])
    sims = [[0.0] * n for _ in range(n)]
    have = [i for i, entry_id in enumerate(ids) if entry_id in position]
    for i in have:
        row = stored[position[ids[i]]]
        for j in have:
            sims[i][j] = row[position[ids[j]]]
    missing = set(range(n)) - set(have)
    if missing:
        words = [_words(h.entry.content[:MAX_SCAN_CHARS]) for h in hits]  # bounded cost per entry
        for i in range(n):
            for j in range(i + 1, n):
                if i in missing or j in missing:
                    sims[i][j] = sims[j][i] = _jaccard(words[i], words[j])
    for i in range(n):
        sims[i][i] = 1.0
    kind = "cosine" if len(have) == n else ("jaccard" if not have else "cosine+jaccard")
    return sims, kind


def _mmr_relevance(hits: list["Hit"], recency: float) -> list[float]:
    """Fused evidence scaled to 0..1, plus ``recency`` times each hit's rank in time (0 oldest, 1 newest).

    The evidence (:attr:`~crib_plugin.core.records.Hit.weight`), not the score that ordered the
    hits: :data:`MMR_LAMBDA` and :data:`DUPLICATE_SIMILARITY` weigh relevance on that scale."""
    scores = [max(0.0, float(h.weight)) for h in hits]
    top = max(scores) or 1.0
    relevance = [s / top for s in scores]
    if recency:
        times = sorted({h.entry.created_at for h in hits})
        if len(times) > 1:
            position = {t: i / (len(times) - 1) for i, t in enumerate(times)}
            relevance = [r + recency * position[h.entry.created_at] for r, h in zip(relevance, hits)]
    return relevance


def _mmr_penalties(hits: list["Hit"], sims: Sequence[Sequence[float]], threshold: float) -> list[list[tuple[int, float]]]:
    """For each column ``j``, the rows ``i`` whose similarity is above ``threshold``, with their penalty.

    Only pairs above the threshold are penalised (clipped to 0..1). A correction and what it
    corrects look alike, yet both must show: no pair involving a correction is penalised.
    """
    n = len(hits)
    scale = max(1e-9, 1.0 - threshold)
    correction = [h.entry.type == "correction" for h in hits]
    penalties: list[list[tuple[int, float]]] = [[] for _ in range(n)]
    for i in range(n):
        if correction[i]:
            continue
        row = sims[i]
        for j in range(n):
            similarity = float(row[j])
            if similarity > threshold and not correction[j]:
                penalties[j].append((i, min(1.0, (similarity - threshold) / scale)))
    return penalties


def mmr_order(
    hits: list["Hit"],
    sims: Sequence[Sequence[float]],
    report: RerankReport,
    *,
    lam: float = MMR_LAMBDA,
    threshold: float = DUPLICATE_SIMILARITY,
    recency: float = RECENCY_WEIGHT,
) -> list["Hit"]:
    """Greedy MMR over ``hits`` (best fused first) with redundancy counted above ``threshold``.

    ``sims`` is any square matrix indexable as ``sims[i][j]`` (a list of lists from
    :func:`similarity_matrix`, or a 2-D numpy array). Deterministic: equal objectives go to the
    better fused rank. A ``correction`` is never redundant with anything (nor anything with it):
    it looks like the entry it corrects, and the agent must see both.
    """
    n = len(hits)
    if n < 2:
        return list(hits)
    relevance = _mmr_relevance(hits, recency)
    penalties = _mmr_penalties(hits, sims, threshold)
    chosen: list[int] = []
    picked = [False] * n
    redundancy = [0.0] * n
    nearest = [-1] * n
    left = list(range(n))
    while left:
        objective = [lam * relevance[i] - (1.0 - lam) * redundancy[i] for i in left]
        best = max(range(len(left)), key=lambda k: (objective[k], -left[k]))
        pick = left.pop(best)
        if redundancy[pick] > 0 and nearest[pick] >= 0:
            twin = hits[nearest[pick]]
            report.notes.append((
                hits[pick].entry.id,
                f"near-duplicate of entry {twin.entry.id} (similarity {float(sims[pick][nearest[pick]]):.3f}): moved down",
            ))
        chosen.append(pick)
        picked[pick] = True
        for i, penalty in penalties[pick]:
            if not picked[i] and penalty > redundancy[i]:
                redundancy[i] = penalty
                nearest[i] = pick
    return [hits[i] for i in chosen]


# -- entry point -----------------------------------------------------------------------------------


def rerank_candidates(
    memory: "MemoryLike",
    retrieval: "Retrieval",
    budget: int,
    max_items: int | None,
    *,
    overhead: int = 300,
) -> list["Hit"]:
    """``retrieval.hits`` in the order the budget should take them (the same ``Hit`` objects).

    Runs only when the candidates do not all fit; otherwise returns them as they are. Notes go to
    ``retrieval.notes`` and the time to ``retrieval.timings["rerank"]``. Never raises.
    """
    hits = list(retrieval.hits)
    if len(hits) < 2 or not over_budget(hits, budget, max_items, overhead):
        return hits
    started = time.perf_counter()
    report = RerankReport()
    try:
        choice = reranker_choice()
        if choice == "off":
            return hits
        reranker = _model_reranker(memory, choice, report) if choice != "mmr" else None
        if reranker is not None:
            ordered = model_order(reranker, retrieval.query.text, hits, report)
        else:
            pool = hits[:MMR_DEPTH]
            sims, kind = similarity_matrix(memory, pool)
            ordered = mmr_order(pool, sims, report) + hits[MMR_DEPTH:]
            report.method = f"mmr ({kind})"
    except Exception as exc:  # fail open: the fused order is always a valid answer
        report.notes.append((0, f"rerank failed open, fused order kept: {type(exc).__name__}: {exc}"))
        ordered = hits
    finally:
        retrieval.timings["rerank"] = time.perf_counter() - started
    retrieval.notes.extend(report.notes)
    if report.method != "none":
        retrieval.notes.append((0, f"over budget: reranked by {report.method}"))
    return ordered
