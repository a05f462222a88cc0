"""`batch export`: a probe's plan recorded as a run, and every request the study lacks written as batch files.

The plan is the one ``biasatlas run PROBE`` makes (``probe.plan``, ``probe.settings``,
``probe.samples``), recorded in the study as a run of status ``exported`` (prompts and items), so
``summary`` and ``report`` know every prompt and the answers can be imported later. Requests whose
answer the study holds already are not written; one line per distinct missing request.
"""

from __future__ import annotations

import hashlib
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any

from biasatlas import __version__
from biasatlas.batch.bodies import BATCH_PRICE_FACTOR, BatchBackend
from biasatlas.batch.formats import write_parts
from biasatlas.records import Request
from biasatlas.runner import build_requests, library_versions

if TYPE_CHECKING:
    from biasatlas.backends.openai_compat import OpenAIOptions
    from biasatlas.probes.base import Probe, ProbeConfig

#: status of a run whose requests were written to batch files and not all answered yet
EXPORTED = "exported"


@dataclass
class ExportResult:
    """What an export wrote: the run, its counts, the files and the estimated tokens and cost."""

    run_id: int
    backend_id: str
    planned: int
    cached: int
    exported: int  # lines written (distinct requests)
    files: list[Path] = field(default_factory=list)
    prompt_tokens: int = 0  # estimated
    completion_tokens: int = 0  # at most (max_tokens of each line)
    cost_usd: float | None = None  # at the batch price
    cost_usd_live: float | None = None  # the same tokens at the --http prices

    def as_dict(self) -> dict[str, Any]:
        return {
            "run_id": self.run_id, "backend_id": self.backend_id, "planned": self.planned, "cached": self.cached,
            "exported": self.exported, "files": [str(p) for p in self.files],
            "prompt_tokens_estimate": self.prompt_tokens, "completion_tokens_max": self.completion_tokens,
            "batch_price_factor": BATCH_PRICE_FACTOR, "cost_usd_batch": self.cost_usd,
            "cost_usd_live": self.cost_usd_live,
        }


def estimate_tokens(request: Request, body: dict[str, Any]) -> tuple[int, int]:
    """(prompt tokens, completion tokens at most) of one line: the HTTP backend's rate-limit estimate."""
    prompt = len(request.prompt.text) // 4 + 8 * len(request.prompt.messages)
    return prompt, int(body.get("max_tokens") or 0)


def batch_cost(prompt_tokens: int, completion_tokens: int, options: OpenAIOptions) -> tuple[float | None, float | None]:
    """(batch cost, live cost) in USD from the --http prices per million tokens; None without a price."""
    from biasatlas.backends.http.usage import cost_usd

    prices = (options.price_prompt, options.price_completion)
    batch = [None if p is None else p * BATCH_PRICE_FACTOR for p in prices]
    return cost_usd(prompt_tokens, completion_tokens, *batch), cost_usd(prompt_tokens, completion_tokens, *prices)


def export_batch(
    probe: Probe,
    config: ProbeConfig,
    model: str,
    options: OpenAIOptions,
    study: str | Path,
    out: Path,
    *,
    max_lines: int,
    record: dict[str, Any] | None = None,
) -> ExportResult:
    """Plan ``probe`` under ``config``, record the plan in ``study`` and write the missing requests to ``out``."""
    from biasatlas.lock import study_writer
    from biasatlas.probes.base import ProbeConfigError
    from biasatlas.store import Store

    prompts = probe.plan(config)
    if not prompts:
        raise ProbeConfigError("the plan is empty: nothing to ask (check the filters)")
    settings = probe.settings(config)
    samples = probe.samples(config)
    backend = BatchBackend(model, options, mode=settings.mode)
    requests = build_requests(prompts, settings, samples)
    keys = [r.cache_key(backend.id) for r in requests]
    run_config = {"settings": settings.model_dump(), "samples": samples, **probe.run_record(config),
                  **(record or {}), "backend": backend.describe(), "versions": library_versions()}
    with study_writer(study), Store(study) as store:
        run_id = store.start_run(probe.name, backend.id, run_config, __version__)
        store.record_plan(run_id, backend.id, requests, keys)
        cached = store.cached_keys(keys)
        todo: dict[str, Request] = {}
        for request, key in zip(requests, keys, strict=True):
            if key not in cached and key not in todo:
                todo[key] = request
        result = ExportResult(run_id, backend.id, len(requests), sum(1 for k in keys if k in cached), len(todo))
        lines = []
        for request in todo.values():
            line = backend.line(request)
            prompt_tokens, completion_tokens = estimate_tokens(request, line["body"])
            result.prompt_tokens += prompt_tokens
            result.completion_tokens += completion_tokens
            lines.append(line)
        # Run numbers are per study: the digest of the requests keeps two studies' (or two plans') files
        # in one folder apart; the same requests exported again get the same names and the same content.
        digest = hashlib.sha1("\n".join(todo).encode()).hexdigest()[:8]
        stem = f"{probe.name}-run{run_id}-{digest}"
        result.files = write_parts(lines, out, max_lines, stem=stem) if lines else []
        result.cost_usd, result.cost_usd_live = batch_cost(result.prompt_tokens, result.completion_tokens, options)
        pending = sum(1 for k in keys if k not in cached)
        status = EXPORTED if pending else "complete"
        totals = {"run_id": run_id, "planned": len(requests), "cached": result.cached, "new": 0, "failed": 0,
                  "pending": pending, "seconds": 0.0, "status": status,
                  "info": {"batch": result.as_dict()}}
        store.finish_run(run_id, status, totals)
    return result
