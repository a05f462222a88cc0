"""The runner: get-or-compute every request of a plan, storing each answer as it arrives."""

from __future__ import annotations

import platform
import time
from collections.abc import Sequence
from dataclasses import asdict, dataclass, field
from importlib import metadata
from typing import Any

from rich.progress import BarColumn, MofNCompleteColumn, Progress, TextColumn, TimeRemainingColumn

from biasatlas import __version__
from biasatlas.backends.base import Backend, run_requests
from biasatlas.records import GenerationSettings, Prompt, Request
from biasatlas.store import Store


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


RECORDED_PACKAGES = ("torch", "transformers", "peft", "gguf", "openai")


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
) -> RunTotals:
    """Ask ``backend`` every prompt × sample not already answered in ``store``.

    The plan is recorded first, so an interrupted run leaves a complete record of what was
    intended; each response is committed when it arrives; a KeyboardInterrupt marks the run
    ``interrupted`` (keeping every answer) and propagates. Re-running asks only what is missing.
    """
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
    keys = store.record_plan(run_id, backend.id, requests)
    totals.planned = len(requests)
    cached = store.cached_keys(keys)
    # Distinct missing keys only: the same question in two design cells is asked once.
    todo: dict[str, Request] = {}
    for request, key in zip(requests, keys, strict=True):
        if key not in cached and key not in todo:
            todo[key] = request
    totals.cached = sum(1 for k in keys if k in cached)
    # Length-sorted so batches hold similar lengths (less padding); the backend may re-sort.
    pending = sorted(todo.values(), key=lambda r: len(r.prompt.text))
    answered_keys: set[str] = set()
    failed_keys: set[str] = set()
    status = "interrupted"
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
        try:
            for response in run_requests(backend, pending):
                asked = todo.get(response.key)
                if asked is None:  # a backend must answer with the keys it was given
                    raise RuntimeError(f"backend {backend.id} returned an unknown key {response.key}")
                store.save(response, asked, run_id)
                if response.ok:
                    answered_keys.add(response.key)
                else:
                    failed_keys.add(response.key)
                if response.info.get("choice_fallback"):
                    totals.info["choice_fallback"] = response.info["choice_fallback"]
                bar.update(task, advance=1, new=len(answered_keys), failed=len(failed_keys - answered_keys))
            status = "complete" if not failed_keys - answered_keys else "complete_with_errors"
        finally:
            # Counted per planned item: a key shared by several items counts for each of them.
            totals.new = sum(1 for k in keys if k in answered_keys)
            unanswered = failed_keys - answered_keys
            totals.failed = sum(1 for k in keys if k in unanswered)
            totals.pending = totals.planned - totals.cached - totals.new - totals.failed
            totals.seconds = round(time.perf_counter() - started, 3)
            totals.status = status
            run_stats = getattr(backend, "run_stats", None)
            if callable(run_stats):  # HTTP backends: token usage, cost, retries and failures by cause
                totals.info.update(run_stats())
            store.finish_run(run_id, status, totals.as_dict())
    return totals
