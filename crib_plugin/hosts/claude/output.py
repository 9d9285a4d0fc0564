"""Hook output: the JSON line (capped at Claude Code's 10,000 characters), joining blocks within the
cap, and the memory a hook reads (opened read-only, budget capped)."""

from __future__ import annotations

import json
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Mapping

from ...core.config import load_settings
from ...core.faillog import log_failure
from ..agents import get_host
from .input import CLAUDE_CONTEXT_CAP, EVENT_NAMES, HOOK_BUDGET, HookError
from .state import SessionState, prune_sessions, session_ttl_days


@dataclass
class HookResult:
    """What a hook decided: the context to inject and the session record to keep."""

    event: str
    context: str
    state: SessionState | None = None
    host: str = "claude"  # whose JSON shape to answer in (:mod:`crib_plugin.hosts.agents`)

    def payload(self) -> dict[str, Any]:
        if self.host == "claude":
            return {"hookSpecificOutput": {"hookEventName": EVENT_NAMES[self.event], "additionalContext": self.context}}
        return get_host(self.host).payload(self.event, self.context)

    def output(self) -> str:
        """The JSON line to print; refuses (HookError) a context over the host's cap (Claude Code's 10,000)."""
        if len(self.context) > CLAUDE_CONTEXT_CAP:
            raise HookError(f"context of {len(self.context)} characters exceeds the {CLAUDE_CONTEXT_CAP} cap")
        return json.dumps(self.payload(), ensure_ascii=False)

    def commit(self, environ: Mapping[str, str] | None = None) -> None:
        """Save the session record and prune old ones."""
        if self.state is None or self.state.path is None:
            return
        self.state.save()
        prune_sessions(self.state.path.parent, session_ttl_days(environ))


# -- retrieval helpers ----------------------------------------------------------------------------


def open_memory(db: Path) -> Any:
    """The project's memory, opened read-mostly (never created), budget capped for hooks."""
    # deferred: imported after the prefetch fork, overlapping the prompt's embedding (66 ms)
    from ...memory import Memory

    settings = load_settings()
    settings.db = db
    settings.budget = min(settings.budget, HOOK_BUDGET)
    return Memory(create=False, settings=settings, readonly=True)  # an older store is upgraded: an upgrade of crib never silences the hooks


def plugin_blocks(memory: Any, prompt: str, state: SessionState, budget: int) -> list[str]:
    """Blocks from third-party ``on_prompt`` implementations (crib's own is replaced by this module).

    crib's built-in ``on_prompt`` is left out because the hook does that retrieval itself, with the
    session's fact ids excluded too. A failing plugin contributes nothing.
    """
    # deferred: the MessageDisplay hook imports this package (claude.input, claude.state) on every streamed batch: plugins.session would add the plugin manager, pluggy and the store (apsw)
    from ...plugins.session import Session

    pm = memory.pm
    builtin = pm.get_plugin("crib_plugin.plugins.default_plugins.hooks")
    caller = pm.subset_hook_caller("on_prompt", remove_plugins=[builtin] if builtin is not None else [])
    session = Session(memory, id=state.session_id, injected=set(state.entries), budget=budget)
    try:
        results = caller(prompt=prompt, session=session)
    except Exception as exc:
        log_failure("hook on_prompt plugin", exc)
        return []
    state.entries |= {i for i in session.injected if isinstance(i, int)}
    return [r.strip() + "\n" for r in results if isinstance(r, str) and r.strip()]


def builtin_only(pm: Any) -> Any:
    """A caller of ``on_prompt`` that runs crib's own implementation and no plugin's."""
    builtin = pm.get_plugin("crib_plugin.plugins.default_plugins.hooks")
    others = [p for p in pm.get_plugins() if p is not builtin]
    return pm.subset_hook_caller("on_prompt", remove_plugins=others)


def join_within_cap(blocks: list[str], cap: int = CLAUDE_CONTEXT_CAP) -> str:
    """Join blocks in order, skipping any that would push the total over ``cap``."""
    out = ""
    for block in blocks:
        candidate = f"{out}\n{block}" if out else block
        if len(candidate) <= cap:
            out = candidate
    return out
