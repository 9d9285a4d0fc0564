"""A minimal Python agent loop with crib's three hook points — runnable offline.

    python examples/agent_loop.py

1. ``on_store`` records a decision the agent made (crib's implementation writes it to the store).
2. ``on_prompt`` runs before the model call; every implementation contributes a context block
   (here crib's recalled ``<memory-context>`` block and a small plugin's project note).
3. A fake model streams a reply. Like a real model sometimes does, it echoes the memory block it
   was given, split across chunks at awkward places.
4. ``on_response`` runs over every chunk (``final=True`` on the last call): crib's scrubber wraps
   every implementation, so what the user sees never contains the memory block.

Everything is local: the database lives in a temporary directory, the extractor is the rule-based
one, and no network is needed (when the offline embedder's weights are missing the vector channel
simply sits out and full text still finds the decision).
"""

from __future__ import annotations

import os
import random
import sys
import tempfile
from pathlib import Path
from typing import Iterator

os.environ.setdefault("CRIB_EXTRACTOR", "rules")  # deterministic and offline

from crib_plugin import Memory, ResponseStream, Session, get_plugin_manager, hookimpl  # noqa: E402


class ProjectNote:
    """A plugin object: one more ``on_prompt`` implementation, contributing a fixed note."""

    @hookimpl
    def on_prompt(self, prompt: str, session: Session) -> str | None:
        return "Project note: the team prefers boring, well-understood technology."


def fake_model(prompt: str, context: str, seed: int = 7) -> Iterator[str]:
    """Stream a reply that quotes the context it was given, in random-sized chunks.

    The chunk boundaries fall inside the tags on purpose: ``<memory-con`` | ``text …>``.
    """
    answer = "We chose SQLite for storage: it has zero dependencies."
    reply = f"Let me check my notes.\n{context}\n{answer}\n"
    rng = random.Random(seed)
    position = 0
    while position < len(reply):
        size = rng.randint(1, 12)
        yield reply[position : position + size]
        position += size


def run(workdir: Path) -> str:
    """One turn of the loop; returns what the user saw."""
    pm = get_plugin_manager()
    pm.register(ProjectNote(), name="project-note")
    with Memory(workdir / "crib.db", pm=pm) as memory:
        # 1. the agent stores a decision
        entry_id = pm.hook.on_store(
            text="Chose SQLite for storage. Zero dependencies.", type="decision", metadata={"by": "agent"}, memory=memory,
            created_at=None,  # now
        )
        print(f"[agent] stored decision as entry {entry_id}", file=sys.stderr)

        # 2. before the model call: collect context blocks from every on_prompt implementation
        session = Session(memory, id="example-session")
        prompt = "Which database did we choose, and why?"
        blocks = [b for b in pm.hook.on_prompt(prompt=prompt, session=session) if b]
        context = "\n".join(blocks)
        print(f"[agent] injected {len(blocks)} context blocks ({len(context)} characters):", file=sys.stderr)
        print(context, file=sys.stderr)

        # 3 + 4. stream the model's reply through on_response
        stream = ResponseStream(id="reply-1")
        shown: list[str] = []
        for chunk in fake_model(prompt, context):
            visible = pm.hook.on_response(chunk=chunk, stream=stream)
            shown.append(visible)
            sys.stdout.write(visible)
            sys.stdout.flush()
        stream.final = True
        tail = pm.hook.on_response(chunk="", stream=stream)  # flush whatever was held back
        shown.append(tail)
        sys.stdout.write(tail)
        sys.stdout.flush()
    return "".join(shown)


def main() -> int:
    with tempfile.TemporaryDirectory(prefix="crib-agent-loop-") as tmp:
        run(Path(tmp))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
