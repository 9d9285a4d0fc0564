"""What each prompt of an agent session was given, and which pointers the agent then opened.

Kept beside the session records (``<database dir>/sessions/``), local and bounded:

* each session's record (``hosts.claude.state``) holds ``prompts``: its last :data:`MAX_PROMPTS`
  prompts, each a :func:`prompt_record` — when, the prompt's first :data:`PROMPT_CHARS` characters
  (redacted; none with ``CRIB_LOG_PROMPTS=hash|none``), the entries and pointers injected with the
  reasons crib had for each, the block's size in characters and estimated tokens;
* ``opened.jsonl`` holds the last :data:`MAX_OPENED` memories an agent opened with the MCP ``show``
  tool (``{"at", "id", "scope"}``): a pointer given at one prompt and opened before the next
  counts as followed.

``crib ui``'s sessions page reads both. Nothing here ever fails its caller: the journal is a view.
"""

from __future__ import annotations

import json
import os
from pathlib import Path
from typing import Any, Sequence

from ..core.records import Retrieval
from ..core.timeutil import now_iso
from ..text.redact import redact_value

MAX_PROMPTS = 30
PROMPT_CHARS = 300
MAX_OPENED = 500
OPENED_FILE = "opened.jsonl"
CHARS_PER_TOKEN = 4  # the usual estimate for English text and code with BPE tokenizers


def estimate_tokens(text: str) -> int:
    """The block's size in tokens, estimated as characters / :data:`CHARS_PER_TOKEN` (rounded up)."""
    return -(-len(text) // CHARS_PER_TOKEN)


def _reasons(retrieval: Retrieval, entry_id: int) -> list[str]:
    notes = [note for i, note in retrieval.notes if i == entry_id]
    for hit in [*retrieval.hits, *retrieval.pointers]:
        if hit.entry.id == entry_id:
            ranks = ", ".join(f"{name} #{ch.rank}" for name, ch in sorted(hit.channels.items()))
            return [f"found by {ranks} (fused score {hit.score:.4f})", *notes]
    return notes


def prompt_record(prompt: str, retrieval: Retrieval | None, block: str, log_prompts: str = "full") -> dict[str, Any]:
    """One prompt's line in the journal: JSON-ready, no memory text (ids and reasons only)."""
    record: dict[str, Any] = {"at": now_iso(), "chars": len(block), "tokens": estimate_tokens(block)}
    if log_prompts not in ("hash", "none"):
        record["prompt"] = redact_value(prompt[:PROMPT_CHARS])
    if retrieval is None:
        record.update(entries=[], pointers=[], facts=0, gate=None)
        return record
    record["entries"] = [{"id": h.entry.id, "scope": h.entry.scope or "", "why": _reasons(retrieval, h.entry.id)} for h in retrieval.hits]
    record["pointers"] = [{"id": h.entry.id, "scope": h.entry.scope or "", "why": _reasons(retrieval, h.entry.id)} for h in retrieval.pointers]
    record["facts"] = len(retrieval.facts)
    gate = retrieval.gate
    record["gate"] = None if gate is None else {"open": bool(gate.open), "reason": str(gate.reason)}
    record["notes"] = [note for i, note in retrieval.notes if i == 0][:10]
    return record


def append_prompt(prompts: Sequence[Any], record: dict[str, Any]) -> list[Any]:
    """``prompts`` with ``record`` added, the oldest dropped beyond :data:`MAX_PROMPTS`."""
    return [*[p for p in prompts if isinstance(p, dict)], record][-MAX_PROMPTS:]


def record_opened(folder: Path, entry_id: int, scope: str) -> None:
    """Note that an agent opened ``entry_id`` (MCP ``show``); keeps the last :data:`MAX_OPENED`."""
    try:
        folder.mkdir(parents=True, exist_ok=True)
        path = folder / OPENED_FILE
        line = json.dumps({"at": now_iso(), "id": int(entry_id), "scope": scope}) + "\n"
        fd = os.open(path, os.O_WRONLY | os.O_APPEND | os.O_CREAT, 0o600)
        try:
            os.write(fd, line.encode("utf-8"))
        finally:
            os.close(fd)
        if path.stat().st_size > MAX_OPENED * 120:  # trim now and then: the file stays small
            lines = path.read_text(encoding="utf-8").splitlines()[-MAX_OPENED // 2:]
            tmp = path.with_suffix(".tmp")
            tmp.write_text("\n".join(lines) + "\n", encoding="utf-8")
            os.replace(tmp, path)
    except (OSError, ValueError):
        pass


def read_opened(folder: Path) -> list[dict[str, Any]]:
    """The opened-memory events, oldest first (empty when none or unreadable)."""
    try:
        text = (folder / OPENED_FILE).read_text(encoding="utf-8")
    except OSError:
        return []
    out = []
    for line in text.splitlines():
        try:
            row = json.loads(line)
        except ValueError:
            continue
        if isinstance(row, dict) and isinstance(row.get("id"), int) and isinstance(row.get("at"), str):
            out.append(row)
    return out


def read_sessions(folder: Path, limit: int = 20) -> list[dict[str, Any]]:
    """The ``limit`` most recently updated session records that hold prompts, newest first, each
    prompt's pointers marked ``opened`` when an agent showed them before the session's next prompt."""
    try:
        files = sorted((p for p in folder.glob("*.json") if not p.name.startswith(".")), key=lambda p: p.stat().st_mtime, reverse=True)
    except OSError:
        return []
    opened = read_opened(folder)
    out = []
    for path in files:
        try:
            data = json.loads(path.read_text(encoding="utf-8"))
        except (OSError, ValueError):
            continue
        prompts = data.get("prompts") if isinstance(data, dict) else None
        if not isinstance(prompts, list) or not prompts:
            continue
        out.append({"id": str(data.get("session_id", path.stem)), "name": path.stem, "updated_at": str(data.get("updated_at", "")),
                    "prompts": mark_opened([p for p in prompts if isinstance(p, dict)], opened)})
        if len(out) >= limit:
            break
    return out


def mark_opened(prompts: list[dict[str, Any]], opened: list[dict[str, Any]]) -> list[dict[str, Any]]:
    """Each pointer gains ``opened``: shown (same id and scope) after its prompt and before the next."""
    for index, prompt in enumerate(prompts):
        start = str(prompt.get("at", ""))
        end = str(prompts[index + 1].get("at", "")) if index + 1 < len(prompts) else "9999"
        for pointer in prompt.get("pointers") or []:
            if isinstance(pointer, dict):
                pointer["opened"] = any(
                    o["id"] == pointer.get("id") and (o.get("scope") or "project") == (pointer.get("scope") or "project")
                    and start <= o["at"] < end for o in opened)
    return prompts
