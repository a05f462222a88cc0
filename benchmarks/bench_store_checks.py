"""What the library's loss at high concurrency is not: the store's waits, the disk, cores shared with the server.

Against the canned stub of ``bench_http.py``, ``run_plan`` at ``--concurrency`` (default 128) into a fresh
study, alternated ``--rounds`` times in one process (the neighbours' load moves rates by more than these
do between runs a minute apart):

* ``disk`` against ``shm``: the study in ``/tmp`` or in ``/dev/shm`` (memory); per run, % of ideal and user
  and system CPU µs per prompt (``os.times``);
* ``free`` against ``pinned``: this process and the stub on any core, or this process on core 0 and the
  stub on core 1 (``os.sched_setaffinity``; Linux), each beside the backend alone (no runner, no store);
* in every library run, how often the runner's back-pressure slept (the store behind) and the commits;
* with ``--writes``: ``no_writes`` (the store's plan and answer writes replaced by no-ops: what they cost
  the rate) and ``big_tx`` (answers committed 100 ms / 1,024 at a time instead of 20 ms / 256), each
  beside the library as it is (``as_is``).

    .venv/bin/python benchmarks/bench_store_checks.py [--rounds 4] [--prompts 5120] [--concurrency 128] [--writes]
"""

from __future__ import annotations

import argparse
import json
import os
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parent))
import bench_http  # the stub, bench prompts, the load line


def library(url: str, level: int, n: int, where: str | None, writes: bool = True,
            commit: tuple[float, int] | None = None) -> dict[str, Any]:
    """run_plan into a fresh study under ``where``: % of ideal, CPU per prompt, back-pressure sleeps, commits.

    ``writes=False``: the store records no plan and no answer (no-ops); ``commit``: (within seconds, every).
    """
    import biasatlas.runner as runner
    from biasatlas.backends.openai_compat import OpenAIBackend, OpenAIOptions
    from biasatlas.records import GenerationSettings
    from biasatlas.store import Store

    sleeps, commits = [0], [0]
    real_sleep, real_save, real_plan = runner.time.sleep, Store.save_many, Store.record_plan

    def sleep(seconds: float) -> None:  # the runner's only sleep is its back-pressure wait
        sleeps[0] += 1
        real_sleep(seconds)

    def save_many(self: Store, *args: Any, **kwargs: Any) -> None:
        commits[0] += 1
        if writes:
            real_save(self, *args, **kwargs)

    def record_plan(self: Store, run_id: int, backend_id: str, requests: Any, keys: Any = None) -> list[str]:
        return real_plan(self, run_id, backend_id, requests, keys) if writes else list(keys)

    runner.time.sleep, Store.save_many, Store.record_plan = sleep, save_many, record_plan
    within, every = commit if commit is not None else (runner.COMMIT_WITHIN_S, runner.COMMIT_EVERY)
    try:
        backend = OpenAIBackend("stub-model", OpenAIOptions(base_url=url, concurrency=level))
        with tempfile.TemporaryDirectory(dir=where) as tmp, Store(tmp) as store:
            before, started = os.times(), time.perf_counter()
            totals = runner.run_plan(bench_http.bench_prompts(n), backend, store, GenerationSettings(mode="choice"),
                                     progress=False, commit_within_s=within, commit_every=every)
            seconds, after = time.perf_counter() - started, os.times()
        backend.close()
    finally:
        runner.time.sleep, Store.save_many, Store.record_plan = real_sleep, real_save, real_plan
    assert totals.new == n, totals
    return {"pct": round(100 * n / seconds / (level / 0.05), 1),
            "user_us": round((after.user - before.user) / n * 1e6),
            "system_us": round((after.system - before.system) / n * 1e6),
            "backpressure_sleeps": sleeps[0], "commits": commits[0]}


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--rounds", type=int, default=4)
    ap.add_argument("--prompts", type=int, default=5120)
    ap.add_argument("--concurrency", type=int, default=128)
    ap.add_argument("--writes", action="store_true", help="also: the store's writes off, and larger transactions")
    ap.add_argument("--json", type=Path)
    args = ap.parse_args()
    level, n = args.concurrency, args.prompts
    results: dict[str, Any] = {"uptime_before": bench_http.uptime(), "rounds": []}
    print(results["uptime_before"], flush=True)
    with bench_http.load_stub().start_stub("--delay", "0.05", "--canned") as stub:
        assert stub.process is not None
        every = set(range(os.cpu_count() or 1))
        bench_http.bench_pipeline(stub.url, 8, 200, "choice")  # warm-up
        for k in range(args.rounds):
            row: dict[str, Any] = {"round": k + 1, "disk": library(stub.url, level, n, "/tmp"),
                                   "shm": library(stub.url, level, n, "/dev/shm")}
            for pinned in (False, True):
                os.sched_setaffinity(stub.process.pid, {1} if pinned else every)
                os.sched_setaffinity(0, {0} if pinned else every)
                alone = bench_http.bench_backend(stub.url, level, n, "choice")
                row["pinned" if pinned else "free"] = {
                    "library": library(stub.url, level, n, None),
                    "backend_alone_pct": round(100 * alone["prompts_per_s"] / (level / 0.05), 1)}
            os.sched_setaffinity(stub.process.pid, every)
            os.sched_setaffinity(0, every)
            if args.writes:
                row["as_is"] = library(stub.url, level, n, None)
                row["no_writes"] = library(stub.url, level, n, None, writes=False)
                row["big_tx"] = library(stub.url, level, n, None, commit=(0.1, 1024))
            row["load"] = bench_http.load()
            print(json.dumps(row), flush=True)
            results["rounds"].append(row)
    results["uptime_after"] = bench_http.uptime()
    print(results["uptime_after"], flush=True)
    if args.json:
        args.json.write_text(json.dumps(results, indent=2))


if __name__ == "__main__":
    main()
