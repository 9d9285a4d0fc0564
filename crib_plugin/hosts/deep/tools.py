"""The bodies of crib's read-further MCP tools — ``show``, ``manifest``, ``grep`` — and of their CLI twins.

:mod:`crib_plugin.hosts.mcp_server` checks the arguments and hands them here; everything returned is
bounded (one memory at most :data:`SHOW_CHARS` characters, a manifest ``CRIB_DEEP_MANIFEST`` bytes,
a grep a few short excerpts per memory) and redacted like every other read.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any, Sequence

from ...core.config import get_settings
from ...core.cues import cue_of
from ...scopes import open_scope
from ...text.redact import redact_for_render
from ...write.manage import history
from .grep import Term, confirmed, grep
from .manifest import build_manifest, snippet

SHOW_CHARS = 6_000
"""Characters of one memory ``show`` returns (a longer one is cut, saying so)."""


def _bounded(text: str, limit: int = SHOW_CHARS) -> str:
    if len(text) <= limit:
        return text
    return text[:limit] + f"\n… [cut: {len(text) - limit} more characters; `crib show ID` prints all]"


def _heading(row: dict[str, Any]) -> str:
    return f"[{row['id']} · {row['created_at'][:10]} · {row['type']}]"


def show_text(entry_id: int, scope: str = "project", cwd: Path | None = None) -> str:
    """One memory in full (bounded), as text: a superseded one comes with its current successor first."""
    with open_scope(scope, create=False, cwd=cwd, readonly=True) as memory:
        chain = history(memory, entry_id)  # redacted rows, oldest first
    asked = next(row for row in chain if row["id"] == entry_id)
    current = chain[-1]
    lines = [f"memory {entry_id} ({scope}, {asked['type']}, {asked['created_at'][:10]})"]
    if current["id"] != entry_id:
        lines[0] += f" — superseded by {current['id']}: the current text comes first."
        lines += [f"{_heading(current)} (current)", _bounded(current["content"]), ""]
        lines.append(f"{_heading(asked)} (superseded)")
    else:
        lines[0] += ":"
    lines.append(_bounded(asked["content"]))
    cue = cue_of(asked["metadata"])
    if cue:
        lines.append(f"comes back when: {cue}")
    older = [row["id"] for row in chain if row["id"] != entry_id and row["id"] != current["id"]]
    if older:
        lines.append("history: " + ", ".join(str(i) for i in older))
    return "\n".join(lines)


def _superseded(hits: Sequence[dict[str, Any]], cwd: Path | None) -> dict[tuple[str, int], int]:
    """(scope, id) → the id that superseded it, for the hits a correction replaced."""
    out: dict[tuple[str, int], int] = {}
    for scope in dict.fromkeys(str(h.get("scope") or "project") for h in hits):
        ids = [int(h["id"]) for h in hits if (h.get("scope") or "project") == scope]
        with open_scope(scope, create=False, cwd=cwd, readonly=True) as memory:
            out.update(((scope, old), new) for old, new in memory.store.superseded(ids).items())
    return out


def search_manifest(hits: Sequence[dict[str, Any]], max_bytes: int, cwd: Path | None = None) -> dict[str, Any]:
    """``crib search`` hits as manifest rows — id, scope, date, type, score, snippet, superseded
    marker; never a whole memory — cut to about ``max_bytes`` of JSON (``left_off`` counts the rest)."""
    replaced = _superseded(hits, cwd) if hits else {}
    rows: list[dict[str, Any]] = []
    size = 40
    for n, hit in enumerate(hits):
        scope = str(hit.get("scope") or "project")
        row = {"id": hit["id"], "scope": scope, "date": str(hit["created_at"])[:10], "type": hit["type"],
               "score": hit.get("score"), "snippet": snippet(str(hit["content"]))}
        if (scope, hit["id"]) in replaced:
            row["superseded_by"] = replaced[(scope, hit["id"])]
        size += len(json.dumps(row, ensure_ascii=False)) + 2
        if size > max_bytes:
            return {"hits": rows, "left_off": len(hits) - n}
        rows.append(row)
    return {"hits": rows, "left_off": 0}


def manifest_json(question: str, scope: str = "all", cwd: Path | None = None) -> dict[str, Any]:
    """The deep-recall manifest for ``question`` (bounded by ``CRIB_DEEP_MANIFEST``)."""
    manifest = build_manifest(question, scope=scope, cwd=cwd)
    data = manifest.to_json(get_settings().deep_manifest)
    data["next"] = "grep(ids, terms) to confirm terms in the best ones; show(id) to read one in full"
    return data


def grep_json(ids: Sequence[int], words: Sequence[str], scope: str = "project", cwd: Path | None = None) -> dict[str, Any]:
    """Which of ``words`` each memory's own text (and recall cue) confirms, with short excerpts."""
    terms = [t for t in (Term.of(w) for w in words) if t is not None]
    with open_scope(scope, create=False, cwd=cwd, readonly=True) as memory:
        entries = memory.store.get_entries(list(dict.fromkeys(ids)))
    out: list[dict[str, Any]] = []
    for entry_id in dict.fromkeys(ids):
        entry = entries.get(entry_id)
        if entry is None:
            continue
        text = redact_for_render(f"{entry.content}\n{cue_of(entry.metadata) or ''}")
        found = confirmed(text, terms)
        out.append({"id": entry_id, "date": entry.created_at[:10], "type": entry.type,
                    "confirms": [t.text for t in found], "missing": [t.text for t in terms if t not in found],
                    "excerpts": [m.excerpt for m in grep(text, found)]})
    return {"results": out, "not_found": [i for i in dict.fromkeys(ids) if i not in entries],
            "terms": [t.text for t in terms]}


__all__ = ["show_text", "search_manifest", "manifest_json", "grep_json", "SHOW_CHARS"]
