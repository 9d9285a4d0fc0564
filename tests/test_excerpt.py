"""A long memory reaches the agent as the passages that bear on the prompt (crib_plugin/text/excerpt.py),
chosen by the selected stage before the budget is fitted (crib_plugin/read/selection.py)."""

from __future__ import annotations

import base64
from typing import Any

from crib_plugin.core.records import Entry, Hit
from crib_plugin.read.selection import excerpted
from crib_plugin.text.excerpt import EXCERPT_CHARS, LONG_CHARS, excerpt
from crib_plugin.text.words import content_words

FILLER = "We also talked about the weather, lunch plans and a film nobody had seen. "
LONG = (FILLER * 6 + "\nThe staging deploy goes through ArgoCD with a sync wave per service. "
        + FILLER * 6 + "Billing retries three times before paging.")


def test_a_short_memory_is_shown_whole() -> None:
    assert excerpt("Deploys go through ArgoCD.", ["deploy"], 1) is None
    assert excerpt("x" * LONG_CHARS, ["x"], 1) is None


def test_a_long_memory_shows_the_passages_with_the_prompt_s_words_in_their_order() -> None:
    assert len(LONG) > LONG_CHARS
    cut = excerpt(LONG, ["staging", "deploys", "billing"], 42)
    assert cut is not None
    text, marker = cut.rsplit("\n", 1)
    assert text.index("ArgoCD") < text.index("Billing retries")  # the memory's own order
    assert "weather" not in text and text.startswith("… ") and len(text) <= EXCERPT_CHARS + 10
    assert marker == f"(excerpt of {len(LONG):,} characters; `show` tool / `crib show 42`)"


def test_with_no_word_in_common_it_starts_at_the_beginning() -> None:
    cut = excerpt(LONG, ["zeppelin"], 7)
    assert cut is not None and cut.startswith("We also talked") and "…" in cut


def test_one_long_passage_is_cut_at_a_word_boundary() -> None:
    cut = excerpt("deploy " + "word " * 400, ["deploy"], 3)
    assert cut is not None and len(cut.split("\n")[0]) <= EXCERPT_CHARS + 3


def _hit(content: str) -> Hit:
    return Hit(Entry(id=9, type="note", content=content, created_at="2026-11-20T12:00:00Z", metadata={}), 1.0, {})


def test_the_selected_stage_excerpts_a_copy_and_leaves_a_short_hit_alone() -> None:
    short = _hit("Deploys go through ArgoCD.")
    assert excerpted(short, ["deploy"]) is short
    long = _hit(LONG)
    out = excerpted(long, ["staging", "deploy"])
    assert out is not long and long.entry.content == LONG and "crib show 9" in out.entry.content


def test_a_secret_is_redacted_before_any_of_it_is_cut_out() -> None:
    """A prompt that shares a word with one line of a key must not get that line: the memory is
    redacted whole, then excerpted (a bare line of base64 no longer looks like a key)."""
    lines = [base64.b64encode(bytes((i * 7 + j * 13) % 256 for j in range(48))).decode() for i in range(10)]
    key = "-----BEGIN OPENSSH PRIVATE KEY-----\n" + "\n".join(lines) + "\n-----END OPENSSH PRIVATE KEY-----"
    word = next(iter(content_words(lines[4]).values()))  # a "word" of the key's fifth line
    out = excerpted(_hit("The key of the host:\n" + key + "\n" + FILLER * 8), [word])
    assert not any(line[:16] in out.entry.content for line in lines)


def test_a_long_memory_reaches_the_block_as_its_excerpt(memory: Any) -> None:
    memory.write(LONG, type="note")
    block = memory.retrieve("how does the staging deploy work with ArgoCD?")
    assert "sync wave per service" in block and "crib show" in block and "film nobody had seen" not in block
