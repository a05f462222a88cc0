"""A fully cached re-run of a large plan: how long it takes next to the first run, and proof that
it calls no model.

Builds ``--n`` distinct contact-style prompts (see bench_local.py), runs them once through
``run_plan`` on the real model into a Store, then re-runs the same plan ``--reruns`` times, each
time with a freshly opened Store and a fresh wrapper around the backend that counts every call
(``score_choices`` / ``generate``) and every request reaching the model. Prints one JSON object.

The first run is long on a CPU (10,000 prompts at ~8 prompts/s is ~20 minutes). With ``--study
DIR`` it can be interrupted and resumed (Ctrl-C, then the same command): the first run's time is
then the sum of ``seconds`` over the runs that answered new prompts, read from the store.

    .venv/bin/python benchmarks/bench_cache.py --n 10000 --reruns 3 --study /tmp/bench_cache
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import subprocess
import sys
import tempfile
import time
from collections.abc import Iterable, Sequence
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parent))
from bench_local import contact_prompts

from biasatlas.backends.base import Backend
from biasatlas.backends.registry import make_backend
from biasatlas.records import GenerationSettings, Request, Response
from biasatlas.runner import run_plan
from biasatlas.store import Store


class CountingBackend:
    """Passes every call on to ``inner`` and counts the calls and the requests in them."""

    def __init__(self, inner: Backend) -> None:
        self.inner = inner
        self.id = inner.id
        self.calls = 0
        self.requests = 0

    def generate(self, requests: Sequence[Request]) -> Iterable[Response]:
        self.calls += 1
        self.requests += len(requests)
        return self.inner.generate(requests)

    def score_choices(self, requests: Sequence[Request]) -> Iterable[Response]:
        self.calls += 1
        self.requests += len(requests)
        return self.inner.score_choices(requests)

    def describe(self) -> dict[str, Any]:
        """What the wrapped backend records about its model (weights digest, dtype, ...)."""
        describe = getattr(self.inner, "describe", None)
        return describe() if callable(describe) else {}

    def close(self) -> None:
        pass


def uptime() -> str:
    return subprocess.run(["uptime"], capture_output=True, text=True).stdout.strip()


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--model", default="smollm2")
    parser.add_argument("--n", type=int, default=10_000)
    parser.add_argument("--mode", choices=["choice", "generate"], default="choice")
    parser.add_argument("--reruns", type=int, default=3)
    parser.add_argument("--study", type=Path, help="study dir to keep (and resume); a temp dir if not given")
    parser.add_argument("--json", type=Path, help="also write the JSON result here")
    args = parser.parse_args()

    tmp = None if args.study else tempfile.TemporaryDirectory()
    study = args.study or Path(tmp.name)  # type: ignore[union-attr]
    settings = GenerationSettings(mode=args.mode, max_tokens=10)
    result: dict[str, Any] = {"n_prompts": args.n, "mode": args.mode, "uptime_start": uptime()}

    prompts = contact_prompts(args.n)
    started = time.perf_counter()
    backend = make_backend(args.model)
    result["model"] = backend.id
    # includes naming the model by its weights' digest (read from the digest sidecar after the first time)
    result["model_load_s"] = round(time.perf_counter() - started, 2)

    # First run (or its remainder, when resuming): the real model answers what is missing.
    with Store(study) as store:
        counter = CountingBackend(backend)
        totals = run_plan(prompts, counter, store, settings, progress=sys.stderr.isatty())
        if totals.failed or totals.pending:
            raise SystemExit(f"the first run is incomplete: {totals.as_dict()}")
        runs = store.runs("bench")
        seconds = [json.loads(t or "{}") for t in runs["totals_json"]]
        first = [t for t in seconds if t.get("new", 0) > 0]
        result["first_run"] = {
            "seconds": round(sum(t["seconds"] for t in first), 2),
            "parts": len(first),
            "new": sum(t["new"] for t in first),
            "this_invocation": {"new": totals.new, "cached": totals.cached, "model_calls": counter.calls,
                                "requests_to_model": counter.requests, "seconds": totals.seconds},
        }
    if result["first_run"]["new"] != args.n:
        raise SystemExit(f"the store {study} was not filled by this plan alone; use a fresh --study")

    # Fully cached re-runs: a fresh Store connection and a fresh counting wrapper each time.
    reruns: list[dict[str, Any]] = []
    for _ in range(args.reruns):
        began, cpu = time.perf_counter(), time.process_time()
        with Store(study) as store:
            counter = CountingBackend(backend)
            totals = run_plan(prompts, counter, store, settings, progress=False)
        reruns.append({
            "run_plan_seconds": totals.seconds,
            "wall_seconds_with_store_open": round(time.perf_counter() - began, 3),
            "cpu_seconds": round(time.process_time() - cpu, 3),  # robust to other load on the machine
            "cached": totals.cached,
            "new": totals.new,
            "model_calls": counter.calls,
            "requests_to_model": counter.requests,
            "loadavg": [round(x, 2) for x in os.getloadavg()],
        })
        if counter.calls or totals.cached != args.n:
            raise SystemExit(f"a cached re-run reached the model or missed the cache: {reruns[-1]}")
    median = statistics.median(r["wall_seconds_with_store_open"] for r in reruns)
    result["reruns"] = reruns
    result["median_rerun_cpu_seconds"] = statistics.median(r["cpu_seconds"] for r in reruns)
    result["median_rerun_seconds"] = median
    result["rerun_share_of_first_run"] = round(median / result["first_run"]["seconds"], 5)
    result["rerun_with_model_load_share"] = round(
        (median + result["model_load_s"]) / result["first_run"]["seconds"], 5
    )
    result["uptime_end"] = uptime()
    backend.close()
    if tmp is not None:
        tmp.cleanup()
    text = json.dumps(result, indent=2)
    print(text)
    if args.json:
        args.json.write_text(text + "\n", encoding="utf-8")


if __name__ == "__main__":
    main()
