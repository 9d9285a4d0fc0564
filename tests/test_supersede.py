"""Issue 12: which older entry a new one supersedes (the write-path rules of crib_plugin.supersede).

A superseded entry is never shown alone, so a chain the write path fails to link is a stale belief
injected by itself ("MSRV is 1.74"), and a false link marks a true memory as replaced.
"""

from __future__ import annotations

from typing import Any

import pytest

from crib_plugin.write.supersede import old_values


@pytest.mark.parametrize(
    ("text", "values"),
    [
        ("MSRV raised from 1.74 to 1.80 so we can use LazyLock", ["1.74"]),
        ("The broker is now RabbitMQ (Amazon MQ) instead of Redis: Redis kept redelivering", ["Redis"]),
        ("now retries up to 8 times instead of 5 times", ["5"]),
        ("The user switched from fish to zsh (with starship)", ["fish"]),
        ("The web build no longer needs NODE_OPTIONS=--max-old-space-size=6144", ["NODE_OPTIONS"]),
        ("client state moved from `Zustand` to React context", ["Zustand"]),
        ("replaced once_cell with std::sync::LazyLock", ["once_cell"]),
        # "from" as a plain preposition names no old value
        ("The s3 input reads from S3 with aws-sdk-s3", []),
        ("Answers from the user come first", []),
    ],
)
def test_old_values(text: str, values: list[str]) -> None:
    assert old_values(text) == values


def _at(memory: Any, text: str, day: int) -> int:
    return memory.write(text, created_at=f"2026-0{1 + day // 28}-{1 + day % 28:02d}T10:00:00Z")


def test_a_decision_naming_the_old_value_supersedes_the_decision_not_the_error(memory) -> None:
    """The rust-002 → rust-024 chain of the coding set: the new decision resembles the old error
    (LazyLock, once_cell, 1.80) more than the old decision, but names the value the decision stated."""
    old = _at(memory, "type=decision MSRV for logsift is 1.74: rust-version = \"1.74\" in Cargo.toml, and the CI msrv job builds with 1.74.", 1)
    error = _at(
        memory,
        "type=error CI failed with error[E0658]: LazyLock is only stable from Rust 1.80 and the msrv job runs 1.74. "
        "Fixed by using once_cell::sync::Lazy instead.",
        3,
    )
    new = _at(
        memory,
        "type=decision MSRV raised from 1.74 to 1.80 so we can use std::sync::LazyLock and drop once_cell: "
        "Cargo.toml now says rust-version = \"1.80\" and the CI msrv job runs 1.80.",
        40,
    )
    assert memory.store.successor_of(old) == new
    assert memory.store.successor_of(error) is None


def test_an_error_is_superseded_only_by_an_entry_naming_its_fix(memory) -> None:
    error = _at(
        memory,
        "type=error Vite build OOM on CI: JavaScript heap out of memory in apps/web after adding the charts package. "
        "Set NODE_OPTIONS=--max-old-space-size=6144 for the build step.",
        1,
    )
    _at(
        memory, "type=decision The Vite build of apps/web on CI splits the charts package into its own chunk to keep memory low.", 5
    )
    assert memory.store.successor_of(error) is None  # resemblance is no claim on an event
    fix = _at(
        memory,
        "type=correction The web build no longer needs NODE_OPTIONS=--max-old-space-size=6144: with the charts "
        "package split out the Vite build on CI peaks at 2.1 GB.",
        30,
    )
    assert memory.store.successor_of(error) == fix


def test_a_preference_that_changes_supersedes_the_old_one(memory) -> None:
    old = _at(memory, "type=preference Shell: the user uses fish, so give shell snippets in fish syntax (set -x VAR value).", 1)
    other = _at(memory, "type=preference The user's editor is Neovim; give Neovim instructions for editor setup.", 2)
    new = _at(memory, "type=preference The user switched from fish to zsh; shell snippets can use plain export VAR=value again.", 30)
    assert memory.store.successor_of(old) == new
    assert memory.store.successor_of(other) is None


def test_a_look_alike_does_not_take_over_a_chain(memory) -> None:
    """Once an entry is superseded, a later entry that merely resembles it does not re-link it."""
    old = _at(
        memory,
        "type=decision Invoice emails are sent by the Celery task send_invoice_email(invoice_id) on the emails queue "
        "through Postmark, with retry_backoff=True and max_retries=5.",
        1,
    )
    new = _at(
        memory,
        "type=correction Invoice emails: send_invoice_email(invoice_id) on the emails queue via Postmark now retries "
        "up to 8 times instead of 5 times.",
        30,
    )
    assert memory.store.successor_of(old) == new
    _at(
        memory,
        "type=decision Sentry for the invoice service: failed Celery tasks such as send_invoice_email are tagged with "
        "invoice_id on the emails queue.",
        50,
    )
    assert memory.store.successor_of(old) == new
