"""Lines per second through `batch run --engine ray` against the live HTTP runner, on the same stub servers.

Two stub servers (tests/integration/servers/openai_stub.py, each in its own process, answering after
``--delay`` seconds) form the study's fleet. A contact plan of ``--prompts`` prompts is exported
(`batch export`), answered by `batch run --engine ray --actors 2` into a fresh folder (the whole
command timed: Ray's start included, and the part after Ray started: the dataset's execution), and
then run live (`biasatlas run contact`, the same fleet, ``--concurrency``) into a fresh study. Each
figure is a whole CLI command, as a user runs it.

    .venv/bin/python benchmarks/bench_ray.py [--prompts 2001] [--delay 0.0] [--concurrency 16] [--repeats 2]

On a 2-core machine Ray's processes, the stubs and the client share the cores: note the load (printed).
"""

from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT / "tests" / "integration" / "servers"))
from openai_stub import start_stub  # noqa: E402

BIASATLAS = str(Path(sys.executable).parent / "biasatlas")


def timed(*args: str) -> tuple[float, str]:
    started = time.perf_counter()
    out = subprocess.run([BIASATLAS, *args], capture_output=True, text=True, timeout=3600)
    if out.returncode != 0:
        raise SystemExit(f"biasatlas {' '.join(args[:3])} failed: {out.stderr[-2000:]}")
    return time.perf_counter() - started, out.stdout


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--prompts", type=int, default=2001)
    ap.add_argument("--delay", type=float, default=0.0)
    ap.add_argument("--concurrency", type=int, default=16)
    ap.add_argument("--repeats", type=int, default=2)
    args = ap.parse_args()
    stubs = [start_stub("--delay", str(args.delay)) for _ in range(2)]
    urls = [x for s in stubs for x in ("--base-url", s.url)]
    plan = ["--limit", str(args.prompts), "--mode", "choice", "--max-tokens", "4", "--http",
            "choice_method=first_token"]
    model = ["--model", "openai:stub-model", "--fleet", "bench", *urls]
    print(f"load before: {os.getloadavg()}")
    try:
        with tempfile.TemporaryDirectory() as tmp:
            base = Path(tmp)
            timed("batch", "export", "contact", "--study", str(base / "export"), *model, "--out",
                  str(base / "files"), *plan)
            for repeat in range(args.repeats):
                ray_s, stdout = timed("batch", "run", "--engine", "ray", "--in", str(base / "files"), "--out",
                                      str(base / f"answers{repeat}"), *urls, "--actors", "2", "--concurrency",
                                      str(args.concurrency), "--json")
                counts = json.loads(stdout[stdout.index("{"):])
                live_s, _ = timed("run", "contact", "--study", str(base / f"live{repeat}"), *model,
                                  "--concurrency", str(args.concurrency), *plan)
                lines = counts["answered"]
                print(f"repeat {repeat + 1}: ray {lines} lines in {ray_s:.1f} s ({lines / ray_s:.0f} lines/s; "
                      f"{counts['seconds']:.1f} s inside run_ray); live {args.prompts} prompts in {live_s:.1f} s "
                      f"({args.prompts / live_s:.0f} prompts/s); load {os.getloadavg()[0]:.2f}")
    finally:
        for stub in stubs:
            stub.stop()


if __name__ == "__main__":
    main()
