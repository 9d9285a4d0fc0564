"""The UserPromptSubmit handler: relevant memories not yet injected in this session, then plugins' blocks."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from ...core.config import load_settings
from ...core.faillog import log_failure
from ...plugins.trace import swallowed
from ...scopes import global_db
from .input import CLAUDE_CONTEXT_CAP, USER_PROMPT_SUBMIT, VECTOR_SHARE, HookInput
from .output import HookResult, builtin_only, join_within_cap, open_memory
from .state import SessionState


def user_prompt_submit(hook: HookInput, db: Path) -> HookResult | None:
    """Relevant memories not yet injected in this session, as the fenced block (None: print nothing)."""
    if not hook.prompt or not (db.exists() or global_db().exists()):
        return None  # a missing database is the normal state before the first `crib write`
    state = SessionState.for_session(db, hook.session_id)
    # deferred: the MessageDisplay hook imports this package (claude.input, claude.state) on every streamed batch: read.prefetch would add pickle and the fork machinery
    from ...read.prefetch import fork_for

    worker = fork_for(load_settings(), hook.prompt)  # its numpy import overlaps opening the store
    try:
        return _user_prompt_submit(hook, db, state, worker)
    finally:
        if worker is not None:
            worker.cancel()


def _user_prompt_submit(hook: HookInput, db: Path, state: "SessionState", worker: Any) -> HookResult | None:
    """The ``on_prompt`` hook point, as any host calls it; crib's block first, then the plugins'.

    Reads the project store and the global one (the global one alone while the project has none);
    the session's injected set holds :func:`~crib_plugin.read.across.scope_key` keys."""
    # deferred: the MessageDisplay hook imports this package (claude.input, claude.state) on every streamed batch; and after the prefetch fork here: plugins.session loads the plugin manager and the store
    from ...plugins.session import Session

    scope = "project" if db.exists() else "global"  # no project store yet: the global one alone
    with open_memory(db if scope == "project" else global_db()) as memory:
        give_up_at = None
        if hook.started is not None:  # the vector may use part of the budget; the rest must still answer
            give_up_at = hook.started + VECTOR_SHARE * hook.timeout
        session = Session(
            memory, id=state.session_id, injected=set(state.entries), budget=memory.settings.budget,
            injected_facts=set(state.facts), cap=CLAUDE_CONTEXT_CAP, worker=worker, give_up_at=give_up_at,
            scope=scope, pointed=set(state.pointers),
        )
        try:
            results = memory.pm.hook.on_prompt(prompt=hook.prompt, session=session)
        except Exception as exc:  # a plugin raised: keep crib's own block, drop the plugins'
            swallowed("on_prompt (a plugin's)", exc)

            log_failure("hook on_prompt plugin", exc)
            results = builtin_only(memory.pm)(prompt=hook.prompt, session=session)
        if session.error is not None:
            raise session.error
        block = session.block or ""
        extra = [r.strip() + "\n" for r in results if isinstance(r, str) and r.strip() and r is not session.block]
        state.entries |= {i for i in session.injected if isinstance(i, int)}
        state.facts |= {i for i in session.injected_facts if isinstance(i, int)}
        state.pointers |= {i for i in session.pointed if isinstance(i, int)}
        state.add_prompt(session.journal)
    context = join_within_cap([b for b in [block, *extra] if b])
    if not context:
        return None
    return HookResult(USER_PROMPT_SUBMIT, context, state)
