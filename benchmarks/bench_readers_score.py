"""`biasatlas readers score` on a large labels file: a fake-model contact study, its whole sample, copied
under new sample ids to ``--rows`` rows, then the command timed as a whole process.

    .venv/bin/python benchmarks/bench_readers_score.py [--limit 2000] [--rows 504000] [--dir /tmp/score-bench]
"""

from __future__ import annotations

import argparse
import subprocess
import sys
import time
from pathlib import Path


def build(root: Path, limit: int, rows: int) -> Path:
    """The study (contact, en and de, generate mode, ``limit`` prompts a language) and its labels file."""
    import pandas as pd

    from biasatlas.backends.fake import FakeBackend
    from biasatlas.probes.contact.probe import PROBE
    from biasatlas.reading_audit import sample, write_sample
    from biasatlas.records import GenerationSettings, Request
    from biasatlas.runner import run_plan
    from biasatlas.store import Store

    def answer(request: Request) -> str:  # refusals, hedges and both options, by the prompt's id
        index = int(request.prompt.id, 16) % 10
        return "I won't answer that." if index == 0 else "Hmm." if index == 1 else "Yes." if index % 2 else "No."

    with Store(root) as store:
        config = PROBE.config(languages=["en", "de"], limit=limit, mode="generate")
        run_plan(PROBE.plan(config), FakeBackend(answer), store, GenerationSettings(mode="generate"), progress=False)
        drawn = sample(store, 10**9, seed=1)
    drawn = drawn.assign(human_label=drawn["reader_label"])
    copies = pd.concat([drawn] * -(-rows // len(drawn)), ignore_index=True).iloc[:rows]
    labels = root / "labels.csv"
    write_sample(copies.assign(sample_id=range(1, len(copies) + 1)), labels)
    return labels


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--limit", type=int, default=2000)
    parser.add_argument("--rows", type=int, default=504_000)
    parser.add_argument("--dir", type=Path, default=Path("/tmp/score-bench"))
    args = parser.parse_args()
    labels = args.dir / "labels.csv"
    if not labels.is_file():
        labels = build(args.dir, args.limit, args.rows)
    command = [sys.executable, "-c", "from biasatlas.cli.entry import main; main()", "readers", "score",
               "--study", str(args.dir), str(labels), "--json"]
    started = time.perf_counter()
    done = subprocess.run(["/usr/bin/time", "-f", "%e s wall, %U s user, %M kB peak", *command],
                          capture_output=True, text=True, check=False)
    print(f"readers score, {args.rows:,} rows: {time.perf_counter() - started:.1f} s (exit {done.returncode}); "
          f"{done.stderr.strip().splitlines()[-1]}")


if __name__ == "__main__":
    main()
