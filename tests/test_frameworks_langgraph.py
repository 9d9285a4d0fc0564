"""crib in LangGraph (crib_plugin/hosts/frameworks/langgraph.py): the BaseStore over crib's stores,
and the agent middleware, run by create_agent with a fake chat model (no network)."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

pytest.importorskip("langgraph")
pytest.importorskip("langchain")

from langchain.agents import create_agent  # noqa: E402
from langchain_core.language_models.fake_chat_models import GenericFakeChatModel  # noqa: E402
from langchain_core.messages import AIMessage, BaseMessage, SystemMessage  # noqa: E402

from crib_plugin import Memory  # noqa: E402
from crib_plugin.hosts.frameworks.langgraph import CribMiddleware, CribStore  # noqa: E402

FACT = "Chose SQLite for storage: zero dependencies, one file."


def test_the_store_keeps_values_by_namespace_and_key_in_crib(clean_env: Path, fake_embedder: Any) -> None:
    store = CribStore()
    assert store.get(("project", "alice"), "db") is None  # no store yet: nothing, and nothing created
    assert not clean_env.exists()
    store.put(("project", "alice"), "db", {"content": "Alice's service stores orders in PostgreSQL."})
    store.put(("project", "alice"), "editor", {"content": "Alice edits with Helix.", "type": "preference"})
    store.put(("global",), "tone", {"content": "Answer tersely."})
    item = store.get(("project", "alice"), "db")
    assert item is not None and item.value["content"] == "Alice's service stores orders in PostgreSQL."
    assert item.namespace == ("project", "alice") and item.key == "db"

    store.put(("project", "alice"), "db", {"content": "Alice's service moved its orders to SQLite."})  # replaces
    assert store.get(("project", "alice"), "db").value["content"] == "Alice's service moved its orders to SQLite."
    with Memory(clean_env) as memory:  # crib holds them, written through on_store
        contents = sorted(e["content"] for e in memory.export())
        assert contents == ["Alice edits with Helix.", "Alice's service moved its orders to SQLite."]
        assert {e["type"] for e in memory.export()} == {"note", "preference"}
        other = memory.write("Bob deploys on Fridays.")  # written outside LangGraph

    hits = store.search(("project", "alice"), query="which editor does Alice use?")
    assert [h.key for h in hits][:1] == ["editor"] and hits[0].score is not None  # crib's ranking
    assert {h.key for h in store.search(("project",), limit=10)} == {"db", "editor", str(other)}
    assert [h.value["content"] for h in store.search(("global",))] == ["Answer tersely."]
    assert store.search(("project", "alice"), filter={"type": "preference"})[0].key == "editor"
    assert set(store.list_namespaces()) == {("project", "alice"), ("project",), ("global",)}
    assert store.list_namespaces(prefix=("project", "*")) == [("project", "alice")]
    assert store.list_namespaces(suffix=("alice",)) == [("project", "alice")]
    assert store.list_namespaces(max_depth=1) == [("global",), ("project",)]

    store.delete(("project", "alice"), "db")
    assert store.get(("project", "alice"), "db") is None


class RecordingModel(GenericFakeChatModel):
    """Replays scripted replies and records the messages each call got."""

    seen: list[list[BaseMessage]] = []

    def bind_tools(self, tools: Any, **kwargs: Any) -> Any:
        return self

    def _generate(self, messages: list[BaseMessage], *args: Any, **kwargs: Any) -> Any:
        self.seen.append(list(messages))
        return super()._generate(messages, *args, **kwargs)


def _system(messages: list[BaseMessage]) -> str:
    return "\n".join(str(m.content) for m in messages if isinstance(m, SystemMessage))


def test_the_middleware_injects_the_block_and_offers_crib_tools(clean_env: Path, fake_embedder: Any) -> None:
    call = AIMessage("", tool_calls=[{"name": "remember", "args": {"text": FACT, "type": "decision"}, "id": "c1"}])
    model = RecordingModel(messages=iter([call, AIMessage("stored"), AIMessage("SQLite")]))
    model.seen = []
    agent = create_agent(model, tools=[], system_prompt="You help.", middleware=[CribMiddleware()])
    agent.invoke({"messages": [{"role": "user", "content": "remember that we chose SQLite"}]})
    with Memory(clean_env) as memory:
        assert [e["content"] for e in memory.export()] == [FACT]

    model.seen.clear()
    result = agent.invoke({"messages": [{"role": "user", "content": "Which storage did we choose: SQLite?"}]})
    system = _system(model.seen[0])
    assert system.startswith("You help.") and FACT in system and "<memory-context context_time=" in system
    assert all(FACT not in str(m.content) for m in result["messages"])  # not written into the conversation
