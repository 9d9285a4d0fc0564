"""The plugin contract as hosts use it: every hook point and extension point has a test here
(as datasette checks), the CLI is a host like any agent loop, late plugins are seen, and a
plugin channel can index on write.

Plugins are registered on the process-wide plugin manager (what the CLI uses) and always
unregistered again by the ``global_plugin`` fixture.
"""

from __future__ import annotations

import io
import json
import sys
from pathlib import Path
from typing import Any, Callable, Iterator

import pytest
from click.testing import CliRunner

from crib_plugin import Memory, hookimpl
from crib_plugin.core.records import ChannelResult, Entry, Query, Triple
from crib_plugin.plugins.manager import get_plugin_manager
from crib_plugin.read.channels.base import ranked

HOOKS = {"register_channels", "register_embedders", "register_extractors", "register_rerankers", "register_judges",
         "register_commands", "on_prompt", "on_store", "on_response"}


@pytest.fixture
def global_plugin() -> Iterator[Callable[[Any, str], Any]]:
    """Register plugins on the process-wide manager for one test; unregister them afterwards."""
    pm = get_plugin_manager()
    added: list[str] = []

    def register(plugin: Any, name: str) -> Any:
        pm.register(plugin, name=name)
        added.append(name)
        return plugin

    yield register
    for name in added:
        if pm.get_plugin(name) is not None:
            pm.unregister(name=name)


def cli_app() -> Any:
    from crib_plugin.hosts.cli.app import cli, load_plugin_commands

    load_plugin_commands()
    return cli


# -- register_channels: late registration, index on write ---------------------------------------


class TagChannel:
    """Indexes ``#tags`` on write into its own table, and finds entries by tag."""

    name = "tagged"

    def __init__(self) -> None:
        self.indexed: list[int] = []

    def index(self, memory: Memory, entry: Entry) -> None:
        store = memory.store
        store.execute("CREATE TABLE IF NOT EXISTS plugin_tags (tag TEXT, entry_id INTEGER)")
        for word in entry.content.split():
            if word.startswith("#") and len(word) > 1:
                store.execute("INSERT INTO plugin_tags VALUES (?, ?)", (word[1:].lower(), entry.id))
        self.indexed.append(entry.id)

    def search(self, memory: Memory, query: Query, limit: int) -> ChannelResult:
        tags = [w[1:].lower() for w in query.text.split() if w.startswith("#")]
        rows: list[tuple[Any, ...]] = []
        for tag in tags:
            rows += memory.store.execute("SELECT entry_id FROM plugin_tags WHERE tag = ?", (tag,))
        return ChannelResult(channel=self.name, hits=ranked(self.name, [(int(r[0]), 1.0) for r in rows])[:limit])


class TagPlugin:
    def __init__(self) -> None:
        self.channel = TagChannel()

    @hookimpl
    def register_channels(self, register: Any) -> None:
        register(self.channel)


def _channel(retrieval: Any, name: str) -> ChannelResult:
    return next(c for c in retrieval.channels if c.channel == name)


def test_a_plugin_registered_after_the_first_memory_is_used_is_seen(db: Path, global_plugin: Any) -> None:
    with Memory(db) as memory:
        memory.write("Deploys go through the #release checklist.")
        assert "tagged" not in memory.registry.channels
        memory.recall("#release")  # the registry has been collected and used
        plugin = global_plugin(TagPlugin(), "tags")
        assert memory.registry.channels["tagged"] is plugin.channel  # same Memory, rebuilt registry
        later = memory.write("Hotfixes skip the #release train.")
        hits = _channel(memory.recall("#release"), "tagged").hits
    assert [h.entry_id for h in hits] == [later]  # indexed on write from the moment it was registered
    with Memory(db) as fresh:
        assert "tagged" in fresh.registry.channels
    get_plugin_manager().unregister(name="tags")
    with Memory(db) as gone:
        assert "tagged" not in gone.registry.channels  # and forgotten when unregistered


def test_a_plugin_channel_indexes_on_write_into_its_own_table_and_finds_the_entry(db: Path, global_plugin: Any) -> None:
    plugin = global_plugin(TagPlugin(), "tags")
    with Memory(db) as memory:
        first = memory.write("The #billing service retries webhooks three times.")
        memory.write("Nothing tagged here at all.")
        assert plugin.channel.indexed == [first, first + 1]
        assert memory.store.execute("SELECT tag, entry_id FROM plugin_tags") == [("billing", first)]
        retrieval = memory.recall("what does #billing do")
    assert [h.entry_id for h in _channel(retrieval, "tagged").hits] == [first]


def test_a_failing_index_is_rolled_back_alone_and_noted(db: Path, global_plugin: Any) -> None:
    class Broken(TagChannel):
        name = "broken"

        def index(self, memory: Memory, entry: Entry) -> None:
            memory.store.execute("CREATE TABLE IF NOT EXISTS half (x)")
            memory.store.execute("INSERT INTO half VALUES (1)")
            raise RuntimeError("disk full")

    class BrokenPlugin:
        @hookimpl
        def register_channels(self, register: Any) -> None:
            register(Broken())

    global_plugin(BrokenPlugin(), "broken")
    with Memory(db) as memory:
        entry_id = memory.write("Still stored despite the channel.")
        assert memory.entry(entry_id).content == "Still stored despite the channel."
        assert any("channel broken could not index" in n for n in memory.last_write.notes)
        assert not memory.store.execute("SELECT name FROM sqlite_master WHERE name = 'half'")


# -- register_embedders / register_extractors / register_rerankers / register_judges --------------


def test_register_embedders_adds_a_named_embedder(db: Path, global_plugin: Any, fake_embedder: Any) -> None:
    class Plugin:
        @hookimpl
        def register_embedders(self, register: Any) -> None:
            register("plugin-embedder", fake_embedder)

    global_plugin(Plugin(), "emb")
    with Memory(db) as memory:
        assert type(memory.registry.make("embedders", "plugin-embedder")) is fake_embedder


def test_register_extractors_supplies_the_facts_written(db: Path, global_plugin: Any, monkeypatch: pytest.MonkeyPatch) -> None:
    class Extractor:
        def extract(self, text: str) -> list[Triple]:
            return [Triple("crib", "written_in", "python")]

    class Plugin:
        @hookimpl
        def register_extractors(self, register: Any) -> None:
            register("fixed", Extractor)

    global_plugin(Plugin(), "extractor")
    monkeypatch.setenv("CRIB_EXTRACTOR", "fixed")
    with Memory(db) as memory:
        memory.write("An unrelated sentence.")
        facts = memory.store.execute("SELECT COUNT(*) FROM relations")
    assert facts[0][0] == 1


def test_register_rerankers_adds_a_named_reranker(db: Path, global_plugin: Any) -> None:
    class Reranker:
        def score(self, query: str, texts: list[str]) -> list[float]:
            return [float(len(t)) for t in texts]

    class Plugin:
        @hookimpl
        def register_rerankers(self, register: Any) -> None:
            register("by-length", Reranker)

    global_plugin(Plugin(), "reranker")
    with Memory(db) as memory:
        assert memory.registry.make("rerankers", "BY-LENGTH").score("q", ["a", "bbb"]) == [1.0, 3.0]


def test_register_judges_adds_a_judge_that_picks_the_block(db: Path, global_plugin: Any, monkeypatch: pytest.MonkeyPatch) -> None:
    """`CRIB_JUDGE=<name>`: the plugin's judge sees the prompt and the candidates, and its picks are
    the block — here the docs memory, which the offline gate would never inject for this prompt."""
    seen: list[tuple[str, int]] = []

    class LastJudge:
        depth = 3

        def pick(self, prompt: str, candidates: list[Any]) -> list[int]:
            seen.append((prompt, len(candidates)))
            return [i for i, c in enumerate(candidates) if "mkdocs" in c.content]

    class Plugin:
        @hookimpl
        def register_judges(self, register: Any) -> None:
            register("docs-only", LastJudge)

    global_plugin(Plugin(), "judge")
    monkeypatch.setenv("CRIB_JUDGE", "docs-only")
    with Memory(db) as memory:
        memory.write("The docs site is built with mkdocs-material and published on every tag.")
        memory.write("We chose SQLite for storage.", type="decision")
        block = memory.retrieve("how do I make the pages look nicer?")
    assert "mkdocs-material" in block and "SQLite" not in block
    assert seen == [("how do I make the pages look nicer?", 2)]


# -- register_commands: built-ins and plugins alike ----------------------------------------------


def test_register_commands_adds_a_plugin_command_and_the_built_ins_use_it_too(global_plugin: Any) -> None:
    import click

    class Plugin:
        @hookimpl
        def register_commands(self, cli: click.Group) -> None:
            @cli.command(name="hello-plugin")
            def hello() -> None:
                click.echo("hello from a plugin")

    global_plugin(Plugin(), "commands")
    app = cli_app()
    assert CliRunner().invoke(app, ["hello-plugin"]).output == "hello from a plugin\n"
    builtin = get_plugin_manager().get_plugin("crib_plugin.plugins.default_plugins.commands")
    assert builtin is not None and {"config", "plugins"} <= set(app.list_commands(click.Context(app)))


def test_crib_plugins_lists_name_version_and_hooks(global_plugin: Any) -> None:
    global_plugin(TagPlugin(), "tags")
    result = CliRunner().invoke(cli_app(), ["plugins", "--json"])
    assert result.exit_code == 0, result.output
    rows = {r["name"]: r for r in json.loads(result.output)}
    assert rows["tags"]["hooks"] == ["register_channels"]
    assert rows["crib_plugin.plugins.default_plugins.hooks"]["hooks"] == ["on_prompt", "on_response", "on_store", "register_types"]
    assert rows["crib_plugin.plugins.default_plugins.hooks"]["version"]
    implemented = {h for r in rows.values() for h in r["hooks"]}
    assert HOOKS <= implemented  # the built-ins implement every hook
    text = CliRunner().invoke(cli_app(), ["plugins"]).output
    assert "tags: register_channels" in text


# -- the CLI as a host: on_store, on_prompt, on_response -----------------------------------------


def test_crib_write_goes_through_on_store(db: Path, global_plugin: Any) -> None:
    seen: list[tuple[str, Any, Any]] = []

    class Plugin:
        @hookimpl
        def on_store(self, text: str, type: Any, metadata: dict[str, Any], created_at: Any) -> int | None:
            seen.append((text, type, created_at))
            return -7 if "mine" in text else None

    global_plugin(Plugin(), "store")
    app = cli_app()
    result = CliRunner().invoke(app, ["write", "--type", "decision", "--created-at", "2025-01-02", "Chose SQLite."])
    assert result.exit_code == 0 and result.output.startswith("stored entry 1")
    assert seen == [("Chose SQLite.", "decision", "2025-01-02")]
    taken = CliRunner().invoke(app, ["write", "this one is mine"])
    assert taken.output == "stored entry -7\n"
    with Memory(db) as memory:
        assert [e["content"] for e in memory.export()] == ["Chose SQLite."]


def test_crib_retrieve_goes_through_on_prompt(db: Path, global_plugin: Any, capsys: pytest.CaptureFixture[str]) -> None:
    from crib_plugin.hosts.cli.retrieve import run_retrieve

    class Plugin:
        @hookimpl
        def on_prompt(self, prompt: str, session: Any) -> str:
            return f"<plugin-note>{prompt}</plugin-note>\n"

    with Memory(db) as memory:
        memory.write("type=decision Chose SQLite for storage.")
    global_plugin(Plugin(), "prompt")
    run_retrieve("which storage did we choose?")
    out = capsys.readouterr().out
    assert out.startswith("<plugin-note>which storage did we choose?</plugin-note>")  # plugins first
    assert "Chose SQLite" in out.split("</plugin-note>", 1)[1]  # then crib's own block


def test_crib_retrieve_reports_a_failure_of_cribs_on_prompt(db: Path, monkeypatch: pytest.MonkeyPatch,
                                                            capsys: pytest.CaptureFixture[str]) -> None:
    from crib_plugin.hosts.cli.retrieve import run_retrieve

    with Memory(db) as memory:
        memory.write("Chose SQLite for storage.")

    def boom(self: Any, *args: Any, **kwargs: Any) -> Any:
        raise RuntimeError("recall exploded")

    from crib_plugin.read import pipeline

    monkeypatch.setattr(pipeline, "recall", boom)  # the read pipeline's first stages
    run_retrieve("which storage?")
    captured = capsys.readouterr()
    assert captured.out == "" and "retrieve failed open: recall exploded" in captured.err


def test_crib_scrub_goes_through_on_response(global_plugin: Any, monkeypatch: pytest.MonkeyPatch) -> None:
    class Plugin:
        @hookimpl
        def on_response(self, chunk: str, stream: Any) -> str:
            return chunk.replace("there", "THERE")

    global_plugin(Plugin(), "shout")
    result = CliRunner().invoke(cli_app(), ["scrub"], input='hi <memory context_time="t">secret</memory> there')
    assert result.exit_code == 0
    assert "secret" not in result.output and result.output.replace("  ", " ") == "hi THERE"


def test_the_prompt_hook_goes_through_on_prompt(db: Path, global_plugin: Any) -> None:
    from crib_plugin.hosts import claude

    calls: list[str] = []

    class Plugin:
        @hookimpl
        def on_prompt(self, prompt: str, session: Any) -> str:
            calls.append(prompt)
            return "plugin block"

    with Memory(db) as memory:
        memory.write("type=decision Chose SQLite for storage.")
    global_plugin(Plugin(), "prompt")
    out = io.StringIO()
    payload = json.dumps({"session_id": "s", "prompt": "which storage did we choose?", "cwd": str(db.parent)})
    assert claude.run_hook(claude.USER_PROMPT_SUBMIT, stdin=io.StringIO(payload), stdout=out, own_process=False) == 0
    context = json.loads(out.getvalue())["hookSpecificOutput"]["additionalContext"]
    assert calls == ["which storage did we choose?"]
    assert context.index("Chose SQLite") < context.index("plugin block")  # crib's block first


def test_the_session_start_hook_asks_plugins_about_the_last_prompt(db: Path, global_plugin: Any, tmp_path: Path) -> None:
    from crib_plugin.hosts import claude

    class Plugin:
        @hookimpl
        def on_prompt(self, prompt: str, session: Any) -> str:
            return f"plugin saw: {prompt}"

    with Memory(db) as memory:
        memory.write("type=decision Chose SQLite for storage.")
    transcript = tmp_path / "t.jsonl"
    transcript.write_text(json.dumps({"type": "user", "message": {"content": "fix the storage bug"}}) + "\n")
    global_plugin(Plugin(), "prompt")
    out = io.StringIO()
    payload = json.dumps({"session_id": "s", "source": "startup", "transcript_path": str(transcript)})
    assert claude.run_hook(claude.SESSION_START, stdin=io.StringIO(payload), stdout=out, own_process=False) == 0
    context = json.loads(out.getvalue())["hookSpecificOutput"]["additionalContext"]
    assert "Chose SQLite" in context and "plugin saw: fix the storage bug" in context


def test_hooks_are_all_covered_here() -> None:
    source = Path(__file__).read_text(encoding="utf-8")
    assert all(f"def {hook}(" in source for hook in HOOKS)
    assert sys.modules[__name__] is not None


# -- the pipeline asks channels, not names ---------------------------------------------------------


def test_fusion_weight_gate_role_and_embedding_need_are_asked_of_the_channel(db: Path, global_plugin: Any) -> None:
    from crib_plugin.read.gate.relevance import _gate_role

    class Declared(TagChannel):
        name = "declared"
        weight = 0.25
        gate = "similarity"
        needs_embedding = True

    class Plugin:
        @hookimpl
        def register_channels(self, register: Any) -> None:
            register(Declared())

    with Memory(db) as memory:
        memory.write("anything")
        assert memory.channel_weights() == {"fts": 1.0, "vector": 1.0, "facts": 1.0}
        global_plugin(Plugin(), "declared")
        global_plugin(TagPlugin(), "tags")
        assert memory.channel_weights()["declared"] == 0.25 and memory.channel_weights()["tagged"] == 1.0
        memory.store.set_setting("fusion_weights", json.dumps({"declared": 2.0}))
        assert memory.channel_weights()["declared"] == 2.0  # a calibrated override still wins
        assert [_gate_role(memory, n) for n in ("vector", "fts", "facts", "declared", "tagged")] == [
            "similarity", "coverage", "match", "similarity", "match"]
        memory.settings.channels = ["tagged"]
        assert not memory._embedding_needed()
        memory.settings.channels = ["tagged", "declared"]
        assert memory._embedding_needed()


def test_the_built_in_eval_commands_come_through_register_commands_and_a_plugin_may_replace_them(global_plugin: Any) -> None:
    import click

    from crib_plugin.hosts.cli import app as cli_module
    from crib_plugin.hosts.cli import calibration

    assert not {"eval", "eval-noanswer", "calibrate"} & set(cli_module.COMMANDS)  # not part of the core group

    class Plugin:
        @hookimpl
        def register_commands(self, cli: click.Group) -> None:
            @cli.command(name="calibrate")
            def mine() -> None:
                click.echo("plugin calibrate")

    cli_module.cli.commands.pop("calibrate", None)
    global_plugin(Plugin(), "calib")
    app = cli_app()
    ctx = click.Context(app)
    assert {"eval", "eval-noanswer"} <= set(app.list_commands(ctx))
    assert CliRunner().invoke(app, ["calibrate"]).output == "plugin calibrate\n"  # the plugin went first
    app.commands.pop("calibrate")
    get_plugin_manager().unregister(name="calib")
    assert cli_app().get_command(ctx, "calibrate") is calibration.calibrate
