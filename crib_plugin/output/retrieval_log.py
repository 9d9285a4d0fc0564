"""Opt-in JSONL log of every retrieval, for reviewing later what was injected and why.

Off unless ``CRIB_LOG=/path/to/retrievals.jsonl`` is set. Each retrieval that is rendered (``crib
retrieve``, the Claude Code hook, ``Memory.retrieve``) appends one JSON object on one line:

``time``         when (ISO UTC)
``prompt``       the prompt text — or ``prompt_sha256`` instead with ``CRIB_LOG_PROMPTS=hash``, or
                 neither with ``CRIB_LOG_PROMPTS=none`` (prompts can hold secrets)
``keywords``, ``time_range``   what the query parser made of it
``search_type``  the channels that ran, e.g. ``"facts+fts+vector"``
``channels``     per channel: ``name``, ``ran``, ``note``, ``ms``, ``floor_dropped`` and ``top``
                 (its best :data:`TOP_PER_CHANNEL` hits as ``{"id", "rank", "score", "floor"}``)
``kept``         the injected entries, best first: ``{"id", "score", "channels"}``
``facts``        ids of the injected facts
``dropped``      ``{"id", "reason"}`` — floors, budget, already injected this session
``notes``        ``{"id", "note"}`` — time boosts, near-ties, corrections, reranking (id 0 = the
                 whole retrieval)
``timings_ms``   per stage
``bytes``        size of the injected block in UTF-8 bytes (0 = nothing injected)

Writing the line never fails a retrieval: any error (unwritable path, full disk) is swallowed.
One ``write`` of one line per retrieval on a file opened for appending, so concurrent processes do
not interleave within a line on local file systems.

Reading it with ``jq``::

    jq -c '{time, prompt, bytes, kept: [.kept[].id]}' retrievals.jsonl     # what was injected
    jq -c 'select(.bytes == 0) | .prompt' retrievals.jsonl                # prompts that got nothing
    jq -c '.dropped[] | select(.reason == "budget")' retrievals.jsonl     # what the budget cut
    jq -c '.channels[] | {name, ms}' retrievals.jsonl                     # channel latency
    jq -s 'map(.timings_ms | add) | add / length' retrievals.jsonl         # mean total ms
"""

from __future__ import annotations

import hashlib
import json
import os
from pathlib import Path
from typing import Any

from ..core.config import get_settings
from ..core.records import Retrieval
from ..core.timeutil import now_iso

__all__ = ["log_retrieval", "log_record", "TOP_PER_CHANNEL"]

TOP_PER_CHANNEL = 10
"""How many of each channel's hits a log line keeps."""


def _prompt_fields(text: str) -> dict[str, Any]:
    mode = get_settings().log_prompts
    if mode == "hash":
        return {"prompt_sha256": hashlib.sha256(text.encode("utf-8")).hexdigest()}
    if mode == "none":
        return {}
    return {"prompt": text}


def log_record(retrieval: Retrieval, block: str) -> dict[str, Any]:
    """The JSON-ready record for one retrieval whose rendered block is ``block``."""
    query = retrieval.query
    return {
        "time": now_iso(),
        **_prompt_fields(query.text),
        "keywords": list(query.keywords),
        "time_range": list(query.time_range) if query.time_range else None,
        "search_type": retrieval.search_type,
        "channels": [
            {
                "name": result.channel,
                "ran": result.ran,
                "note": result.note,
                "ms": round(result.seconds * 1000, 2),
                "floor_dropped": result.dropped_by_floor,
                "top": [
                    {"id": hit.entry_id, "rank": hit.rank, "score": round(hit.score, 6), "floor": hit.passed_floor}
                    for hit in result.hits[:TOP_PER_CHANNEL]
                ],
            }
            for result in retrieval.channels
        ],
        "kept": [
            {"id": hit.entry.id, "score": round(hit.score, 6), "channels": sorted(hit.channels)}
            for hit in retrieval.hits
        ],
        "facts": [fact.id for fact in retrieval.facts],
        "pointers": [{"id": hit.entry.id, "score": round(hit.score, 6)} for hit in getattr(retrieval, "pointers", [])],
        "dropped": [{"id": entry_id, "reason": reason} for entry_id, reason in retrieval.dropped],
        "notes": [{"id": entry_id, "note": note} for entry_id, note in getattr(retrieval, "notes", [])],
        "timings_ms": {stage: round(seconds * 1000, 2) for stage, seconds in retrieval.timings.items()},
        "bytes": len(block.encode("utf-8")),
    }


def log_retrieval(path: str | Path | None, retrieval: Retrieval, block: str) -> bool:
    """Append one JSON line for ``retrieval`` to ``path``; False (never an exception) when it cannot."""
    if not path:
        return False
    try:
        line = json.dumps(log_record(retrieval, block), ensure_ascii=False, default=str) + "\n"
        target = Path(path).expanduser()
        target.parent.mkdir(parents=True, exist_ok=True)
        fd = os.open(target, os.O_WRONLY | os.O_APPEND | os.O_CREAT, 0o600)
        try:
            os.write(fd, line.encode("utf-8"))
        finally:
            os.close(fd)
        return True
    except Exception:  # the log is a convenience: it must never break a retrieval
        return False
