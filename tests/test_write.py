"""Unit tests of the write path's first step: ``type=`` prefixes, memory-block stripping, empty text."""

from __future__ import annotations

import pytest

from crib_plugin.core.errors import InputError
from crib_plugin.write.clean import clean_content, parse_write, validate_type


def test_a_leading_type_prefix_picks_the_type_and_is_removed() -> None:
    parsed = parse_write("  type=Decision   Chose SQLite.")
    assert (parsed.type, parsed.content) == ("decision", "Chose SQLite.")


def test_an_explicit_type_wins_over_the_prefix_and_the_default_is_note() -> None:
    assert parse_write("type=error boom", type="correction").type == "correction"
    assert parse_write("plain words").type == "note"
    assert parse_write("the type=decision is not leading").content == "the type=decision is not leading"


def test_unknown_types_are_rejected_naming_the_choices() -> None:
    with pytest.raises(InputError, match="unknown entry type 'idea'.*decision"):
        parse_write("type=idea something")
    with pytest.raises(InputError, match="unknown entry type"):
        validate_type("memo")
    assert validate_type(" ERROR ") == "error"


def test_injected_memory_blocks_are_stripped_before_storing() -> None:
    text = 'Keep this.\n<memory-context context_time="2026-01-01T00:00:00Z">\nrecalled stuff\n</memory-context>\nAnd this.'
    assert "recalled" not in clean_content(text) and clean_content(text).startswith("Keep this.")
    with pytest.raises(InputError, match="nothing to write"):
        parse_write('type=note <memory context_time="t">only recalled memory</memory>')
    with pytest.raises(InputError, match="nothing to write"):
        parse_write("   \n ")
