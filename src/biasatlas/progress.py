"""Progress off a terminal: a plain, flushed line every few seconds, for log files and CI.

A terminal gets rich's live bar (``biasatlas.runner``); a file or pipe cannot show a bar that
redraws, and rich writes nothing to one until the run ends. So off a terminal a thread of its own
writes one line every ``interval`` seconds (``$BIASATLAS_PROGRESS_INTERVAL``, default 10 s), also
while no answer arrives (a long batch): done/total, new, cached, failed, the rate of answers asked
and the time left at that rate. In an audit (:class:`AuditProgress`) each line is followed by one
for the whole audit.
"""

from __future__ import annotations

import contextlib
import os
import sys
import threading
import time
from collections.abc import Callable
from contextvars import ContextVar
from dataclasses import dataclass, field

INTERVAL_ENV = "BIASATLAS_PROGRESS_INTERVAL"
DEFAULT_INTERVAL_S = 10.0


def progress_interval() -> float:
    """Seconds between two progress lines: ``$BIASATLAS_PROGRESS_INTERVAL`` when a positive number, else 10."""
    try:
        value = float(os.environ.get(INTERVAL_ENV, ""))
    except ValueError:
        return DEFAULT_INTERVAL_S
    return value if value > 0 else DEFAULT_INTERVAL_S


def duration(seconds: float) -> str:
    """``42 s``, ``3 min 05 s``, ``2 h 07 min``."""
    seconds = max(0, round(seconds))
    if seconds < 60:
        return f"{seconds} s"
    minutes, secs = divmod(seconds, 60)
    if minutes < 60:
        return f"{minutes} min {secs:02d} s"
    hours, minutes = divmod(minutes, 60)
    return f"{hours} h {minutes:02d} min"


@dataclass
class Counts:
    """Where a run stands: items planned (known so far), found cached, newly answered, failed."""

    total: int
    cached: int = 0
    new: int = 0
    failed: int = 0

    @property
    def done(self) -> int:
        return self.cached + self.new + self.failed


def run_line(label: str, counts: Counts, elapsed: float) -> str:
    """One progress line of a run: the rate counts answers asked (not cached ones), the ETA is the rest at that rate."""
    asked = counts.new + counts.failed
    left = max(0, counts.total - counts.done)
    share = f" ({100 * counts.done / counts.total:.0f} %)" if counts.total else ""
    rate = asked / elapsed if elapsed > 0 else 0.0
    if left == 0:
        eta = "ETA 0 s"
    elif rate > 0:
        eta = f"ETA {duration(left / rate)}"
    else:
        eta = "ETA unknown (no answer yet)"
    return (f"{label}: {counts.done:,}/{counts.total:,}{share} · new {counts.new:,} · cached {counts.cached:,} · "
            f"failed {counts.failed:,} · {rate:.2f} answers/s · {eta} · {duration(elapsed)} elapsed")


@dataclass
class AuditProgress:
    """The whole audit: its cells' planned requests; the runs report the current cell's progress to it."""

    planned: list[int]  # requests each cell's plan holds (prompts x samples; extraction steps not counted)
    clock: Callable[[], float] = time.monotonic
    started: float = field(default=0.0)
    cell: int = -1  # index of the cell running now
    finished: set[int] = field(default_factory=set)
    live: int = 0  # requests of the current cell done (cached or asked)

    def __post_init__(self) -> None:
        self.started = self.clock()

    def start_cell(self, index: int) -> None:
        self.cell, self.live = index, 0

    def finish_cell(self, index: int) -> None:
        self.finished.add(index)
        self.live = 0

    def line(self) -> str:
        """``audit: cell 3/12 · 1,400/4,200 requests (33 %) · ETA ... at the pace so far``."""
        total = sum(self.planned)
        current = 0 if self.cell in self.finished or self.cell < 0 else min(self.live, self.planned[self.cell])
        done = sum(self.planned[i] for i in self.finished) + current
        elapsed = self.clock() - self.started
        share = f" ({100 * done / total:.0f} %)" if total else ""
        if done >= total:
            eta = "ETA 0 s"
        elif done > 0 and elapsed > 0:
            eta = f"ETA {duration((total - done) * elapsed / done)} at the pace so far"
        else:
            eta = "ETA unknown"
        return (f"audit: cell {self.cell + 1}/{len(self.planned)} · {done:,}/{total:,} requests{share} · {eta} · "
                f"{duration(elapsed)} elapsed")


#: the audit a run belongs to, if any (set by ``audit.execute.run_cells``)
CURRENT_AUDIT: ContextVar[AuditProgress | None] = ContextVar("biasatlas_audit_progress", default=None)


class TimedLines:
    """Writes ``run_line`` every ``interval`` seconds from a thread of its own until stopped (see the module)."""

    def __init__(
        self,
        label: str,
        read: Callable[[], Counts],
        *,
        interval: float | None = None,
        write: Callable[[str], None] | None = None,
        clock: Callable[[], float] = time.monotonic,
        audit: AuditProgress | None = None,
    ) -> None:
        self.label, self.read, self.clock, self.audit = label, read, clock, audit
        self.interval = progress_interval() if interval is None else interval
        self.write = write or _write_stderr
        self.started = clock()
        self._stop = threading.Event()
        self._thread = threading.Thread(target=self._loop, name="biasatlas-progress", daemon=True)

    def start(self) -> TimedLines:
        self.started = self.clock()
        self._thread.start()
        return self

    def stop(self) -> None:
        self._stop.set()
        if self._thread.is_alive():
            self._thread.join()

    def emit(self) -> None:
        """Write the current line (and the audit's)."""
        counts = self.read()
        self.write(run_line(self.label, counts, self.clock() - self.started))
        if self.audit is not None:
            self.audit.live = max(self.audit.live, counts.done)  # a second step (stories: extraction) restarts at 0
            self.write(self.audit.line())

    def _loop(self) -> None:
        while not self._stop.wait(self.interval):
            with contextlib.suppress(Exception):  # a progress line must never end a run
                self.emit()


def _write_stderr(line: str) -> None:
    sys.stderr.write(line + "\n")
    sys.stderr.flush()
