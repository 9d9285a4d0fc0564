"""``crib hook message-display``: the memory-block scrubber where Claude Code shows assistant text.

Claude Code (v2.1.152 and later) fires ``MessageDisplay`` for each batch of newly completed lines
while an assistant message streams; each batch is a new process. The hook JSON carries
``message_id`` (groups the batches of one message), ``index``, ``final`` (true on the last batch)
and ``delta`` (this batch's text, not cumulative). Answering
``{"hookSpecificOutput": {"hookEventName": "MessageDisplay", "displayContent": "…"}}`` replaces the
batch on screen; printing nothing leaves it as it is. It is display-only: the stored message and
what the model sees are untouched.

So a ``<memory-context>`` block the model echoes — split over several batches, the opening tag
itself possibly cut in two — is removed from the screen by running
:class:`crib_plugin.text.scrub.Scrubber` over the batches, with its state (an open block, a held-back
partial tag) kept per ``message_id`` in a small JSON file between the processes:
``<database dir>/sessions/display/`` when that folder's parent exists (beside the per-session
records), else ``display/`` in crib's cache directory. The file is deleted on the ``final`` batch,
as soon as the scrubber is back outside any block, and by age (a day) when a stream never ended.

Batches without ``<`` and without saved state — nearly all of them — print nothing and touch no
file. Any failure prints nothing and exits 0: the batch is shown unchanged, as Claude Code itself
does when a ``MessageDisplay`` hook fails.
"""

from __future__ import annotations

import json
import os
import tempfile
from dataclasses import dataclass
from pathlib import Path
from typing import IO, Any

from ..core.config import cache_dir
from ..core.deadline import write_whole
from ..core.faillog import log_failure
from ..core.stale_files import prune_older_than
from ..text.scrub import Scrubber, scrub_text
from .claude.input import HookInput, resolve_db
from .claude.state import sanitise_session_id, sessions_dir

EVENT = "MessageDisplay"
STATE_MAX_AGE_SECONDS = 86_400.0


@dataclass
class DisplayBatch:
    """The fields crib uses from a ``MessageDisplay`` hook's JSON."""

    message_id: str
    session_id: str
    delta: str
    final: bool
    cwd: str = ""


def parse_batch(raw: str) -> DisplayBatch | None:
    """The batch in ``raw`` (hook JSON), or None when it is not a usable MessageDisplay payload."""
    try:
        data = json.loads(raw)
    except ValueError:
        return None
    if not isinstance(data, dict) or not isinstance(data.get("delta"), str):
        return None

    def text(key: str) -> str:
        value = data.get(key)
        return value if isinstance(value, str) else ""

    return DisplayBatch(text("message_id"), text("session_id"), data["delta"], data.get("final") is True, text("cwd"))


def state_dir(batch: DisplayBatch, environ: Any = None) -> Path:
    """Where partial-tag state is kept (see the module docstring)."""
    db = resolve_db(HookInput(event="message-display", cwd=batch.cwd), environ)
    folder = sessions_dir(db)
    if folder.parent.is_dir():
        return folder / "display"
    return cache_dir() / "display"


def state_file(folder: Path, batch: DisplayBatch) -> Path:
    session = sanitise_session_id(batch.session_id) or "nosession"
    return folder / f"{session}--{sanitise_session_id(batch.message_id)}.json"


def _load(path: Path) -> Any:
    try:
        state = json.loads(path.read_text(encoding="utf-8"))
        return Scrubber.from_state(state)
    except FileNotFoundError:
        return Scrubber()
    except (OSError, ValueError, KeyError, TypeError):  # unreadable or foreign: start over, drop it
        _unlink(path)
        return Scrubber()


def _save(path: Path, scrubber: Any) -> None:
    path.parent.mkdir(parents=True, exist_ok=True)
    fd, tmp = tempfile.mkstemp(prefix=".display-", suffix=".json", dir=str(path.parent))
    try:
        with os.fdopen(fd, "w", encoding="utf-8") as fh:
            json.dump(scrubber.to_state(), fh)
        os.replace(tmp, path)
    except BaseException:
        _unlink(Path(tmp))
        raise


def _unlink(path: Path) -> None:
    try:
        path.unlink()
    except OSError:
        pass


def prune(folder: Path, max_age: float = STATE_MAX_AGE_SECONDS, *, now: float | None = None) -> int:
    """Delete state files of streams that never sent their ``final`` batch."""
    return prune_older_than(folder, max_age, now=now)


def scrub_batch(batch: DisplayBatch, folder: Path) -> str | None:
    """What to show for this batch: the scrubbed text, or None to leave the batch unchanged."""
    if not batch.message_id:  # no way to carry state: scrub the batch on its own
        out = scrub_text(batch.delta)
        return None if out == batch.delta else out
    path = state_file(folder, batch)
    if "<" not in batch.delta and not path.exists():
        return None  # the common case: plain text, no block open
    scrubber = _load(path)
    out = scrubber.feed(batch.delta)
    if batch.final:
        out += scrubber.flush()
        _unlink(path)
        prune(folder)
    elif scrubber.in_block or scrubber.pending:
        _save(path, scrubber)
    else:
        _unlink(path)
    return None if out == batch.delta else out


def output(display: str) -> str:
    return json.dumps({"hookSpecificOutput": {"hookEventName": EVENT, "displayContent": display}}, ensure_ascii=False)


def run_message_display(stdin: IO[str], stdout: IO[str]) -> int:
    """The hook: read one batch, print the replacement (or nothing). Always returns 0."""
    try:
        batch = parse_batch(stdin.read())
        if batch is None:
            return 0
        display = scrub_batch(batch, state_dir(batch))
        if display is None:
            return 0
        text = output(display)
    except Exception as exc:  # fail open: the batch is shown as it is

        log_failure("hook message-display", exc)
        return 0
    write_whole(stdout, text)
    return 0
