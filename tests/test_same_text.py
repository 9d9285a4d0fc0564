"""A memory stated again is the same memory (issue 20): ``remember``/``crib write``/``Memory.write``
of a text already stored in the scope returns the existing id, says it is a duplicate, updates its
cue when a new ``when`` is given, and stores no superseding copy — so recall shows it once."""

from __future__ import annotations

import os
import subprocess
import sys
from typing import Any

import anyio
from test_mcp import call, crib_server, session

from crib_plugin.core.cues import cue_of

TEXT = "Chose SQLite for storage: one file, zero dependencies, WAL for concurrent readers."


def test_the_same_text_again_is_a_duplicate_whatever_its_cue_type_or_spacing(memory: Any) -> None:
    first = memory.write(TEXT, metadata={"when": "choosing a database"})
    again = memory.write("  " + TEXT.replace(" ", "  ") + "\n")  # no `when`, other spacing
    assert again == first and memory.last_write.duplicate
    assert memory.write(TEXT, type="decision") == first  # another type: still the same memory
    assert memory.store.count_entries() == 1
    assert cue_of(memory.entry(first).metadata) == "choosing a database"  # no `when` keeps the cue

    assert memory.write(TEXT, metadata={"when": "picking storage for a service"}) == first
    assert cue_of(memory.entry(first).metadata) == "picking storage for a service"
    assert any("cue" in note for note in memory.last_write.notes)
    assert memory.store.superseded([first]) == {}

    block = memory.retrieve("which database did we choose for storage?")
    assert block.count("Chose SQLite for storage") == 1


def test_the_same_words_in_another_conversation_are_another_memory(memory: Any) -> None:
    first = memory.write("Yes! Last May was great.", metadata={"thread": "t1"})
    assert memory.write("Yes! Last May was great.", metadata={"thread": "t2"}) != first
    assert memory.write("Yes! Last May was great.", metadata={"thread": "t1", "when": "trips"}) == first


def test_crib_write_says_it_is_a_duplicate(tmp_path: Any) -> None:
    env = {**os.environ, "PYTHONPATH": str(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))}

    def write(*args: str) -> str:
        return subprocess.run([sys.executable, "-m", "crib_plugin", "write", *args], capture_output=True, text=True, env=env, check=True).stdout

    assert write(TEXT).startswith("stored entry 1")
    assert "entry 1 already stored (the same text)" in write("--when", "choosing a database", TEXT)


def test_remember_over_mcp_returns_the_existing_id(tmp_path: Any) -> None:
    async def scenario() -> tuple[Any, Any, Any]:
        async with session(crib_server(tmp_path)) as client:
            first = await call(client, "remember", text=TEXT, type="decision", when="choosing a database")
            again = await call(client, "remember", text=TEXT, type="decision")
            recalled = await call(client, "recall", query="which database did we choose for storage?")
            return first, again, recalled

    first, again, recalled = anyio.run(scenario)
    assert again["id"] == first["id"] and again["duplicate"] is True and first["duplicate"] is False
    assert recalled.count("Chose SQLite for storage") == 1
