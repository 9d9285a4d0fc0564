"""Progress for long commands (import, reindex, calibrate, the first model download).

On a terminal: a tqdm bar on stderr with count, rate and ETA. Otherwise (a pipe, a log file, CI):
one plain line every ``every`` items and a last line at the end, so a log shows that work goes on
without filling it with carriage returns. ``CRIB_PROGRESS=0`` silences both.

Only the long commands import this module (inside the command), never the per-prompt path:
``crib retrieve`` and the hooks stay as fast as before.

Use it as the ``on_progress(done, total)`` callback that ``Memory.import_records`` /
``Memory.reindex`` accept::

    with Progress("import", unit="entries") as progress:
        memory.import_records(records, on_progress=progress)
"""

from __future__ import annotations

import os
import sys
import time
from typing import IO, Any

from tqdm import tqdm

from ..core.config import progress_enabled
from ..core.errors import CribError
from ..models.weights import ensure_minilm, minilm_ready

DEFAULT_EVERY = 500  # items between two plain lines when stderr is not a terminal


def _duration(seconds: float) -> str:
    seconds = max(0, int(round(seconds)))
    minutes, secs = divmod(seconds, 60)
    hours, minutes = divmod(minutes, 60)
    return f"{hours}h{minutes:02d}m{secs:02d}s" if hours else f"{minutes}m{secs:02d}s" if minutes else f"{secs}s"


def _width(stream: IO[str]) -> int | None:
    """``None`` (tqdm follows the terminal) unless the terminal reports no width — a fresh pseudo-
    terminal says 0 columns and 0 rows, where tqdm draws nothing at all: then 80 (and 24 rows)."""
    try:
        columns = os.get_terminal_size(stream.fileno()).columns
    except (OSError, ValueError, AttributeError):
        return 80
    return None if columns > 0 else 80


class Progress:
    """A callable ``(done, total)`` that draws a bar on a terminal or prints a line every N items."""

    def __init__(
        self,
        label: str,
        *,
        unit: str = "entries",
        stream: IO[str] | None = None,
        every: int = DEFAULT_EVERY,
        tty: bool | None = None,
        enabled: bool | None = None,
        unit_scale: bool = False,
    ) -> None:
        self.label = label
        self.unit = unit
        self.stream = stream if stream is not None else sys.stderr
        self.every = max(1, every)
        isatty = getattr(self.stream, "isatty", None)
        self.tty = tty if tty is not None else bool(isatty and isatty())
        self.enabled = progress_enabled() if enabled is None else enabled
        self.unit_scale = unit_scale
        self.started = time.perf_counter()
        self.done = 0
        self.total = 0
        self.ended: float | None = None  # when done reached total (a later phase does not dilute the rate)
        self._bar: Any = None
        self._last_line = 0

    # -- the callback ----------------------------------------------------------------------

    def __call__(self, done: int, total: int) -> None:
        if done == 0 and self.done == 0:  # a phase announcing its start (the import's embedding): its clock starts now
            self.started = time.perf_counter()
        self.done, self.total = done, total
        self.ended = time.perf_counter() if total and done >= total else None
        if not self.enabled:
            return
        if self.tty:
            self._draw(done, total)
        elif done >= self._last_line + self.every or (done == total and done != self._last_line):
            self._last_line = done
            self.stream.write(self.line() + "\n")
            self.stream.flush()

    def _draw(self, done: int, total: int) -> None:
        if self._bar is None:
            width = _width(self.stream)
            self._bar = tqdm(
                total=total or None, desc=self.label, unit=f" {self.unit}", unit_scale=self.unit_scale,
                file=self.stream, dynamic_ncols=width is None, ncols=width, nrows=None if width is None else 24,
                mininterval=0.1, leave=True,
            )
        if total and self._bar.total != total:
            self._bar.total = total
        self._bar.update(max(0, done - self._bar.n))

    def line(self) -> str:
        """``import: 1500/5000 entries (30%), 41.7/s, ETA 1m24s`` — the plain form."""
        elapsed = max(time.perf_counter() - self.started, 1e-9)
        rate = self.done / elapsed
        part = f"{self.label}: {self.done}/{self.total} {self.unit}"
        if self.total:
            part += f" ({100 * self.done // self.total}%)"
        part += f", {rate:.1f}/s"
        if self.total and rate > 0 and self.done < self.total:
            part += f", ETA {_duration((self.total - self.done) / rate)}"
        elif self.done and self.done >= self.total:
            part += f", {_duration(elapsed)}"
        return part

    @property
    def rate(self) -> float:
        """Items per second so far (what the closing note of a long command quotes)."""
        return self.done / max((self.ended or time.perf_counter()) - self.started, 1e-9)

    # -- lifecycle -------------------------------------------------------------------------

    def close(self) -> None:
        if self._bar is not None:
            self._bar.close()
            self._bar = None

    def __enter__(self) -> "Progress":
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()


def fetch_model(memory: Any) -> None:
    """Before a long command embeds: fetch the offline model with a progress display when it is
    not in the cache yet (the first run), so the download is not a silent minute. A model that
    cannot be had is left to the command, which queues vectors or says what failed."""
    try:
        if memory.embedder_name() != "minilm":
            return

        if minilm_ready():
            return
        with Progress("model", unit="B", unit_scale=True, every=5_000_000) as progress:
            ensure_minilm(on_progress=progress)
    except CribError:
        return
