"""The runner: get-or-compute every request of a plan, storing each answer as it arrives.

Answers are handed to a writer thread that commits them: those that arrive together (within
``COMMIT_WITHIN_S`` of the first, at most ``COMMIT_EVERY``) share one transaction, so a fast server
is not held back by one commit per answer. An answer is *acknowledged* once its transaction has
committed: the progress bar, ``on_commit`` and the run's totals count only acknowledged answers, and
a SIGKILL loses none of them (one that arrived but was not yet committed is asked again on resume).
"""

from __future__ import annotations

import platform
import queue
import threading
import time
from collections.abc import Callable, Sequence
from dataclasses import asdict, dataclass, field
from importlib import metadata
from typing import Any

from rich.progress import BarColumn, MofNCompleteColumn, Progress, TextColumn, TimeRemainingColumn

from biasatlas import __version__
from biasatlas.backends.base import Backend, BackendStopped, run_requests
from biasatlas.records import GenerationSettings, Prompt, Request, Response
from biasatlas.store import Store

#: The most answers one transaction commits.
COMMIT_EVERY = 256
#: The longest an answer waits for its transaction once it has arrived (seconds).
COMMIT_WITHIN_S = 0.02
_STOP = object()


@dataclass
class RunTotals:
    """Counts of one run: what was planned, found in the cache, newly answered, and failed."""

    run_id: int
    planned: int = 0
    cached: int = 0
    new: int = 0
    failed: int = 0
    pending: int = 0
    seconds: float = 0.0
    status: str = "running"
    info: dict[str, Any] = field(default_factory=dict)

    def as_dict(self) -> dict[str, Any]:
        return asdict(self)


RECORDED_PACKAGES = ("torch", "transformers", "peft", "gguf", "aiohttp", "scipy", "statsmodels")


def library_versions() -> dict[str, str | None]:
    """Versions of biasatlas, Python and the libraries that can change answers (None: not installed).

    Read from the installed distributions' metadata, so nothing heavy is imported.
    """
    versions: dict[str, str | None] = {"biasatlas": __version__, "python": platform.python_version()}
    for name in RECORDED_PACKAGES:
        try:
            versions[name] = metadata.version(name)
        except metadata.PackageNotFoundError:
            versions[name] = None
    return versions


class _Writer:
    """Commits the answers the runner hands over, in a thread of its own, grouped into transactions."""

    def __init__(
        self,
        store: Store,
        run_id: int,
        plan: tuple[str, Sequence[Request], list[str]],
        every: int,
        within: float,
        on_commit: Callable[[int, int], None] | None,
    ) -> None:
        self.store, self.run_id, self.every, self.within, self.on_commit = store, run_id, every, within, on_commit
        self.plan: tuple[str, Sequence[Request], list[str]] | None = plan
        self.queue: queue.SimpleQueue[Any] = queue.SimpleQueue()
        self.backlog = 4 * every
        self.closing = threading.Event()  # set by close(): the last batch is committed without waiting
        self.answered: set[str] = set()
        self.failed: set[str] = set()
        self.counts = (0, 0)  # (answered, failed) committed so far: read by the runner's thread
        self.error: BaseException | None = None
        self.thread = threading.Thread(target=self._run, name="biasatlas-store", daemon=True)
        self.thread.start()

    def put(self, response: Response, request: Request) -> None:
        if self.error is not None:
            raise self.error
        # Backpressure: a store slower than the server holds the runner back (bounded memory, and
        # at most a few batches received but not yet acknowledged).
        if self.queue.qsize() >= self.backlog:  # (is_alive, a Python call, only then: this runs per answer)
            while self.queue.qsize() >= self.backlog and self.thread.is_alive():
                time.sleep(0.001)
        self.queue.put((response, request))

    def close(self) -> None:
        """Commit what was handed over and stop (a second Ctrl-C waits for that commit too)."""
        self.queue.put(_STOP)
        self.closing.set()
        interrupted = False
        while self.thread.is_alive():
            try:
                self.thread.join()
            except KeyboardInterrupt:
                interrupted = True
        if interrupted:
            raise KeyboardInterrupt

    def _run(self) -> None:
        # Woken by the first answer, the writer waits ``within`` seconds (or until close; the GIL is free: no
        # wake-up per answer), then takes what has arrived meanwhile, up to ``every``, in one commit.
        rested = False
        try:  # the plan first: no answer is committed before the plan that asked it
            assert self.plan is not None
            self.store.record_plan(self.run_id, *self.plan)
        except BaseException as exc:
            self.error = exc
            return
        self.plan = None
        while True:
            first = self.queue.get()
            if first is _STOP:
                return
            if not rested and self.within > 0:
                self.closing.wait(self.within)
            batch, stop = [first], False
            while len(batch) < self.every:
                try:
                    item = self.queue.get_nowait()
                except queue.Empty:
                    break
                if item is _STOP:
                    stop = True
                    break
                batch.append(item)
            rested = len(batch) >= self.every  # a full batch: more are waiting, commit them at once
            try:
                self.store.save_many(batch, self.run_id)
            except BaseException as exc:  # raised in the runner's thread at its next answer
                self.error = exc
                return
            for response, _ in batch:
                (self.answered if response.ok else self.failed).add(response.key)
            self.counts = (len(self.answered), len(self.failed - self.answered))
            if self.on_commit is not None:
                self.on_commit(*self.counts)
            if stop:
                return


def build_requests(
    prompts: Sequence[Prompt], settings: GenerationSettings, samples: int = 1
) -> list[Request]:
    """One request per prompt and sample index."""
    return [
        Request(prompt=p, settings=settings, sample_index=s) for p in prompts for s in range(samples)
    ]


def run_plan(
    prompts: Sequence[Prompt],
    backend: Backend,
    store: Store,
    settings: GenerationSettings,
    *,
    samples: int = 1,
    config: dict[str, Any] | None = None,
    progress: bool = True,
    on_commit: Callable[[int, int], None] | None = None,
    commit_every: int = COMMIT_EVERY,
    commit_within_s: float = COMMIT_WITHIN_S,
) -> RunTotals:
    """Ask ``backend`` every prompt × sample not already answered in ``store``.

    The plan is recorded first (the writer's first transaction, committed while the first
    requests are out), so an interrupted run leaves a complete record of what was intended;
    answers are committed as they arrive (see the module's docstring), and
    ``on_commit(answered, failed)`` is called (from the writer thread) after each commit. A
    KeyboardInterrupt marks the run ``interrupted`` (keeping every answer) and propagates; a
    backend that raises :class:`BackendStopped` ends the run ``stopped`` with
    ``info["stop_reason"]``. Re-running asks only what is missing.
    """
    from biasatlas.backends.http.bridge import quiet_gc  # asyncio: imported when a run starts

    with quiet_gc():  # a large plan allocates a lot: see quiet_gc
        return _run_plan(prompts, backend, store, settings, samples, config, progress, on_commit,
                         commit_every, commit_within_s)


def _run_plan(
    prompts: Sequence[Prompt],
    backend: Backend,
    store: Store,
    settings: GenerationSettings,
    samples: int,
    config: dict[str, Any] | None,
    progress: bool,
    on_commit: Callable[[int, int], None] | None,
    commit_every: int,
    commit_within_s: float,
) -> RunTotals:
    started = time.perf_counter()
    probe = prompts[0].probe if prompts else "none"
    # Recorded with every run: the decoding settings, what the backend says about the model it
    # runs (weights digest or revision, dtype, quantisation; an HTTP server's URL, never its key)
    # and the library versions.
    run_config = {"settings": settings.model_dump(), "samples": samples, **(config or {})}
    describe = getattr(backend, "describe", None)
    if callable(describe):
        run_config.setdefault("backend", describe())
    run_config.setdefault("versions", library_versions())
    run_id = store.start_run(probe, backend.id, run_config, __version__)
    totals = RunTotals(run_id=run_id)
    requests = build_requests(prompts, settings, samples)
    keys = [r.cache_key(backend.id) for r in requests]
    totals.planned = len(requests)
    cached = store.cached_keys(keys)  # read before the writer thread uses the connection
    # Distinct missing keys only: the same question in two design cells is asked once.
    todo: dict[str, Request] = {}
    for request, key in zip(requests, keys, strict=True):
        if key not in cached and key not in todo:
            todo[key] = request
    totals.cached = sum(1 for k in keys if k in cached)
    # Length-sorted so batches hold similar lengths (less padding); the backend may re-sort.
    pending = sorted(todo.values(), key=lambda r: len(r.prompt.text))
    outcome = "interrupted"
    columns = (
        TextColumn("[bold]{task.description}"),
        BarColumn(),
        MofNCompleteColumn(),
        TextColumn("cached {task.fields[cached]} · new {task.fields[new]} · failed {task.fields[failed]}"),
        TimeRemainingColumn(),
    )
    with Progress(*columns, disable=not progress, transient=False) as bar:
        task = bar.add_task(
            f"{probe} · {backend.id}", total=len(todo), cached=totals.cached, new=0, failed=0
        )
        # The plan is committed by the writer, as its first transaction, while the first requests go out.
        writer = _Writer(
            store, run_id, (backend.id, requests, keys), max(1, commit_every), commit_within_s, on_commit
        )

        shown = (-1, -1)

        def show() -> None:  # acknowledged (committed) answers only; they change once per commit
            nonlocal shown
            if writer.counts != shown:
                shown = new, failed = writer.counts
                bar.update(task, completed=new + failed, new=new, failed=failed)

        try:
            for response in run_requests(backend, pending):
                asked = todo.get(response.key)
                if asked is None:  # a backend must answer with the keys it was given
                    raise RuntimeError(f"backend {backend.id} returned an unknown key {response.key}")
                writer.put(response, asked)
                if response.info.get("choice_fallback"):
                    totals.info["choice_fallback"] = response.info["choice_fallback"]
                if progress:
                    show()
            outcome = "done"
        except BackendStopped as stop:
            outcome = "stopped"
            totals.info["stop_reason"] = stop.reason
        finally:
            writer.close()
            show()
            # Counted per planned item: a key shared by several items counts for each of them.
            unanswered = writer.failed - writer.answered
            totals.new = sum(1 for k in keys if k in writer.answered)
            totals.failed = sum(1 for k in keys if k in unanswered)
            totals.pending = totals.planned - totals.cached - totals.new - totals.failed
            totals.seconds = round(time.perf_counter() - started, 3)
            if writer.error is not None:
                outcome = "interrupted"
            elif outcome == "done":
                outcome = "complete_with_errors" if unanswered else "complete"
            totals.status = outcome
            run_stats = getattr(backend, "run_stats", None)
            if callable(run_stats):  # HTTP backends: token usage, cost, retries and failures by cause
                stop_reason = totals.info.get("stop_reason")
                totals.info.update(run_stats())
                if stop_reason is not None:
                    totals.info["stop_reason"] = stop_reason
            store.finish_run(run_id, outcome, totals.as_dict())
    if writer.error is not None:  # the store failed after the last answer was handed over
        raise writer.error
    return totals
