"""Fleet throughput (issue 16, point 4): 4 stub endpoints against one, and one endpoint killed mid-run.

(1) Throughput: ``run_plan`` into a fresh SQLite study (plan recorded, every answer committed), in
generate mode (one chat completion per prompt, free text), against one stub endpoint at concurrency
``--concurrency`` and against a fleet of ``--endpoints`` stubs at that concurrency each; every stub
answers after ``--delay`` seconds and runs in its own process. The ratio of the two rates is the
figure (goal: >= 3.4 with 4 endpoints). A third measurement, one endpoint at the fleet's whole
concurrency, is the client's own ceiling on this machine: the fleet's rate against it is what the
fleet layer costs. ``--repeats`` alternates the three.

(2) Kill one mid-run: a fleet of ``--endpoints`` stubs (answers derived from the prompt, each
counted per prompt by the stub), ``--kill-prompts`` prompts, one stub SIGKILLed ``--kill-after``
seconds in. Checked: every prompt answered exactly once (one stored answer per prompt, none
failed, the fleet's answered counts sum to the prompts, each surviving stub answered each prompt it
was sent once), and the killed endpoint drained.

    .venv/bin/python benchmarks/bench_fleet.py [--delay 0.05] [--concurrency 16] [--endpoints 4]
        [--seconds 3] [--repeats 2] [--kill-prompts 3000] [--kill-after 1.0] [--json OUT]

On a 2-core machine the stubs share the cores with the client: note the load average (printed).
"""

from __future__ import annotations

import argparse
import json
import sys
import tempfile
import threading
import time
from collections import Counter
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parent))
from bench_http import bench_prompts, load, load_stub, uptime


def backend(urls: list[str], concurrency: int) -> Any:
    """One plain server, or a fleet (named) of several."""
    from biasatlas.backends.openai_compat import OpenAIBackend, OpenAIOptions

    common: dict[str, Any] = {"concurrency": concurrency, "structured": "off"}
    if len(urls) == 1:
        return OpenAIBackend("stub-model", OpenAIOptions(base_url=urls[0], **common))
    return OpenAIBackend("stub-model", OpenAIOptions(endpoints=urls, fleet="bench", **common))


def pipeline(urls: list[str], concurrency: int, n: int) -> dict[str, Any]:
    """n distinct prompts through run_plan into a fresh study: rate, and the fleet's per-endpoint counts."""
    from biasatlas.records import GenerationSettings
    from biasatlas.runner import run_plan
    from biasatlas.store import Store

    model = backend(urls, concurrency)
    with tempfile.TemporaryDirectory() as tmp, Store(tmp) as store:
        started, cpu = time.perf_counter(), time.process_time()
        totals = run_plan(bench_prompts(n), model, store, GenerationSettings(mode="generate", max_tokens=4),
                          progress=False)
        wall, cpu = time.perf_counter() - started, time.process_time() - cpu
        assert totals.new == n and totals.failed == 0, totals
    model.close()
    row: dict[str, Any] = {"endpoints": len(urls), "concurrency_each": concurrency, "prompts": n,
                           "seconds": round(wall, 3), "prompts_per_s": round(n / wall, 1),
                           "cpu_us_per_prompt": round(cpu / n * 1e6)}
    fleet = totals.info.get("fleet")
    if fleet:
        row["answered_per_endpoint"] = [e["answered"] for e in fleet["endpoints"]]
        row["p50_s_per_endpoint"] = [(e["latency_s"] or {}).get("p50") for e in fleet["endpoints"]]
    return row


def throughput(stub: Any, args: argparse.Namespace) -> dict[str, Any]:
    flags = ["--delay", str(args.delay), "--canned"]
    stubs = [stub.start_stub(*flags) for _ in range(args.endpoints)]
    try:
        urls = [s.url for s in stubs]
        pipeline(urls[:1], 4, 100)  # warm-up: imports, page cache
        rows = []
        for repeat in range(args.repeats):
            # one endpoint; the fleet; one endpoint at the fleet's whole concurrency (the client's ceiling here)
            for group, each in ((urls[:1], args.concurrency), (urls, args.concurrency),
                                (urls[:1], args.concurrency * len(urls))):
                ideal = each / args.delay * len(group)
                row = {"repeat": repeat, "ideal_per_s": ideal, "load_before": load(),
                       **pipeline(group, each, int(ideal * args.seconds))}
                row["pct_of_ideal"] = round(100 * row["prompts_per_s"] / ideal, 1)
                row["load_after"] = load()
                print(json.dumps(row), flush=True)
                rows.append(row)
    finally:
        for s in stubs:
            s.stop()
    one = [r["prompts_per_s"] for r in rows if r["endpoints"] == 1 and r["concurrency_each"] == args.concurrency]
    many = [r["prompts_per_s"] for r in rows if r["endpoints"] > 1]
    ceiling = [r["prompts_per_s"] for r in rows if r["concurrency_each"] > args.concurrency]
    ratios = [round(m / o, 2) for o, m in zip(one, many, strict=True)]
    return {"rows": rows, "ratio_per_repeat": ratios, "ratio_of_means": round(sum(many) / sum(one), 2),
            "fleet_share_of_one_endpoint_at_its_concurrency": round(sum(many) / sum(ceiling), 2)}


def kill_one(stub: Any, args: argparse.Namespace) -> dict[str, Any]:
    """A fleet run with one stub SIGKILLed mid-run: every prompt answered exactly once?"""
    from biasatlas.records import GenerationSettings
    from biasatlas.runner import run_plan
    from biasatlas.store import Store

    stubs = [stub.start_stub("--delay", str(args.delay)) for _ in range(args.endpoints)]
    victim = stubs[1]
    try:
        model = backend([s.url for s in stubs], args.concurrency)
        killer = threading.Timer(args.kill_after, victim.process.kill)
        n = args.kill_prompts
        with tempfile.TemporaryDirectory() as tmp, Store(tmp) as store:
            started = time.perf_counter()
            killer.start()
            totals = run_plan(bench_prompts(n), model, store, GenerationSettings(mode="generate", max_tokens=4),
                              progress=False)
            wall = time.perf_counter() - started
            stored, errors = store.response_count(), store.error_count()
        killer.join()
        model.close()
        rows = totals.info["fleet"]["endpoints"]
        survivors: Counter[str] = Counter()
        once = True
        for s in stubs:
            if s is not victim:
                answered = s.stats()["answered"]
                once &= set(answered.values()) <= {1}
                survivors.update(answered)
        result = {
            "prompts": n, "seconds": round(wall, 2), "stored": stored, "errors": errors, "failed": totals.failed,
            "fleet_answered": sum(r["answered"] for r in rows), "per_endpoint": rows,
            "victim_drained": rows[1]["drained"] >= 1, "survivors_answered_each_once": once,
        }
        result["exactly_once"] = (stored == n and errors == 0 and totals.failed == 0
                                  and result["fleet_answered"] == n and once)
        print(json.dumps(result), flush=True)
        return result
    finally:
        for s in stubs:
            if s.process is not None and s.process.poll() is None:
                s.stop()


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--delay", type=float, default=0.05)
    ap.add_argument("--concurrency", type=int, default=16, help="of each endpoint")
    ap.add_argument("--endpoints", type=int, default=4)
    ap.add_argument("--seconds", type=float, default=3.0, help="ideal duration of each measurement")
    ap.add_argument("--repeats", type=int, default=2)
    ap.add_argument("--kill-prompts", type=int, default=3000)
    ap.add_argument("--kill-after", type=float, default=1.0)
    ap.add_argument("--json", type=Path)
    args = ap.parse_args()
    stub = load_stub()
    results: dict[str, Any] = {"delay_s": args.delay, "concurrency_each": args.concurrency,
                               "endpoints": args.endpoints, "uptime_before": uptime()}
    print(results["uptime_before"], flush=True)
    results["throughput"] = throughput(stub, args)
    print(json.dumps({k: v for k, v in results["throughput"].items() if k != "rows"}), flush=True)
    results["kill_one"] = kill_one(stub, args)
    results["uptime_after"] = uptime()
    print(results["uptime_after"], flush=True)
    if args.json:
        args.json.write_text(json.dumps(results, indent=2))


if __name__ == "__main__":
    main()
