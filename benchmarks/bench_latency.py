"""Where a request's cycle goes at a given concurrency: the library beside the bare client, alternated.

Each worker's cycle is one request's latency (from the POST to its parsed answer: the server's
delay, its queue, the network and the client's share of the event loop) plus the worker's own gap
before its next POST (scoring, the Response, the next request's key and body). ``% of ideal`` is
delay / cycle. For the library (``run_plan`` into a fresh study, answers committed), the latency is
timed around ``ChatClient.attempt`` and the gap from one attempt's end to the same task's next
attempt; the run's fixed costs are given apart: from ``run_plan``'s call to its first request, and
from its last answer to ``run_plan``'s return (last commit, run record). For the bare client
(aiohttp on uvloop, bodies parsed, nothing stored), the same two times around its POST.

    .venv/bin/python benchmarks/bench_latency.py [--levels 32,128] [--rounds 4] [--seconds 2] [--json OUT]
"""

from __future__ import annotations

import argparse
import asyncio
import json
import statistics
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parent))
import bench_http  # the stub, bench prompts, the load line


class Timings:
    """Per-request latencies and per-worker gaps (seconds) of one run."""

    def __init__(self) -> None:
        self.latencies: list[float] = []
        self.gaps: list[float] = []
        self.last_end: dict[object, float] = {}
        self.first_start: float | None = None
        self.last_stop = 0.0

    def started(self, worker: object) -> float:
        now = time.perf_counter()
        if self.first_start is None:
            self.first_start = now
        if worker in self.last_end:
            self.gaps.append(now - self.last_end[worker])
        return now

    def ended(self, worker: object, began: float) -> None:
        now = self.last_stop = self.last_end[worker] = time.perf_counter()
        self.latencies.append(now - began)

    def summary(self, n: int, seconds: float, ideal: float) -> dict[str, Any]:
        return {
            "pct": round(100 * n / seconds / ideal, 1),
            "latency_ms": round(1e3 * statistics.mean(self.latencies), 2),
            "gap_ms": round(1e3 * statistics.mean(self.gaps), 3) if self.gaps else None,
        }


def library(url: str, level: int, n: int) -> dict[str, Any]:
    """run_plan into a fresh study, with ChatClient.attempt timed."""
    from biasatlas.backends.http import client as http_client
    from biasatlas.backends.openai_compat import OpenAIBackend, OpenAIOptions
    from biasatlas.records import GenerationSettings
    from biasatlas.runner import run_plan
    from biasatlas.store import Store

    timings = Timings()
    original = http_client.ChatClient.attempt

    async def attempt(self: Any, payload: bytes, timeout: Any = None, url: Any = None, choices: bool = True) -> Any:
        worker = asyncio.current_task()
        began = timings.started(worker)
        try:
            return await original(self, payload, timeout, url, choices)
        finally:
            timings.ended(worker, began)

    http_client.ChatClient.attempt = attempt  # type: ignore[method-assign]
    try:
        prompts = bench_http.bench_prompts(n)
        backend = OpenAIBackend("stub-model", OpenAIOptions(base_url=url, concurrency=level))
        with tempfile.TemporaryDirectory() as tmp, Store(tmp) as store:
            started = time.perf_counter()
            totals = run_plan(prompts, backend, store, GenerationSettings(mode="choice"), progress=False)
            ended = time.perf_counter()
        backend.close()
    finally:
        http_client.ChatClient.attempt = original  # type: ignore[method-assign]
    assert totals.new == n and totals.failed == 0, totals
    out = timings.summary(n, ended - started, level / 0.05)
    assert timings.first_start is not None
    out["to_first_request_ms"] = round(1e3 * (timings.first_start - started), 1)
    out["after_last_answer_ms"] = round(1e3 * (ended - timings.last_stop), 1)
    return out


def bare(url: str, level: int, n: int) -> dict[str, Any]:
    """bench_http's bare client on uvloop, its POSTs timed the same way."""
    import aiohttp
    import uvloop

    timings = Timings()
    body = json.dumps({"model": "stub-model", "max_tokens": 1, "logprobs": True, "top_logprobs": 20,
                       "messages": [{"role": "user", "content": "x"}]})

    async def main() -> float:
        todo = iter(range(n))
        async with aiohttp.ClientSession(connector=aiohttp.TCPConnector(limit=level)) as session:

            async def worker() -> None:
                me = asyncio.current_task()
                for i in todo:
                    payload = body.replace('"x"', f'"q{i}"').encode()
                    began = timings.started(me)
                    async with session.post(f"{url}/chat/completions", data=payload,
                                            headers={"Content-Type": "application/json"}) as resp:
                        json.loads(await resp.read())
                    timings.ended(me, began)

            started = time.perf_counter()
            await asyncio.gather(*(worker() for _ in range(level)))
            return time.perf_counter() - started

    with asyncio.Runner(loop_factory=uvloop.new_event_loop) as runner:
        seconds = runner.run(main())
    return timings.summary(n, seconds, level / 0.05)


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--levels", default="32,128")
    ap.add_argument("--rounds", type=int, default=4)
    ap.add_argument("--seconds", type=float, default=2.0, help="ideal duration of each run")
    ap.add_argument("--json", type=Path)
    args = ap.parse_args()
    results: dict[str, Any] = {"uptime_before": bench_http.uptime(), "levels": {}}
    print(results["uptime_before"], flush=True)
    with bench_http.load_stub().start_stub("--delay", "0.05", "--canned") as stub:
        library(stub.url, 8, 200)  # warm-up: imports, page cache
        for level in (int(x) for x in args.levels.split(",")):
            n = int(level / 0.05 * args.seconds)
            rows = []
            for k in range(args.rounds):
                row = {"round": k + 1, "library": library(stub.url, level, n), "bare": bare(stub.url, level, n),
                       "load": bench_http.load()}
                print(json.dumps({"concurrency": level, **row}), flush=True)
                rows.append(row)
            medians = {side: {field: statistics.median(r[side][field] for r in rows) for field in rows[0][side]}
                       for side in ("library", "bare")}
            results["levels"][str(level)] = {"rounds": rows, "medians": medians}
            print(json.dumps({"concurrency": level, "medians": medians}), flush=True)
    results["uptime_after"] = bench_http.uptime()
    print(results["uptime_after"], flush=True)
    if args.json:
        args.json.write_text(json.dumps(results, indent=2))


if __name__ == "__main__":
    main()
