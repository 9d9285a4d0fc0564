"""User-facing text tells how to use crib, not how it was built.

What every session shows (the agents', skills' and MCP tools' descriptions) names no issue,
session, seed or "pass"; nor does any heading of the README or docs/ — a reader looking for "how
big stores behave" should not find "Issue 23, fifth round (session 9)". Measurement journals keep
their dates in the body where a figure needs one.
"""

from __future__ import annotations

import json
import re
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parent.parent
ORDINAL = r"(?:first|second|third|fourth|fifth|sixth|seventh|eighth|ninth|tenth|\d+(?:st|nd|rd|th))"
BUILD_TALK = re.compile(rf"\b(?:issue\s+#?\d+|session\s+\d+|seed\s+0\d\d|{ORDINAL}\s+(?:pass|round))\b", re.IGNORECASE)
HEADING = re.compile(r"^#{1,6}\s+(.+)$", re.MULTILINE)
FENCE = re.compile(r"^```.*?^```", re.MULTILINE | re.DOTALL)


def build_talk_in_headings(text: str) -> list[str]:
    return [h for h in HEADING.findall(FENCE.sub("", text)) if BUILD_TALK.search(h)]


def shown_every_session() -> dict[str, str]:
    """Text a host lists in every session: agent and skill files, and the MCP tools' descriptions."""
    texts = {p.relative_to(ROOT).as_posix(): p.read_text(encoding="utf-8")
             for folder in ("agents", "skills") for p in sorted((ROOT / folder).rglob("*.md"))}
    manifest = json.loads((ROOT / "crib_plugin" / "hosts" / "mcp_manifest.json").read_text(encoding="utf-8"))
    texts["crib_plugin/hosts/mcp_manifest.json"] = json.dumps(manifest, ensure_ascii=False)
    return texts


@pytest.mark.parametrize("doc", ["README.md", *sorted(p.relative_to(ROOT).as_posix() for p in (ROOT / "docs").glob("*.md"))])
def test_no_heading_tells_how_crib_was_built(doc: str) -> None:
    assert not build_talk_in_headings((ROOT / doc).read_text(encoding="utf-8"))


def test_what_every_session_shows_names_no_issue_session_or_seed() -> None:
    found = {name: BUILD_TALK.findall(text) for name, text in shown_every_session().items()}
    assert not {name: hits for name, hits in found.items() if hits}


def test_the_check_sees_build_talk() -> None:
    assert build_talk_in_headings("# Big stores\n### Issue 23, fifth round (session 9)\n## Eighth pass: x\n") == [
        "Issue 23, fifth round (session 9)", "Eighth pass: x"]
    assert not build_talk_in_headings("# Passes and rounds\n```\n# issue 5\n```\n")
    assert BUILD_TALK.search("the way seed 001's pattern does")
