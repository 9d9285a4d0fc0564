"""MADial-Bench: a user's archive of remembered events and dialogues in which the assistant should
recall one of them — a public memory-recall set with labelled relevant memories (MIT).

Source: https://github.com/hejunqing/MADial-Bench (``data/en/MADial-Bench-en-memory.json``: 160
memories, one JSON object a line; ``data/en/MADial-Bench-en-dialogue.json``: 160 dialogues, each
with the turn to be produced, ``test-turn``, and the archive's memories it should draw on,
``relevant-id``). Read where it lies at run time (``--data DIR`` or ``CRIB_MADIAL``: the folder
holding both files); never copied into the repository.

Protocol: one store holding the whole archive, one entry per memory (no thread: the memories are
separate events, not turns of one dialogue) (``"{event}"``, dated with
its ``time``, its scene and emotion in metadata); the query is what the user said in the dialogue
before the first test turn (the user's lines, joined); relevant = ``relevant-id``. Each dialogue
is a conversation for the dev/test split.
"""

from __future__ import annotations

import json
import os
import re
from pathlib import Path

from .datapaths import shared_eval_path
from .locomo import Conversation, Question, Turn

ENV = "CRIB_MADIAL"
SOURCE = "https://github.com/hejunqing/MADial-Bench (data/en/)"
SAMPLE_ID = "madial-en"
CATEGORIES = {1: "user 1", 2: "user 2"}  # a question's category is its dialogue's user
MEMORY_FILE = "MADial-Bench-en-memory.json"
DIALOGUE_FILE = "MADial-Bench-en-dialogue.json"


def default_data_path() -> Path:
    """``CRIB_MADIAL``, else ``../shared/eval/madial/data/en`` beside the checkout."""
    return shared_eval_path(os.environ.get(ENV), "madial/data/en")


def _lines(path: Path) -> list[dict]:
    return [json.loads(line) for line in path.read_text(encoding="utf-8").splitlines() if line.strip()]


def user_context(dialogue: list[str], test_turn: int) -> str:
    """The user's lines before ``test_turn``, without speaker tags or quotes."""
    said = []
    for line in dialogue[:test_turn]:
        match = re.match(r"<([^>]+)>:\s*(.*)", line.strip())
        if match and match.group(1) != "Assistant":
            said.append(match.group(2).strip().strip('"'))
    return " ".join(said)


def load(path: Path | None = None) -> list[Conversation]:
    """The archive as one conversation's turns, every dialogue one question (``category`` = its user)."""
    path = path or default_data_path()
    if not (path / MEMORY_FILE).exists() or not (path / DIALOGUE_FILE).exists():
        from crib_plugin.core.errors import ConfigError

        raise ConfigError(f"MADial-Bench data not found at {path} (set {ENV} or pass --data; get it from {SOURCE})")
    turns: list[Turn] = []
    for row in _lines(path / MEMORY_FILE):
        for key, memory in row.items():
            created = f"{memory.get('time', '2023-01-01')}T12:00:00Z"
            turns.append(Turn(str(key), "memory", str(memory["event"]), created, 0))
    known = {t.dia_id for t in turns}
    questions: list[Question] = []
    for number, row in enumerate(_lines(path / DIALOGUE_FILE)):
        test_turns = [int(t) for t in row.get("test-turn") or []]
        evidence = {str(i) for i in row.get("relevant-id") or []} & known
        query = user_context(row["dialogue"], min(test_turns)) if test_turns else ""
        if evidence and query:
            questions.append(Question(query, evidence, int(row.get("user-id", 0)), key=f"dialogue-{number}"))
    return [Conversation(SAMPLE_ID, turns, questions, threads=False)]  # an archive of separate memories, not a dialogue
