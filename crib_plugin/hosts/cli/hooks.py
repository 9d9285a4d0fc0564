"""``crib hook …``: the Claude Code hooks (they always exit 0; a usage error would erase the prompt)."""

from __future__ import annotations

import sys
from typing import Any

import click

from ..claude import SESSION_START, USER_PROMPT_SUBMIT, run_hook
from ..display import run_message_display
from ..stream import AFTER_MODEL, TEXT_COMPLETE, run_stream_hook

_HOOK_CONTEXT = {"ignore_unknown_options": True, "allow_extra_args": True}  # never a usage error (exit 2)


class HookGroup(click.Group):
    """``crib hook …`` never ends in a usage error: exit 2 from a hook would erase the user's prompt."""

    def invoke(self, ctx: click.Context) -> Any:
        try:
            return super().invoke(ctx)
        except click.UsageError as exc:
            click.echo(f"crib: {exc.format_message()}", err=True)
            sys.exit(0)


@click.group(cls=HookGroup, invoke_without_command=True)
@click.pass_context
def hook(ctx: click.Context) -> None:
    """Claude Code hooks: the hook's JSON on stdin, `hookSpecificOutput` JSON (or nothing) on stdout.

    Always exit 0, within CRIB_HOOK_TIMEOUT seconds (default 2); failures go to crib.log.
    """
    if ctx.invoked_subcommand is None:
        click.echo(ctx.get_help(), err=True)


def _own_process() -> bool:
    """A hook command is its own process, to fork from and leave at the deadline, except when a test
    runner invokes it in its own process (click's CliRunner): forking that process, which runs
    threads of its own, or leaving it, is not the hook's to do."""
    return not hasattr(sys, "_called_from_test")


_HOST = click.option("--host", default="claude", show_default=True,
                     help="The agent host whose hook JSON this is: claude, codex, gemini, opencode.")


@hook.command("user-prompt-submit", context_settings=_HOOK_CONTEXT)
@_HOST
def hook_user_prompt_submit(host: str) -> None:
    """UserPromptSubmit (Gemini: BeforeAgent): relevant memories not yet injected in this session, as additionalContext."""
    sys.exit(run_hook(USER_PROMPT_SUBMIT, host=host, own_process=_own_process()))


@hook.command("session-start", context_settings=_HOOK_CONTEXT)
@_HOST
def hook_session_start(host: str) -> None:
    """SessionStart (startup/resume/clear/compact): re-inject standing memories; reset the session."""
    sys.exit(run_hook(SESSION_START, host=host, own_process=_own_process()))


@hook.command("after-model", context_settings=_HOOK_CONTEXT)
@click.option("--host", default="gemini", show_default=True, help="The agent host (gemini).")
def hook_after_model(host: str) -> None:
    """Gemini AfterModel (once per streamed chunk): remove memory blocks from the chunk shown."""

    sys.exit(run_stream_hook(AFTER_MODEL, host, sys.stdin, sys.stdout))


@hook.command("text-complete", context_settings=_HOOK_CONTEXT)
@click.option("--host", default="opencode", show_default=True, help="The agent host (opencode).")
def hook_text_complete(host: str) -> None:
    """opencode experimental.text.complete: remove memory blocks from a finished text part."""

    sys.exit(run_stream_hook(TEXT_COMPLETE, host, sys.stdin, sys.stdout))


@hook.command("message-display", context_settings=_HOOK_CONTEXT)
def hook_message_display() -> None:
    """MessageDisplay: remove memory blocks from assistant text as it is shown (state per message_id)."""
    sys.exit(run_message_display(sys.stdin, sys.stdout))
