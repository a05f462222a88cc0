"""The runner: get-or-compute every request of a plan, storing each answer as it arrives.

Answers are handed to a writer thread that commits them: those that arrive together (within
``COMMIT_WITHIN_S`` of the first, at most ``COMMIT_EVERY``) share one transaction, so a fast server
is not held back by one commit per answer. An answer is *acknowledged* once its transaction has
committed: the progress bar, ``on_commit`` and the run's totals count only acknowledged answers, and
a SIGKILL loses none of them (one that arrived but was not yet committed is asked again on resume).
"""

from __future__ import annotations

import contextlib
import platform
import queue
import threading
import time
from collections.abc import Callable, Iterable, Sequence
from dataclasses import asdict, dataclass, field
from importlib import metadata
from typing import TYPE_CHECKING, Any, cast

from rich.progress import BarColumn, MofNCompleteColumn, Progress, TextColumn, TimeRemainingColumn

from biasatlas import __version__
from biasatlas.backends.base import Backend, BackendStopped, run_requests
from biasatlas.planning import Plan, anything_to_ask
from biasatlas.progress import CURRENT_AUDIT, Counts, TimedLines
from biasatlas.records import GenerationSettings, Prompt, Request, Response
from biasatlas.store import Store

if TYPE_CHECKING:
    from biasatlas.backends.base import LazyBackend

#: The most answers one transaction commits.
COMMIT_EVERY = 256
#: The longest an answer waits for its transaction once it has arrived (seconds).
COMMIT_WITHIN_S = 0.02
#: the status of a run whose every answer the study held already: it asked nothing (and loaded no model)
NOTHING_TO_ASK = "nothing to ask"
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


def installed_version(name: str) -> str | None:
    """The version of the installed distribution ``name``, as ``importlib.metadata.version`` reads it
    (None: not installed).

    Taken from the metadata's header block alone: ``metadata.version`` parses the whole file with
    the email parser, long description included (~1 ms a package, 7 of the 12 ms before a run's
    first request). Headers end at the first blank line; field names ignore case.
    """
    try:
        dist = metadata.distribution(name)
    except metadata.PackageNotFoundError:
        return None
    text = dist.read_text("METADATA") or dist.read_text("PKG-INFO")
    if not text:
        return dist.version  # an unusual layout: the library's own reading
    for line in text.splitlines():
        if not line.strip():
            return None
        if line[:8].lower() == "version:":
            return line[8:].lstrip(" \t")  # (trailing blanks kept, as the email parser keeps them)
    return None


def library_versions() -> dict[str, str | None]:
    """Versions of biasatlas, Python and the libraries that can change answers (None: not installed).

    Read from the installed distributions' metadata, so nothing heavy is imported.
    """
    versions: dict[str, str | None] = {"biasatlas": __version__, "python": platform.python_version()}
    for name in RECORDED_PACKAGES:
        versions[name] = installed_version(name)
    return versions


def known_secrets(backend: Backend) -> list[str]:
    """The secret values a backend sends (an HTTP backend's key and URL passwords; none for local models)."""
    known = getattr(getattr(backend, "options", None), "known_secrets", None)
    return [str(v) for v in known()] if callable(known) else []


class _Writer:
    """Commits the answers the runner hands over, in a thread of its own, grouped into transactions."""

    def __init__(
        self,
        store: Store,
        run_id: int,
        backend_id: str,
        every: int,
        within: float,
        on_commit: Callable[[int, int], None] | None,
    ) -> None:
        self.store, self.run_id, self.backend_id = store, run_id, backend_id
        self.every, self.within, self.on_commit = every, within, on_commit
        self.queue: queue.SimpleQueue[Any] = queue.SimpleQueue()
        self.backlog = 4 * every
        self.closing = threading.Event()  # set by close(): the last batch is committed without waiting
        self.answered: set[str] = set()
        self.failed: set[str] = set()
        self.counts = (0, 0)  # (answered, failed) committed so far: read by the runner's thread
        self.error: BaseException | None = None
        self.thread = threading.Thread(target=self._run, name="biasatlas-store", daemon=True)
        self.thread.start()

    def put_plan(self, requests: list[Request], keys: list[str]) -> None:
        """Record a chunk of the plan: committed before any answer handed over after it."""
        if self.error is not None:
            raise self.error
        self.queue.put(_PlanChunk(requests, keys))

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
        # wake-up per answer), then takes what has arrived meanwhile, up to ``every``, in one commit. A chunk
        # of the plan is committed the moment it is taken: its answers come after it in the queue.
        rested = False
        try:
            while True:
                first = self.queue.get()
                if first is _STOP:
                    return
                if isinstance(first, _PlanChunk):
                    self.store.record_plan(self.run_id, self.backend_id, first.requests, first.keys)
                    continue
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
                    if isinstance(item, _PlanChunk):
                        self.store.record_plan(self.run_id, self.backend_id, item.requests, item.keys)
                        continue
                    batch.append(item)
                rested = len(batch) >= self.every  # a full batch: more are waiting, commit them at once
                self.store.save_many(batch, self.run_id)
                for response, _ in batch:
                    (self.answered if response.ok else self.failed).add(response.key)
                self.counts = (len(self.answered), len(self.failed - self.answered))
                if self.on_commit is not None:
                    self.on_commit(*self.counts)
                if stop:
                    return
        except BaseException as exc:  # raised in the runner's thread at its next answer
            self.error = exc


@dataclass(frozen=True)
class _PlanChunk:
    requests: list[Request]
    keys: list[str]


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
    progress_interval: float | None = None,
) -> RunTotals:
    """Ask ``backend`` every prompt × sample not already answered in ``store``.

    The plan is recorded a chunk at a time (:mod:`biasatlas.planning`), each chunk committed before
    any of its requests is asked, and the rest after an interrupt, so an interrupted run leaves a
    complete record of what was intended; a backend that takes its requests lazily (HTTP) gets the
    first ones while the rest is keyed, others the whole plan, keyed first. Answers are committed as
    they arrive (see the module's docstring), and ``on_commit(answered, failed)`` is called (from the
    writer thread) after each commit. A KeyboardInterrupt marks the run ``interrupted`` (keeping every
    answer) and propagates; a backend that raises :class:`BackendStopped` ends the run ``stopped`` with
    ``info["stop_reason"]``. Re-running asks only what is missing; a run that finds every answer cached
    is recorded as ``nothing to ask``, and a backend that loads its model lazily (local models) is not
    loaded then. ``progress``: rich's bar on a terminal (stderr), else a plain line every
    ``progress_interval`` seconds (:mod:`biasatlas.progress`).
    """
    from biasatlas.backends.http.bridge import quiet_gc  # asyncio: imported when a run starts

    with quiet_gc():  # a large plan allocates a lot: see quiet_gc
        return _run_plan(prompts, backend, store, settings, samples, config, progress, on_commit,
                         commit_every, commit_within_s, progress_interval)


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
    progress_interval: float | None,
) -> RunTotals:
    started = time.perf_counter()
    probe = prompts[0].probe if prompts else "none"
    unloaded = getattr(backend, "loaded", True) is False
    if unloaded and anything_to_ask(prompts, settings, samples, backend.id, store.cached_keys):
        # Loaded before the run is recorded: a model that cannot load fails as it did when opened, and the
        # record describes the loaded model. A run with nothing to ask leaves it unloaded.
        cast(Any, backend).load()
    # Recorded with every run: the decoding settings, what the backend says about the model it
    # runs (weights digest or revision, dtype, quantisation; an HTTP server's URL, never its key)
    # and the library versions.
    run_config = {"settings": settings.model_dump(), "samples": samples, **(config or {})}
    describe = getattr(backend, "describe", None)
    if callable(describe):
        run_config.setdefault("backend", describe())
    run_config.setdefault("versions", library_versions())
    store.hide(known_secrets(backend))  # an echoed key is masked in the answers, and counted
    masked_before = store.masked
    run_id = store.start_run(probe, backend.id, run_config, __version__, planned=len(prompts) * samples)
    totals = RunTotals(run_id=run_id)
    outcome = "interrupted"
    columns = (
        TextColumn("[bold]{task.description}"),
        BarColumn(),
        MofNCompleteColumn(),
        TextColumn("cached {task.fields[cached]} · new {task.fields[new]} · failed {task.fields[failed]}"),
        TimeRemainingColumn(),
    )
    lazy = cast("LazyBackend", backend) if getattr(backend, "takes_requests_lazily", False) else None
    from rich.console import Console

    err = Console(stderr=True)
    on_terminal = err.is_terminal
    with Progress(*columns, console=err, disable=not (progress and on_terminal), transient=False) as bar, \
            contextlib.ExitStack() as stack:
        # The plan is recorded by the writer, a chunk at a time, each before any of its requests is asked;
        # the cache is read beside the writer, on a connection of its own (Store.key_reader).
        lookup = stack.enter_context(store.key_reader())
        writer = _Writer(store, run_id, backend.id, max(1, commit_every), commit_within_s, on_commit)
        plan = Plan(prompts, settings, samples, backend.id, lookup, writer.put_plan)
        task = bar.add_task(f"{probe} · {backend.id}", total=plan.planned, cached=0, new=0, failed=0)
        shown = (-1, -1, -1)
        known = {"total": plan.planned, "cached": 0}  # the keyed plan's figures, as the runner's thread last saw them

        def show() -> None:  # acknowledged (committed) answers only; they change once per commit
            nonlocal shown
            now = (*writer.counts, plan.unkeyed)
            if now != shown:
                if now[2] != shown[2]:  # a chunk keyed since: what is left to ask is known better
                    known["cached"] = plan.cached_count()
                    known["total"] = len(plan.todo) + plan.unkeyed + known["cached"]
                    bar.update(task, total=len(plan.todo) + plan.unkeyed, cached=known["cached"])
                new, failed, _ = shown = now
                bar.update(task, completed=new + failed, new=new, failed=failed)

        if progress and not on_terminal:  # a log file: a plain line every few seconds, from a thread of its own
            def counts() -> Counts:
                new, failed = writer.counts
                return Counts(total=known["total"], cached=known["cached"], new=new, failed=failed)

            ticker = TimedLines(f"{probe} · {backend.id}", counts, interval=progress_interval,
                                audit=CURRENT_AUDIT.get())
            stack.callback(ticker.stop)
            ticker.start()

        answers: Iterable[Response] = ()
        try:
            if lazy is not None:  # keyed as the backend takes them: the first requests go out at once
                ask = lazy.score_choices if settings.mode == "choice" else lazy.generate
                answers = ask(plan.pending())
            else:  # keyed first; length-sorted so batches hold similar lengths (less padding)
                answers = run_requests(backend, sorted(plan.pending(), key=lambda r: len(r.prompt.text)))
            if progress:
                show()
            for response in answers:
                request = plan.todo.get(response.key)
                if request is None:  # a backend must answer with the keys it was given
                    raise RuntimeError(f"backend {backend.id} returned an unknown key {response.key}")
                writer.put(response, request)
                if response.info.get("choice_fallback"):
                    totals.info["choice_fallback"] = response.info["choice_fallback"]
                if progress:
                    show()
            outcome = "done"
        except BackendStopped as stop:
            outcome = "stopped"
            totals.info["stop_reason"] = stop.reason
        finally:
            plan_error: Exception | None = None
            try:  # the whole plan is recorded, even after an interrupt (a second Ctrl-C leaves it part-way)
                close = getattr(answers, "close", None)
                if close is not None:  # nothing more is asked: a loop in a thread of its own stops pulling
                    close()
                plan.finish()
            except KeyboardInterrupt:
                outcome = "interrupted"
            except Exception as exc:  # a failed writer (raised below) or cache lookup: the run is recorded first
                plan_error, outcome = exc, "interrupted"
            writer.close()
            if progress:
                show()
            # Counted per planned item: a key shared by several items counts for each of them.
            keys = plan.keys
            unanswered = writer.failed - writer.answered
            totals.planned = plan.planned
            totals.cached = plan.cached_count()
            totals.new = sum(1 for k in keys if k in writer.answered)
            totals.failed = sum(1 for k in keys if k in unanswered)
            totals.pending = totals.planned - totals.cached - totals.new - totals.failed
            totals.seconds = round(time.perf_counter() - started, 3)
            if writer.error is not None:
                outcome = "interrupted"
            elif outcome == "done":
                outcome = "complete_with_errors" if unanswered else "complete"
                if outcome == "complete" and totals.cached == totals.planned and not writer.answered:
                    outcome = NOTHING_TO_ASK
            totals.status = outcome
            run_stats = getattr(backend, "run_stats", None)
            if callable(run_stats):  # HTTP backends: token usage, cost, retries and failures by cause
                stop_reason = totals.info.get("stop_reason")
                totals.info.update(run_stats())
                if stop_reason is not None:
                    totals.info["stop_reason"] = stop_reason
            if store.masked > masked_before:
                totals.info["secrets_masked"] = store.masked - masked_before
            store.finish_run(run_id, outcome, totals.as_dict())
    if writer.error is not None:  # the store failed after the last answer was handed over
        raise writer.error
    if plan_error is not None:
        raise plan_error
    return totals
