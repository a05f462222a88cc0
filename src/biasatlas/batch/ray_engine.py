"""`biasatlas batch run --engine ray`: batch input files answered through Ray Data, in the Batch output format.

The route: the input JSONL that ``batch export`` wrote, each request once (:mod:`biasatlas.batch.work`:
a repeated line is asked once) -> ``ray.data.from_items`` -> ``map_batches``
with a pool of :class:`~.ray_asker.LineAsker` actors, each POSTing its lines' bodies to the endpoints
(``--base-url``, one or more OpenAI-compatible servers) with the HTTP backend's client -> answers
appended to the actors' files in ``--out``, which ``batch import`` reads. The lines go as their text,
not through ``ray.data.read_json``: Arrow's schema inference unifies the lines' bodies and adds the
fields one line has to every other line as nulls (``"logprobs": null``), so the server would get a
body other than the exported one.

Nothing is asked twice: a line whose answer (status 200) is in ``--out`` already is skipped, so a
rerun after a kill asks only the missing lines. ``ray-run.json`` in ``--out`` records the engine, Ray's
version, the cluster's address and the endpoints; ``batch import`` copies it into the run record.

Fail-fast: an actor whose breaker gives an endpoint up (:mod:`.ray_asker`) returns its lines as
``stopped``; the first such row ends the job (:class:`RayRun` ``stopped`` holds the reason), Ray is shut
down and the lines not answered stay for a rerun. An interrupt (Ctrl-C, SIGTERM) ends it the same way
(:class:`RayInterrupted`, with the counts so far). Ray itself is started and ended by :mod:`.ray_session`.
"""

from __future__ import annotations

import contextlib
import json
import math
import sys
import time
from collections import Counter
from collections.abc import Callable, Iterable
from dataclasses import dataclass, field
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

from biasatlas.backends.http.setup import safe_url
from biasatlas.batch.formats import BadLine, read_output
from biasatlas.batch.work import work_list

#: the manifest `batch run` writes beside its answers, read back by `batch import`
MANIFEST = "ray-run.json"
#: lines per map_batches call: small enough for steady progress, large enough to keep an actor busy
BATCH_LINES = 64
#: seconds between two progress lines when the output is not a terminal
PROGRESS_EVERY_S = 10.0


@dataclass
class RayRun:
    """What `batch run` did: the lines read, skipped (answered before), answered, failed, and where."""

    lines: int = 0
    skipped: int = 0
    answered: int = 0
    errors: int = 0
    unreadable: int = 0
    duplicates: int = 0  # lines repeating an earlier line (its custom_id and body): asked once
    shared: int = 0  # ids answered with another id's answer to the very same body (counted in answered)
    conflicts: list[str] = field(default_factory=list)  # ids given two different bodies: the first asked
    causes: Counter[str] = field(default_factory=Counter)
    by_endpoint: Counter[str] = field(default_factory=Counter)
    seconds: float = 0.0
    address: str = "local"
    endpoints: list[str] = field(default_factory=list)
    files: list[str] = field(default_factory=list)
    stopped: str | None = None  # why the job was given up early (an endpoint's breaker), else None
    unreadable_lines: list[str] = field(default_factory=list)  # "FILE:LINE: why", as batch.work names them

    @property
    def done(self) -> int:
        return (self.skipped + self.answered + self.errors + self.unreadable + self.duplicates
                + len(self.conflicts))

    @property
    def not_answered(self) -> int:
        """Lines neither answered (now or before) nor decided otherwise: asked again by a rerun."""
        return max(0, self.lines - self.done)

    def as_dict(self) -> dict[str, Any]:
        return {"engine": "ray", "lines": self.lines, "skipped": self.skipped, "answered": self.answered,
                "errors": self.errors, "unreadable": self.unreadable, "duplicates": self.duplicates,
                "shared": self.shared, "conflicts": self.conflicts, "causes": dict(self.causes),
                "by_endpoint": dict(self.by_endpoint), "seconds": round(self.seconds, 3), "address": self.address,
                "endpoints": self.endpoints, "files": self.files, "stopped": self.stopped,
                "not_answered": self.not_answered, "unreadable_lines": self.unreadable_lines}


class RayInterrupted(Exception):
    """Ctrl-C or SIGTERM ended the job; ``run`` holds what was done (every answer written is kept)."""

    def __init__(self, run: RayRun) -> None:
        super().__init__("interrupted")
        self.run = run


def input_files(path: Path) -> list[Path]:
    """The batch input files of ``path`` (a folder of ``*.jsonl`` or one file), in name order."""
    files = sorted(path.glob("*.jsonl")) if path.is_dir() else [path]
    return [f for f in files if f.is_file()]


def answered_ids(out: Path) -> set[str]:
    """The ``custom_id`` of every line of ``out/*.jsonl`` that holds an answer (errors are asked again)."""
    done: set[str] = set()
    for path in sorted(out.glob("*.jsonl")) if out.is_dir() else []:
        for line in read_output(path):
            if not isinstance(line, BadLine) and line.error is None and line.status_code == 200:
                done.add(line.custom_id)
    return done


def count_lines(files: Iterable[Path]) -> int:
    total = 0
    for path in files:
        with path.open("rb") as handle:
            total += sum(1 for raw in handle if raw.strip())
    return total


def run_ray(inputs: list[Path], out: Path, endpoints: list[str], *, address: str | None = None,
            actors: int = 2, concurrency: int = 16, timeout: float = 120.0, connect_timeout: float = 10.0,
            max_retries: int = 6, key_env: str = "OPENAI_API_KEY", max_wait: float | None = None,
            progress: Callable[[RayRun], None] | None = None) -> RayRun:
    """Answer every line of ``inputs`` not answered in ``out`` yet, through Ray Data (see the module).

    ``concurrency`` is the most requests each endpoint gets at once, shared by the ``actors``;
    ``address`` is an existing cluster (``ray://HOST:10001`` or ``auto``), else a local Ray starts
    with ``actors + 1`` CPUs. ``max_wait``: seconds an endpoint may go without an answer while its
    requests fail before it is given up (None: the live runner's defaults, 60 s until its first answer).
    Raises :class:`.ray_session.RayStartError` (Ray not reachable) and :class:`RayInterrupted`.
    """
    from biasatlas.batch.ray_session import ray_session

    started = time.perf_counter()
    work = work_list(inputs, frozenset(answered_ids(out)))  # each request once (batch.work)
    run = RayRun(lines=work.lines, skipped=work.skipped, unreadable=len(work.unreadable),
                 duplicates=work.duplicates, shared=work.shared, conflicts=list(work.conflicts),
                 address=address or "local", endpoints=[safe_url(u) for u in endpoints],
                 unreadable_lines=list(work.unreadable))
    out.mkdir(parents=True, exist_ok=True)
    _write_manifest(out, run, status="running")
    if not work.items:  # nothing to ask: no Ray started (from_items of nothing has no schema)
        run.seconds = time.perf_counter() - started
        _write_manifest(out, run, status="finished")
        return run
    try:
        with ray_session(address, actors + 1, out):
            batches = _answers(work, out, endpoints, actors=actors, concurrency=concurrency, timeout=timeout,
                               connect_timeout=connect_timeout, max_retries=max_retries, key_env=key_env,
                               max_wait=max_wait)
            tally(run, batches, started, progress)
    except KeyboardInterrupt:
        run.seconds = time.perf_counter() - started
        # the actors write each answer as it comes; the driver hears of a batch only when it is whole
        run.answered = max(run.answered, len(answered_ids(out)) - work.skipped)
        _write_manifest(out, run, status="interrupted")
        raise RayInterrupted(run) from None
    run.seconds = time.perf_counter() - started
    _write_manifest(out, run, status="stopped" if run.stopped else "finished")
    return run


def _answers(work: Any, out: Path, endpoints: list[str], *, actors: int, concurrency: int, **asker: Any) -> Any:
    """The Ray Data pipeline of the work list: an iterator of status batches (one row per id)."""
    import ray.data

    from biasatlas.batch.ray_asker import LineAsker

    context = ray.data.DataContext.get_current()
    context.enable_progress_bars = False  # our own progress line; Ray's bars would interleave with it
    context.print_on_execution_start = False
    per_actor = max(1, math.ceil(concurrency / actors))
    dataset = ray.data.from_items([item.row() for item in work.items]).map_batches(
        LineAsker,
        fn_constructor_kwargs={"endpoints": list(endpoints), "out": str(out), "per_actor": per_actor, **asker},
        batch_size=BATCH_LINES, compute=ray.data.ActorPoolStrategy(size=actors), num_cpus=1,
        batch_format="numpy",
    )
    return dataset.iter_batches(batch_size=None, batch_format="numpy")


def tally(run: RayRun, batches: Iterable[dict[str, Any]], started: float,
          progress: Callable[[RayRun], None] | None = None) -> RayRun:
    """Count the actors' status rows into ``run``; the first ``stopped`` row ends the job (fail-fast)."""
    files: set[str] = set(run.files)
    for batch in batches:
        for status, cause, where, name in zip(batch["status"], batch["cause"], batch["endpoint"], batch["file"],
                                              strict=True):
            if status == "stopped":
                if run.stopped is None:  # the endpoint without its credentials (user:password@)
                    run.stopped = f"{safe_url(str(where))}: {cause}" if where else str(cause)
                continue
            if status == "answered":
                run.answered += 1
            elif status == "error":
                run.errors += 1
                run.causes[str(cause)] += 1
            elif status == "skipped":
                run.skipped += 1
            else:
                run.unreadable += 1
            if where:
                run.by_endpoint[safe_url(str(where))] += 1
                files.add(str(name))
        run.seconds = time.perf_counter() - started
        run.files = sorted(files)
        if progress is not None:
            progress(run)
        if run.stopped is not None:
            break  # the endpoint is given up: every other line to it would come back stopped as well
    run.files = sorted(files)
    return run


def _write_manifest(out: Path, run: RayRun, status: str) -> None:
    import ray

    path = out / MANIFEST
    try:
        previous = json.loads(path.read_text(encoding="utf-8")) if path.is_file() else {}
    except (OSError, ValueError, RecursionError):  # damaged: kept beside the new one, never read as ours
        previous = {}
        with contextlib.suppress(OSError):
            path.replace(path.with_suffix(".damaged"))
    found = previous.get("runs") if isinstance(previous, dict) else None
    runs = [r for r in found if isinstance(r, dict) and r.get("status") != "running"] if isinstance(found, list) else []
    runs.append({**run.as_dict(), "status": status, "ray_version": ray.__version__,
                 "at": datetime.now(UTC).isoformat(timespec="seconds")})
    tmp = path.with_suffix(".tmp")
    tmp.write_text(json.dumps({"engine": "ray", "runs": runs}, indent=2), encoding="utf-8")
    tmp.replace(path)


def read_manifest(folder: Path) -> dict[str, Any] | None:
    """The ``ray-run.json`` of a folder of answers, or None (answers that did not come through Ray)."""
    path = folder / MANIFEST
    try:
        data = json.loads(path.read_text(encoding="utf-8"))
    except (OSError, ValueError):
        return None
    return data if isinstance(data, dict) and data.get("engine") == "ray" else None


class ProgressLine:
    """Progress while Ray runs: rich's bar on a terminal, else a timed line (done/total, rate, ETA, failures)."""

    def __init__(self, total: int, *, terminal: bool | None = None, every_s: float = PROGRESS_EVERY_S) -> None:
        self.total, self.every_s = total, every_s
        self.terminal = sys.stderr.isatty() if terminal is None else terminal
        self.last = 0.0
        self.bar: Any = None
        if self.terminal:
            from rich.progress import BarColumn, MofNCompleteColumn, Progress, TimeRemainingColumn

            self.bar = Progress("[progress.description]{task.description}", BarColumn(), MofNCompleteColumn(),
                                TimeRemainingColumn(), transient=True)
            self.task = self.bar.add_task("ray", total=total)
            self.bar.start()

    def __call__(self, run: RayRun) -> None:
        if self.bar is not None:
            self.bar.update(self.task, completed=run.done, description=f"ray: {run.errors} failed")
            return
        if run.seconds - self.last >= self.every_s or run.done >= self.total:
            self.last = run.seconds
            rate = (run.answered + run.errors) / run.seconds if run.seconds else 0.0
            left = self.total - run.done
            eta = f"{left / rate:.0f} s" if rate else "?"
            sys.stderr.write(f"ray: {run.done}/{self.total} lines ({run.skipped} answered before), "
                             f"{rate:.1f} lines/s, ETA {eta}, {run.errors} failed\n")
            sys.stderr.flush()

    def close(self) -> None:
        if self.bar is not None:
            self.bar.stop()
