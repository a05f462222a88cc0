"""Throughput of the OpenAI-compatible backend against a local stub answering after a fixed delay.

At each concurrency (1, 8, 32, 128), against the ideal ``concurrency / delay`` prompts per second,
back to back: (1) the library, ``runner.run_plan`` into a fresh SQLite study (plan recorded, every
answer committed); (2) the CLI, ``biasatlas run contact --limit L`` into a fresh study, about the
same number of requests, rated by the run's own clock (``totals.seconds``: plan, requests, store)
and by the whole process's wall time (start-up and plan building included); (3) with ``--baseline``,
a bare aiohttp client (no store, no pipeline) on the same stub, which tells the machine's load
apart from the pipeline's cost, on the standard library's event loop and, where uvloop is installed,
on uvloop's, the loop the library runs on (``library_event_loop`` in the JSON); (4) with ``--split``,
the backend alone (``OpenAIBackend`` drained, no runner, no store), which tells the backend's cost
apart from the runner's and the store's. CPU time per prompt is given for (1), (3) and (4): it moves
less with the neighbours' load than rates.

    .venv/bin/python benchmarks/bench_http.py [--delay 0.05] [--levels 1,8,32,128] [--baseline] [--split]
        [--no-cli] [--json OUT]
    .venv/bin/python benchmarks/bench_http.py --no-network 20000 [--plan contact]  # client CPU per prompt, no server
    .venv/bin/python benchmarks/bench_http.py --loops 6 [--levels 128]  # event loops alternated, medians

``--loops N`` times, at each level, the backend alone, the library and the bare client on the standard
library's event loop and on uvloop's, alternated N times in one process (the neighbours' load moves
the rates by more than the loop does between two runs a minute apart; alternation shares it out).

The stub runs in its own process, as a real server would; on a 2-core machine it shares the cores
with the client, so the load average (printed) matters: note it with the figures.
"""

from __future__ import annotations

import argparse
import asyncio
import importlib.util
import json
import os
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[1]
STUB_PATH = ROOT / "tests" / "integration" / "servers" / "openai_stub.py"


def load_stub() -> Any:
    spec = importlib.util.spec_from_file_location("openai_stub", STUB_PATH)
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    sys.modules["openai_stub"] = module
    spec.loader.exec_module(module)
    return module


def load() -> str:
    return " ".join(f"{x:.2f}" for x in os.getloadavg())


def uptime() -> str:
    return subprocess.run(["uptime"], capture_output=True, text=True, check=False).stdout.strip()


def bench_prompts(n: int) -> list[Any]:
    from biasatlas.records import Message, Prompt

    return [
        Prompt(
            probe="bench",
            language="en",
            options=("Yes", "No"),
            meta={"i": i},
            messages=(
                Message(
                    role="user",
                    content=f"Should I invite neighbour number {i} to dinner? Answer with one word: Yes or No.",
                ),
            ),
        )
        for i in range(n)
    ]


def bench_backend(url: str, concurrency: int, n: int, mode: str) -> dict[str, Any]:
    """The backend alone: n distinct requests drained from OpenAIBackend, no runner, no store."""
    from biasatlas.backends.base import run_requests
    from biasatlas.backends.openai_compat import OpenAIBackend, OpenAIOptions
    from biasatlas.records import GenerationSettings
    from biasatlas.runner import build_requests

    backend = OpenAIBackend("stub-model", OpenAIOptions(base_url=url, concurrency=concurrency))
    requests = build_requests(bench_prompts(n), GenerationSettings(mode=mode))  # as bare: the plan is ready
    cpu, started = time.process_time(), time.perf_counter()
    answered = sum(1 for r in run_requests(backend, requests) if r.ok)
    wall, cpu = time.perf_counter() - started, time.process_time() - cpu
    backend.close()
    assert answered == n, answered
    return {"seconds": round(wall, 3), "prompts_per_s": round(n / wall, 1), "cpu_us_per_prompt": round(cpu / n * 1e6)}


def bench_pipeline(url: str, concurrency: int, n: int, mode: str) -> dict[str, Any]:
    """n distinct prompts through run_plan into a fresh study; seconds as the runner counts them."""
    from biasatlas.backends.openai_compat import OpenAIBackend, OpenAIOptions
    from biasatlas.records import GenerationSettings
    from biasatlas.runner import run_plan
    from biasatlas.store import Store

    prompts = bench_prompts(n)
    backend = OpenAIBackend("stub-model", OpenAIOptions(base_url=url, concurrency=concurrency))
    with tempfile.TemporaryDirectory() as tmp, Store(tmp) as store:
        cpu = time.process_time()
        started = time.perf_counter()
        totals = run_plan(prompts, backend, store, GenerationSettings(mode=mode), progress=False)
        wall = time.perf_counter() - started
        cpu = time.process_time() - cpu
        assert totals.new == n and totals.failed == 0, totals
    backend.close()
    return {"seconds": round(wall, 3), "prompts_per_s": round(n / wall, 1), "cpu_us_per_prompt": round(cpu / n * 1e6)}


def bench_bare(url: str, concurrency: int, n: int, loop: str = "asyncio") -> dict[str, Any]:
    """A bare aiohttp client: n POSTs with ``concurrency`` workers, bodies parsed, nothing stored; on
    the standard library's event loop, or on uvloop's (``loop="uvloop"``) as the library runs."""
    import aiohttp

    async def main() -> float:
        body = json.dumps(
            {
                "model": "stub-model",
                "max_tokens": 1,
                "logprobs": True,
                "top_logprobs": 20,
                "messages": [{"role": "user", "content": "x"}],
            }
        )
        todo = iter(range(n))
        async with aiohttp.ClientSession(connector=aiohttp.TCPConnector(limit=concurrency)) as session:

            async def worker() -> None:
                for i in todo:
                    payload = body.replace('"x"', f'"q{i}"').encode()
                    async with session.post(
                        f"{url}/chat/completions", data=payload, headers={"Content-Type": "application/json"}
                    ) as resp:
                        json.loads(await resp.read())

            started = time.perf_counter()
            await asyncio.gather(*(worker() for _ in range(concurrency)))
            return time.perf_counter() - started

    factory = None
    if loop == "uvloop":
        import uvloop

        factory = uvloop.new_event_loop
    cpu = time.process_time()
    with asyncio.Runner(loop_factory=factory) as runner:
        wall = runner.run(main())
    cpu = time.process_time() - cpu
    return {"seconds": round(wall, 3), "prompts_per_s": round(n / wall, 1), "cpu_us_per_prompt": round(cpu / n * 1e6)}


def uvloop_installed() -> bool:
    return importlib.util.find_spec("uvloop") is not None


def bench_loops(url: str, level: int, n: int, mode: str, rounds: int) -> dict[str, Any]:
    """The backend alone, the library and the bare client on each event loop, alternated ``rounds`` times."""
    import statistics

    runs: dict[str, list[dict[str, Any]]] = {}
    saved = os.environ.get("BIASATLAS_EVENT_LOOP")
    try:
        for _ in range(rounds):
            for loop in ("asyncio", "uvloop"):
                os.environ["BIASATLAS_EVENT_LOOP"] = loop
                runs.setdefault(f"backend_{loop}", []).append(bench_backend(url, level, n, mode))
                runs.setdefault(f"library_{loop}", []).append(bench_pipeline(url, level, n, mode))
                runs.setdefault(f"bare_{loop}", []).append(bench_bare(url, level, n, loop=loop))
    finally:
        if saved is None:
            os.environ.pop("BIASATLAS_EVENT_LOOP", None)
        else:
            os.environ["BIASATLAS_EVENT_LOOP"] = saved
    return {
        name: {
            "prompts_per_s": [r["prompts_per_s"] for r in rows],
            "cpu_us_per_prompt": [r["cpu_us_per_prompt"] for r in rows],
            "median_prompts_per_s": statistics.median(r["prompts_per_s"] for r in rows),
            "median_cpu_us_per_prompt": statistics.median(r["cpu_us_per_prompt"] for r in rows),
        }
        for name, rows in runs.items()
    }


def contact_prompts(n: int) -> list[Any]:
    """About n prompts of the contact plan, as ``biasatlas run contact --limit n`` asks them."""
    from biasatlas.probes import load_probe

    probe = load_probe("contact")
    return list(probe.plan(probe.config(limit=n)))


def bench_no_network(n: int, repeats: int = 3, plan: str = "bench") -> dict[str, Any]:
    """The client's own CPU per prompt without a network: every attempt answers at once with the
    stub's canned answer (parsed), at concurrency 128. Min over ``repeats``: it moves little with
    the neighbours' load, unlike the rates. ``backend``: OpenAIBackend drained (its plan built before
    the clock); ``library``: run_plan into a fresh study (plan, writer thread, store included);
    ``library_first_request_ms``: from run_plan's call to its first request (plan, keys, cache
    lookup: the time no request is out). ``plan``: ``bench`` prompts or the ``contact`` plan's."""
    import math

    from biasatlas.backends.base import run_requests
    from biasatlas.backends.http import client as http_client
    from biasatlas.backends.openai_compat import OpenAIBackend, OpenAIOptions
    from biasatlas.records import GenerationSettings
    from biasatlas.runner import build_requests, run_plan
    from biasatlas.store import Store

    stub = load_stub()
    canned = json.dumps({
        "id": "chatcmpl-canned", "object": "chat.completion", "created": 0, "model": "stub-model",
        "choices": [{"index": 0, "finish_reason": "length", "message": {"role": "assistant", "content": "Yes"},
                     "logprobs": {"content": [{"token": "Yes", "logprob": math.log(0.63),
                                               "top_logprobs": stub._top_logprobs(0.7)}]}}],
        "usage": {"prompt_tokens": 30, "completion_tokens": 1, "total_tokens": 31},
    }).encode()  # as the stub's --canned answer
    parse = getattr(http_client, "parse_json", json.loads)

    first: list[float] = []

    async def attempt(self: Any, payload: bytes, timeout: Any = None, url: Any = None, choices: bool = True) -> Any:
        if not first:
            first.append(time.perf_counter())
        return parse(canned)

    original = http_client.ChatClient.attempt
    http_client.ChatClient.attempt = attempt  # type: ignore[method-assign]
    settings = GenerationSettings(mode="choice")
    options = OpenAIOptions(base_url="http://127.0.0.1:9/v1", concurrency=128, check=False)
    out: dict[str, list[float]] = {"backend": [], "library": []}
    waited: list[float] = []
    try:
        for _ in range(repeats):
            prompts = contact_prompts(n) if plan == "contact" else bench_prompts(n)  # fresh: nothing memoised
            n = len(prompts)
            backend = OpenAIBackend("stub-model", options)
            requests = build_requests(prompts, settings)
            cpu = time.process_time()
            assert sum(1 for r in run_requests(backend, requests) if r.ok) == n
            out["backend"].append((time.process_time() - cpu) / n * 1e6)
            backend.close()
            prompts = [p.model_copy() for p in prompts]  # ids, keys and JSON parts computed afresh
            backend = OpenAIBackend("stub-model", options)
            with tempfile.TemporaryDirectory() as tmp, Store(tmp) as store:
                first.clear()
                cpu, started = time.process_time(), time.perf_counter()
                assert run_plan(prompts, backend, store, settings, progress=False).new == n
                out["library"].append((time.process_time() - cpu) / n * 1e6)
                waited.append((first[0] - started) * 1e3)
            backend.close()
    finally:
        http_client.ChatClient.attempt = original  # type: ignore[method-assign]
    return {f"{k}_cpu_us_per_prompt": round(min(v), 1) for k, v in out.items()} | {
        "library_first_request_ms": round(min(waited), 1), "plan": plan, "prompts": n, "load": load()}


def bench_cli(url: str, concurrency: int, limit: int) -> dict[str, Any]:
    """`biasatlas run contact` as a user runs it: wall time of the whole process."""
    exe = str(Path(sys.executable).parent / "biasatlas")
    with tempfile.TemporaryDirectory() as tmp:
        cmd = [
            exe,
            "run",
            "contact",
            "--study",
            tmp,
            "--model",
            "openai:stub-model",
            "--base-url",
            url,
            "--concurrency",
            str(concurrency),
            "--limit",
            str(limit),
        ]
        started = time.perf_counter()
        out = subprocess.run(cmd, capture_output=True, text=True, check=False)
        wall = time.perf_counter() - started
        if out.returncode != 0:
            raise RuntimeError(out.stderr)
        from biasatlas.store import Store

        with Store(tmp) as store:
            run = store.last_run("contact")
            requests = store.response_count()
    assert run is not None and run["status"] == "complete", run["status"]
    return {
        "command": " ".join(cmd[1:]).replace(tmp, "STUDY"),
        "prompts": run["totals"]["planned"],
        "distinct_requests": requests,
        "wall_s": round(wall, 2),
        "runner_s": run["totals"]["seconds"],
    }


def cli_startup() -> float:
    """Wall seconds of ``biasatlas --help`` (imports and start-up only)."""
    started = time.perf_counter()
    subprocess.run([str(Path(sys.executable).parent / "biasatlas"), "--help"], capture_output=True, check=True)
    return round(time.perf_counter() - started, 2)


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--delay", type=float, default=0.05)
    ap.add_argument("--levels", default="1,8,32,128")
    ap.add_argument("--seconds", type=float, default=2.0, help="ideal duration of each level")
    ap.add_argument("--mode", choices=("choice", "generate"), default="choice")
    ap.add_argument("--baseline", action="store_true", help="also time a bare aiohttp client")
    ap.add_argument("--no-cli", action="store_true")
    ap.add_argument("--split", action="store_true", help="also time the backend alone (no runner, no store)")
    ap.add_argument("--parse", action="store_true", help="stub parses each request (default: canned answers)")
    ap.add_argument("--no-network", type=int, metavar="N", help="only the client's CPU per prompt without a "
                    "network (N prompts, answered at once), then exit")
    ap.add_argument("--plan", choices=("bench", "contact"), default="bench",
                    help="with --no-network: short bench prompts or the contact plan's (as the CLI asks)")
    ap.add_argument("--loops", type=int, metavar="N", help="only the event-loop comparison: N alternations per level")
    ap.add_argument("--json", type=Path)
    args = ap.parse_args()
    if args.no_network:
        print(uptime(), flush=True)
        result = bench_no_network(args.no_network, plan=args.plan)
        print(json.dumps(result), flush=True)
        print(uptime(), flush=True)
        if args.json:
            args.json.write_text(json.dumps(result, indent=2))
        return
    stub_mod = load_stub()
    from biasatlas.backends.http.loops import event_loop_name, new_event_loop

    probe_loop = new_event_loop()
    results: dict[str, Any] = {"delay_s": args.delay, "mode": args.mode, "cpus": os.cpu_count(), "levels": [],
                               "library_event_loop": event_loop_name(probe_loop)}
    probe_loop.close()
    flags = ["--delay", str(args.delay)] + ([] if args.parse else ["--canned"])
    results["stub"] = " ".join(flags)
    results["uptime_before"] = uptime()
    print(results["uptime_before"], flush=True)
    with stub_mod.start_stub(*flags) as stub:
        bench_pipeline(stub.url, 8, 200, args.mode)  # warm-up: imports, connections, page cache
        for level in (int(x) for x in args.levels.split(",")) if args.loops else ():
            ideal = level / args.delay
            n = max(40, int(ideal * args.seconds))
            loops = bench_loops(stub.url, level, n, args.mode, args.loops)
            for got in loops.values():
                got["median_pct_of_ideal"] = round(100 * got["median_prompts_per_s"] / ideal, 1)
            row = {"concurrency": level, "prompts": n, "ideal_per_s": ideal, "event_loops": loops, "load_after": load()}
            print(json.dumps({"concurrency": level, **{k: (v["median_pct_of_ideal"], v["median_cpu_us_per_prompt"])
                                                       for k, v in loops.items()}}), flush=True)
            results["levels"].append(row)
        for level in (int(x) for x in args.levels.split(",")) if not args.loops else ():
            ideal = level / args.delay
            n = max(40, int(ideal * args.seconds))
            row: dict[str, Any] = {"concurrency": level, "prompts": n, "ideal_per_s": ideal, "load_before": load()}
            row.update(bench_pipeline(stub.url, level, n, args.mode))
            row["pct_of_ideal"] = round(100 * row["prompts_per_s"] / ideal, 1)
            if not args.no_cli:  # --limit N: a draw of about N prompts of the contact plan
                cli = bench_cli(stub.url, level, n)
                asked = cli["distinct_requests"]
                row["cli"] = cli
                row["cli_per_s"] = round(asked / cli["runner_s"], 1)
                row["cli_pct_of_ideal"] = round(100 * asked / cli["runner_s"] / ideal, 1)
                row["cli_wall_pct_of_ideal"] = round(100 * asked / cli["wall_s"] / ideal, 1)
            if args.split:
                alone = bench_backend(stub.url, level, n, args.mode)
                row["backend_alone_pct_of_ideal"] = round(100 * alone["prompts_per_s"] / ideal, 1)
                row["backend_alone_cpu_us_per_prompt"] = alone["cpu_us_per_prompt"]
            if args.baseline:
                bare = bench_bare(stub.url, level, n)
                row["bare_aiohttp_per_s"] = bare["prompts_per_s"]
                row["bare_pct_of_ideal"] = round(100 * bare["prompts_per_s"] / ideal, 1)
                row["bare_cpu_us_per_prompt"] = bare["cpu_us_per_prompt"]
                if uvloop_installed():  # the bare client on the event loop the library runs on
                    bare = bench_bare(stub.url, level, n, loop="uvloop")
                    row["bare_uvloop_pct_of_ideal"] = round(100 * bare["prompts_per_s"] / ideal, 1)
                    row["bare_uvloop_cpu_us_per_prompt"] = bare["cpu_us_per_prompt"]
            row["load_after"] = load()
            print(json.dumps(row), flush=True)
            results["levels"].append(row)
        if not args.no_cli and not args.loops:
            results["cli_startup_s"] = cli_startup()
            print(json.dumps({"cli_startup_s (biasatlas --help)": results["cli_startup_s"]}), flush=True)
    results["uptime_after"] = uptime()
    print(results["uptime_after"], flush=True)
    if args.json:
        args.json.write_text(json.dumps(results, indent=2))


if __name__ == "__main__":
    main()
