"""Entry types: one table (crib_plugin/entry_types.py), plugins add more, the skill says the same."""

from __future__ import annotations

import re
from pathlib import Path
from typing import Any, Callable

import pytest

from crib_plugin.core.entry_types import BUILTIN_TYPES, EntryType, standing_names
from crib_plugin.core.errors import ConfigError, InputError
from crib_plugin.plugins.hookspecs import hookimpl
from crib_plugin.plugins.manager import Registry, new_plugin_manager

ROOT = Path(__file__).resolve().parent.parent
SKILL = ROOT / "skills" / "crib-memory" / "SKILL.md"


class TodoTypePlugin:
    @hookimpl
    def register_types(self, register: Callable[[EntryType], None]) -> None:
        register(EntryType("todo", "something left to do in a later session", standing=True))


def test_builtin_types_include_preference_and_only_the_standing_ones_are_standing() -> None:
    names = [t.name for t in BUILTIN_TYPES]
    assert names == ["note", "decision", "error", "correction", "preference"]
    assert standing_names() == ("decision", "correction", "preference")


def test_a_preference_is_stored_and_an_unknown_type_refused(memory: Any) -> None:
    entry_id = memory.write("type=preference The user wants tabs, not spaces, in Makefiles.")
    assert memory.entry(entry_id).type == "preference"
    with pytest.raises(InputError, match="unknown entry type 'todo'"):
        memory.write("buy milk", type="todo")


def test_a_plugin_registers_a_type_that_writes_accept_and_session_start_treats_as_standing(db: Path) -> None:
    from crib_plugin import Memory

    pm = new_plugin_manager(load_entrypoints=False)
    pm.register(TodoTypePlugin())
    registry = Registry.collect(pm)
    assert list(registry.types)[0] == "todo" and "preference" in registry.types  # plugins before trylast built-ins
    assert "todo" in standing_names(registry.types)
    with Memory(db, pm=pm) as memory:
        entry_id = memory.write("type=todo Ship the release notes for 2.4.")
        assert memory.entry(entry_id).type == "todo"
        (report,) = memory.import_records([{"content": "rotate the staging keys", "type": "todo"}])
        assert memory.entry(report.entry_id).type == "todo"


def test_malformed_type_definitions_are_refused() -> None:
    with pytest.raises(ConfigError):
        EntryType("Bad Name", "x")
    with pytest.raises(ConfigError):
        EntryType("ok", "two\nlines")

    class Broken:
        @hookimpl
        def register_types(self, register: Callable[[Any], None]) -> None:
            register(("todo", "not an EntryType"))

    pm = new_plugin_manager(load_entrypoints=False)
    pm.register(Broken())
    with pytest.raises(ConfigError, match="expected an EntryType"):
        Registry.collect(pm)


def _skill_types() -> dict[str, str]:
    """The skill's type table: rows `| \\`name\\` | meaning | …`."""
    rows = re.findall(r"^\|\s*`([a-z][a-z0-9_-]*)`\s*\|\s*([^|]+?)\s*\|", SKILL.read_text(encoding="utf-8"), re.M)
    return dict(rows)


def test_the_skill_lists_exactly_the_builtin_types_with_their_meanings() -> None:
    assert _skill_types() == {t.name: t.meaning for t in BUILTIN_TYPES}


def test_cli_types_lists_every_type(crib: Any) -> None:
    out = crib("types").stdout
    for t in BUILTIN_TYPES:
        assert re.search(rf"^{t.name}\s+{re.escape(t.meaning)}", out, re.M)


def test_session_starts_line_names_every_type_from_the_table() -> None:
    from crib_plugin.hosts.claude import MEMORY_AVAILABLE, memory_available

    for t in BUILTIN_TYPES:
        assert t.name in MEMORY_AVAILABLE
    pm = new_plugin_manager(load_entrypoints=False)
    pm.register(TodoTypePlugin())
    line = memory_available(Registry.collect(pm).types)
    assert "todo" in line and "\n" not in line


def test_templates_can_show_a_types_meaning(tmp_path: Path) -> None:
    from crib_plugin.core.records import Entry
    from crib_plugin.output.render import render_block

    (tmp_path / "memory.md.j2").write_text("{% for e in entries %}{{ e.type }}: {{ types[e.type].meaning }}\n{% endfor %}")
    entry = Entry(1, "preference", "tabs", "2026-11-23T10:00:00Z")
    assert render_block([entry], user_dir=tmp_path) == f"preference: {dict((t.name, t.meaning) for t in BUILTIN_TYPES)['preference']}\n"
