"""The plan keyed lazily (as the HTTP backend takes requests) against the plan keyed first, alternated.

Against the stub of ``bench_http.py`` (its own process, canned answers after ``--delay``), ``run_plan``
of N distinct prompts into a fresh study, alternating the two ways ``--rounds`` times in one process (the
neighbours' load moves rates by more than this does between runs a minute apart). Per run: % of the
ideal rate, process CPU per prompt, the writer thread's own CPU per answer (``time.thread_time``: plan
rows, answer rows, SQLite) and the time from ``run_plan``'s call to its first request; then medians.

    .venv/bin/python benchmarks/bench_plan.py [--rounds 8] [--prompts 5120] [--concurrency 128] [--json OUT]
"""

from __future__ import annotations

import argparse
import json
import statistics
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parent))
import bench_http  # the stub, the prompts and the load line


def one_run(url: str, concurrency: int, n: int, lazy: bool) -> dict[str, Any]:
    import biasatlas.runner as runner
    from biasatlas.backends.http.client import ChatClient
    from biasatlas.backends.openai_compat import OpenAIBackend, OpenAIOptions
    from biasatlas.records import GenerationSettings
    from biasatlas.store import Store

    writer_cpu: list[float] = []
    first: list[float] = []
    real_run, real_attempt = runner._Writer._run, ChatClient.attempt

    def timed_run(self: Any) -> None:
        started = time.thread_time()
        try:
            real_run(self)
        finally:
            writer_cpu.append(time.thread_time() - started)

    async def marked_attempt(self: Any, *args: Any, **kwargs: Any) -> Any:
        if not first:
            first.append(time.perf_counter())
        return await real_attempt(self, *args, **kwargs)

    runner._Writer._run = timed_run  # type: ignore[method-assign]
    ChatClient.attempt = marked_attempt  # type: ignore[method-assign]
    OpenAIBackend.takes_requests_lazily = lazy  # type: ignore[misc]
    try:
        prompts = bench_http.bench_prompts(n)
        backend = OpenAIBackend("stub-model", OpenAIOptions(base_url=url, concurrency=concurrency))
        with tempfile.TemporaryDirectory() as tmp, Store(tmp) as store:
            cpu, started = time.process_time(), time.perf_counter()
            totals = runner.run_plan(prompts, backend, store, GenerationSettings(mode="choice"), progress=False)
            wall, cpu = time.perf_counter() - started, time.process_time() - cpu
        backend.close()
    finally:
        runner._Writer._run = real_run  # type: ignore[method-assign]
        ChatClient.attempt = real_attempt  # type: ignore[method-assign]
        OpenAIBackend.takes_requests_lazily = True  # type: ignore[misc]
    assert totals.new == n and totals.failed == 0, totals
    return {
        "pct_of_ideal": round(100 * n / wall / (concurrency / 0.05), 1),
        "cpu_us_per_prompt": round(cpu / n * 1e6),
        "writer_cpu_us_per_answer": round(writer_cpu[0] / n * 1e6),
        "first_request_ms": round((first[0] - started) * 1e3, 1),
    }


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--rounds", type=int, default=8)
    ap.add_argument("--prompts", type=int, default=5120)
    ap.add_argument("--concurrency", type=int, default=128)
    ap.add_argument("--json", type=Path)
    args = ap.parse_args()
    stub_mod = bench_http.load_stub()
    out: dict[str, Any] = {"uptime_before": bench_http.uptime(), "runs": {"lazy": [], "keyed_first": []}}
    print(out["uptime_before"], flush=True)
    with stub_mod.start_stub("--delay", "0.05", "--canned") as stub:
        one_run(stub.url, 8, 200, True)  # warm-up
        for _ in range(args.rounds):
            for name, lazy in (("lazy", True), ("keyed_first", False)):
                row = one_run(stub.url, args.concurrency, args.prompts, lazy)
                out["runs"][name].append(row)
                print(name, json.dumps(row), flush=True)
    out["medians"] = {
        name: {k: statistics.median(r[k] for r in rows) for k in rows[0]} for name, rows in out["runs"].items()
    }
    out["uptime_after"] = bench_http.uptime()
    print(json.dumps(out["medians"]), flush=True)
    print(out["uptime_after"], flush=True)
    if args.json:
        args.json.write_text(json.dumps(out, indent=2))


if __name__ == "__main__":
    main()
