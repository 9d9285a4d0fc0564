"""RealMem: long task-oriented conversations between one user and an assistant, with the memory each
answer used — a public multi-session set with turn-level evidence (Apache-2.0).

Source: https://github.com/zhiyuan5986/RealMemBench (``dataset/*_dialogues_256k.json``, ten
personas, ~1,300 turns and ~140 labelled queries each). The data is read where it lies at run time
(``--data DIR`` or ``CRIB_REALMEM``: the folder holding the JSON files); it is never copied into
the repository.

Protocol: one store per persona; one entry per turn, ``"{speaker}: {content}"``, dated with its
session's date. A query is a user turn marked ``is_query``; the answer after it lists
``memory_used`` (a session and a memory point extracted from it), and each memory point names the
turn it was extracted from (``source_turn``, 1-based) — that turn is the evidence. The query's own
turn and the rest of its session are excluded from every ranking (they are its answer, not memory).
A query none of whose memory points resolve to a turn is dropped.
"""

from __future__ import annotations

import json
import os
import re
from pathlib import Path
from typing import Any

from .datapaths import shared_eval_path
from .locomo import Conversation, Question, Turn

ENV = "CRIB_REALMEM"
CATEGORIES: dict[int, str] = {}  # no categories
SOURCE = "https://github.com/zhiyuan5986/RealMemBench (dataset/)"


def default_data_path() -> Path:
    """``CRIB_REALMEM``, else ``../shared/eval/realmem/dataset`` beside the checkout."""
    return shared_eval_path(os.environ.get(ENV), "realmem/dataset")


def _date(value: str) -> str:
    """``"2025-12-25 (Thursday)"`` → ``"2025-12-25T12:00:00Z"``."""
    match = re.match(r"(\d{4}-\d{2}-\d{2})", value or "")
    return f"{match.group(1)}T12:00:00Z" if match else "2025-01-01T12:00:00Z"


def _text(value: Any) -> str:
    """A memory point's content as one comparable string (some points are structured objects)."""
    return value.strip() if isinstance(value, str) else json.dumps(value, sort_keys=True, ensure_ascii=False)


def _source_turn(session: dict[str, Any], point: dict[str, Any]) -> int | None:
    """The index (0-based) of the turn a memory point was extracted from, checked against its snapshot."""
    turns = session["dialogue_turns"]
    snapshot = (point.get("source_content_snapshot") or "")[:60]
    number = point.get("source_turn")
    for index in (number - 1 if isinstance(number, int) else -1, number if isinstance(number, int) else -1):
        if 0 <= index < len(turns) and snapshot and turns[index]["content"][:60] == snapshot:
            return index
    for index, turn in enumerate(turns):
        if snapshot and turn["content"][:60] == snapshot:
            return index
    return None


def load_persona(path: Path) -> Conversation:
    """One persona's file as a conversation of turns and evidence-labelled queries."""
    data = json.loads(path.read_text(encoding="utf-8"))
    sessions = data["dialogues"]
    turns: list[Turn] = []
    points: dict[tuple[str, str], str] = {}  # (session uuid, memory content) → evidence turn id
    for number, session in enumerate(sessions, start=1):
        uuid = session["session_uuid"]
        created = _date(session.get("current_time", ""))
        for index, turn in enumerate(session["dialogue_turns"]):
            turns.append(Turn(f"{uuid}:{index}", turn["speaker"], f"{turn['speaker']}: {turn['content']}", created, number))
        for point in session.get("extracted_memory") or []:
            source = _source_turn(session, point)
            if source is not None:
                points[(point.get("session_uuid") or uuid, _text(point.get("content")))] = f"{uuid}:{source}"
    questions: list[Question] = []
    for session in sessions:
        uuid = session["session_uuid"]
        dialogue = session["dialogue_turns"]
        for index, turn in enumerate(dialogue):
            if not turn.get("is_query") or index + 1 >= len(dialogue):
                continue
            used = dialogue[index + 1].get("memory_used") or []
            evidence = {points[key] for m in used if (key := (m.get("session_uuid", ""), _text(m.get("content")))) in points}
            evidence -= {f"{uuid}:{i}" for i in range(index, len(dialogue))}
            if evidence:
                exclude = {f"{uuid}:{i}" for i in range(index, len(dialogue))}
                questions.append(Question(turn["content"], evidence, 0, exclude=exclude))
    name = str((data.get("_metadata") or {}).get("person_name") or path.stem)
    return Conversation(name, turns, questions)


def load(path: Path | None = None) -> list[Conversation]:
    """Every persona under ``path`` (a folder of ``*_dialogues_*.json``), in name order."""
    path = path or default_data_path()
    files = sorted(path.glob("*_dialogues_*.json")) if path.is_dir() else []
    if not files:
        from crib_plugin.core.errors import ConfigError

        raise ConfigError(f"RealMem data not found at {path} (set {ENV} or pass --data; get it from {SOURCE})")
    return [load_persona(f) for f in files]
