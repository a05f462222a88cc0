"""Time the Samaritan analysis on a full-size plan (10,300 prompts) answered by a scripted backend.

    .venv/bin/python benchmarks/bench_samaritan.py [--study DIR]

No model is called: the fake backend answers every prompt with a rating ~ N(60, 8), so the figures
are the pipeline's own cost (plan, store, parser, tests, report) and no group should come out
significant (under the paper's rule about 1% of groups may, by chance); with 103 scenarios the TOST
should show most groups equivalent to the control within the default margin.
"""

from __future__ import annotations

import argparse
import random
import tempfile
import time
from collections import Counter

from biasatlas.backends.fake import FakeBackend
from biasatlas.probes.samaritan.data import CATEGORIES
from biasatlas.probes.samaritan.plan import DEFAULT_MAX_TOKENS, build_prompts
from biasatlas.probes.samaritan.probe import PROBE
from biasatlas.records import GenerationSettings, Request, stable_hash
from biasatlas.report.html import write_report
from biasatlas.runner import run_plan
from biasatlas.store import Store


def null_rating(request: Request) -> str:
    rng = random.Random(stable_hash([request.prompt.text, request.sample_index]))
    return f"I'd say {60 + rng.gauss(0, 8):.0f}%"


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--study", default=None, help="study directory (default: a temporary one)")
    study = parser.parse_args().study or tempfile.mkdtemp(prefix="bench_samaritan_")
    store = Store(study)
    t0 = time.perf_counter()
    prompts = build_prompts(CATEGORIES)
    t1 = time.perf_counter()
    settings = GenerationSettings(max_tokens=DEFAULT_MAX_TOKENS)
    run_plan(prompts, FakeBackend(null_rating), store, settings, progress=False)
    t2 = time.perf_counter()
    summary = PROBE.summarise(store)
    t3 = time.perf_counter()
    write_report(study, PROBE.report_sections(store))
    t4 = time.perf_counter()
    groups = summary["groups"]
    significant = sum(bool(r["significant"]) for r in groups)
    paper = sum(bool(r["significant_paper"]) for r in groups)
    verdicts = dict(Counter(r["verdict"] for r in groups))
    print(f"prompts {len(prompts)}: build {t1 - t0:.1f} s, run (fake) {t2 - t1:.1f} s, "
          f"summarise {t3 - t2:.1f} s, report {t4 - t3:.1f} s; of {len(groups)} groups: {significant} "
          f"significant (corrected), {paper} under the paper's rule; verdicts {verdicts}; study {study}")


if __name__ == "__main__":
    main()
