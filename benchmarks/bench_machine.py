"""What bounds the throughput at high concurrency on this machine: its cores, or the client's one event loop?

Against the canned stub of ``bench_http.py`` (50 ms answers), alternated ``--rounds`` times in one window:

* ``one``: the bare aiohttp client (uvloop) in one process at ``--concurrency`` (default 128);
* ``two``: the same client in two processes at half the concurrency each (so twice the client cores);
* ``library``: ``run_plan`` into a fresh study at ``--concurrency``.

For each run: % of the ideal ``concurrency / 0.05`` prompts a second, the client's CPU µs per prompt
(all its processes), the stub's CPU µs per request (``/proc/PID/stat``), and how busy the machine's
cores were over the run (``/proc/stat``: 100 % = every core busy; its steal column too). If ``two``
does not beat ``one``, more client cores do not help here: the machine's cores, shared with the
server, are the bound, and a prompt's CPU (client + server) is what sets the rate.

With ``--extra-us N``, two more library runs spend N µs of extra CPU per answer: ``in_step`` inside the
worker's step on the event loop (before that worker's next request goes out), ``in_consumer`` where
the runner takes the answer (after the loop has sent what it could). If the two cost the same, moving
work out of the loop's step buys nothing: only less CPU per prompt does.

    .venv/bin/python benchmarks/bench_machine.py [--rounds 4] [--concurrency 128] [--prompts 5120]
        [--extra-us 100] [--json OUT]
"""

from __future__ import annotations

import argparse
import contextlib
import json
import multiprocessing as mp
import os
import statistics
import sys
import tempfile
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parent))
import bench_http  # the stub, the bare client, bench prompts, the load line

TICK = os.sysconf("SC_CLK_TCK")


def machine_ticks() -> tuple[int, int, int]:
    """(busy, total, steal) clock ticks over all cores since boot (``/proc/stat``'s first line)."""
    fields = [int(x) for x in Path("/proc/stat").read_text().splitlines()[0].split()[1:]]
    idle = fields[3] + fields[4]  # idle + iowait
    return sum(fields) - idle, sum(fields), fields[7] if len(fields) > 7 else 0


def process_cpu(pid: int) -> float:
    """User + system CPU seconds of process ``pid`` so far."""
    parts = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()
    return (int(parts[11]) + int(parts[12])) / TICK


def _bare_child(url: str, level: int, n: int, out: Any, go: Any) -> None:
    go.wait()
    cpu = time.process_time()
    result = bench_http.bench_bare(url, level, n, "uvloop")
    out.put((result["seconds"], time.process_time() - cpu))


def bare(url: str, level: int, n: int, processes: int) -> tuple[float, float]:
    """(seconds, client CPU seconds) of n requests at ``level``, spread over ``processes`` processes."""
    out: Any = mp.Queue()
    go = mp.Event()
    workers = [mp.Process(target=_bare_child, args=(url, level // processes, n // processes, out, go))
               for _ in range(processes)]
    for worker in workers:
        worker.start()
    time.sleep(0.5)  # started and imported before the clock
    go.set()
    results = [out.get() for _ in workers]
    for worker in workers:
        worker.join()
    return max(s for s, _ in results), sum(c for _, c in results)


def library(url: str, level: int, n: int) -> tuple[float, float]:
    """(seconds, CPU seconds) of ``run_plan`` over n prompts into a fresh study."""
    from biasatlas.backends.openai_compat import OpenAIBackend, OpenAIOptions
    from biasatlas.records import GenerationSettings
    from biasatlas.runner import run_plan
    from biasatlas.store import Store

    prompts = bench_http.bench_prompts(n)
    backend = OpenAIBackend("stub-model", OpenAIOptions(base_url=url, concurrency=level))
    with tempfile.TemporaryDirectory() as tmp, Store(tmp) as store:
        cpu, started = time.process_time(), time.perf_counter()
        totals = run_plan(prompts, backend, store, GenerationSettings(mode="choice"), progress=False)
        seconds, cpu = time.perf_counter() - started, time.process_time() - cpu
    backend.close()
    assert totals.new == n, totals
    return seconds, cpu


def spin(seconds: float) -> None:
    """Busy for ``seconds`` (CPU, not a sleep)."""
    end = time.perf_counter() + seconds
    while time.perf_counter() < end:
        pass


@contextlib.contextmanager
def extra_cpu(where: str, seconds: float) -> Iterator[None]:
    """The HTTP backend's stream with ``seconds`` of CPU added per answer, in the worker's step or the consumer."""
    import biasatlas.backends.openai_compat as backend_module
    from biasatlas.backends.http.bridge import stream

    def in_step(runner: Any, items: Any, handle: Any, concurrency: int, buffer: int | None = None) -> Any:
        async def handled(item: Any) -> Any:
            answer = await handle(item)
            spin(seconds)
            return answer
        return stream(runner, items, handled, concurrency, buffer)

    def in_consumer(runner: Any, items: Any, handle: Any, concurrency: int, buffer: int | None = None) -> Any:
        answers = stream(runner, items, handle, concurrency, buffer)
        try:
            for answer in answers:
                spin(seconds)
                yield answer
        finally:
            answers.close()

    backend_module.stream = in_step if where == "step" else in_consumer
    try:
        yield
    finally:
        backend_module.stream = stream


def measured(run: Any, stub_pid: int, level: int, n: int) -> dict[str, Any]:
    """One run with the machine's and the stub's CPU read around it."""
    busy0, total0, steal0 = machine_ticks()
    stub0 = process_cpu(stub_pid)
    seconds, client_cpu = run()
    busy1, total1, steal1 = machine_ticks()
    stub_cpu = process_cpu(stub_pid) - stub0
    return {"pct": round(100 * n / seconds / (level / 0.05), 1),
            "client_us": round(client_cpu / n * 1e6), "stub_us": round(stub_cpu / n * 1e6),
            "machine_busy_pct": round(100 * (busy1 - busy0) / max(1, total1 - total0), 1),
            "steal_pct": round(100 * (steal1 - steal0) / max(1, total1 - total0), 1)}


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--rounds", type=int, default=4)
    ap.add_argument("--concurrency", type=int, default=128)
    ap.add_argument("--prompts", type=int, default=5120)
    ap.add_argument("--extra-us", type=float, default=0.0, help="also: library + N µs CPU per answer, step vs consumer")
    ap.add_argument("--json", type=Path)
    args = ap.parse_args()
    level, n = args.concurrency, args.prompts
    mp.set_start_method("fork")  # the children reuse this process's imports
    results: dict[str, Any] = {"uptime_before": bench_http.uptime(), "cores": os.cpu_count(),
                               "extra_us": args.extra_us, "rounds": []}
    print(results["uptime_before"], flush=True)
    with bench_http.load_stub().start_stub("--delay", "0.05", "--canned") as stub:
        assert stub.process is not None
        pid = stub.process.pid
        bench_http.bench_bare(stub.url, 8, 200, "uvloop")  # warm-up
        for k in range(args.rounds):
            row = {"round": k + 1,
                   "one": measured(lambda: bare(stub.url, level, n, 1), pid, level, n),
                   "two": measured(lambda: bare(stub.url, level, n, 2), pid, level, n),
                   "library": measured(lambda: library(stub.url, level, n), pid, level, n),
                   "load": bench_http.load()}
            if args.extra_us > 0:
                for where in ("step", "consumer"):
                    with extra_cpu(where, args.extra_us / 1e6):
                        row[f"in_{where}"] = measured(lambda: library(stub.url, level, n), pid, level, n)
            print(json.dumps(row), flush=True)
            results["rounds"].append(row)
    results["uptime_after"] = bench_http.uptime()
    print(results["uptime_after"], flush=True)
    for side in [s for s in ("one", "two", "library", "in_step", "in_consumer") if s in results["rounds"][0]]:
        runs = [r[side] for r in results["rounds"]]
        results[side] = {k: statistics.median(r[k] for r in runs) for k in runs[0]}
        print(side, "medians:", json.dumps(results[side]), flush=True)
    if args.json:
        args.json.write_text(json.dumps(results, indent=2))


if __name__ == "__main__":
    main()
