"""Threads: neighbours' text is indexed as context and blended into the vector."""

from __future__ import annotations

import numpy as np


def _context(memory, entry_id: int) -> str:
    return str(memory.store.execute("SELECT context FROM entries WHERE id = ?", (entry_id,))[0][0])


def test_neighbours_become_context(memory) -> None:
    a = memory.write("We are planning the camping trip to the lake.", metadata={"thread": "t1"})
    b = memory.write("Yes! Last May was great.", metadata={"thread": "t1"})
    c = memory.write("Unrelated note outside any thread.")
    d = memory.write("Bring the big tent.", metadata={"thread": "t1"})
    assert _context(memory, a) == "Yes! Last May was great."
    assert _context(memory, b) == "We are planning the camping trip to the lake.\nBring the big tent."
    assert _context(memory, c) == ""
    # A reply with no topic words is found through its neighbour's words (weighted lower).
    hits = memory.search("camping trip", channels=["fts"])
    ids = [h.entry.id for h in hits]
    assert ids[0] == a and b in ids
    # Forgetting the middle entry re-links its neighbours.
    memory.forget(b)
    assert _context(memory, a) == "Bring the big tent."
    assert _context(memory, d) == "We are planning the camping trip to the lake."


def test_threaded_vector_blends_previous_entry(memory) -> None:
    memory.write("We are planning the camping trip to the lake.", metadata={"thread": "t1"})
    reply = memory.write("Yes! Last May was great.", metadata={"thread": "t1"})
    lone = memory.write("Yes! Last May was great.", metadata={"thread": "t2"})
    table, _ = memory.store.vector_space(memory.embedder_key())
    rows = dict(memory.store.execute(f"SELECT rowid, embedding FROM {table}"))
    v_reply = np.frombuffer(rows[reply], dtype="<f4")
    v_lone = np.frombuffer(rows[lone], dtype="<f4")
    q = memory.embedder().embed_query("camping trip")
    assert float(v_reply @ q) > float(v_lone @ q) + 0.05
    assert abs(float(np.linalg.norm(v_reply)) - 1.0) < 1e-5


def test_cli_thread_option(crib) -> None:
    crib("write", "--thread", "s1", input="Planning the lake camping trip.")
    crib("write", input="Sounds great, count me in!", env={"CRIB_THREAD": "s1"})
    import json

    rows = [json.loads(x) for x in crib("export").stdout.splitlines()]
    assert rows[1]["metadata"]["thread"] == "s1"
