"""The report and ``summary --json`` against the number of models in one study.

Builds a study from a fake audit (``fake:mK`` models: each answers by its own seed; model 0 has a planted
disparity) of N models × the contact probe in every language of the packs (``--languages``, default all
twelve) with ``--limit`` prompts per cell, then times ``biasatlas report`` and ``biasatlas summary --json``
as whole processes (wall time and peak resident memory from GNU ``time``).
The study of the largest N is built once and smaller ones are not subsets of it: each N has its own study.

    .venv/bin/python benchmarks/bench_many_models.py --models 1,10,50 [--languages all] [--limit 21]
    .venv/bin/python benchmarks/bench_many_models.py --models 1000 --languages en --limit 21 --only-summary
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

ALL_LANGUAGES = ["en", "de", "is", "fr", "es", "it", "pt", "hi", "id", "vi", "zh", "ko"]
BIN = Path(sys.executable).with_name("biasatlas")


def audit_file(path: Path, models: int, languages: list[str], limit: int) -> None:
    lines = ["title: many models", "models:"]
    for k in range(models):
        spec = "fake:m0?biased=Muslims" if k == 0 else f"fake:m{k}"
        lines += [f"  - name: model-{k:04d}", f"    model: '{spec}'"]
    lines += ["probes:", "  contact:", f"    languages: [{', '.join(languages)}]", "    axes: [religion]",
              f"    limit: {limit}", "seeds: [0]"]
    path.write_text("\n".join(lines) + "\n", encoding="utf-8")


def timed(args: list[str]) -> dict[str, float]:
    """Wall seconds and peak resident memory (MB) of one command run as its own process (GNU time)."""
    with tempfile.NamedTemporaryFile("r", suffix=".time") as out:
        done = subprocess.run(["/usr/bin/time", "-o", out.name, "-f", "%e %M", *args], capture_output=True,
                              text=True, env={**os.environ, "COLUMNS": "120"})
        if done.returncode != 0:
            raise SystemExit(f"{' '.join(args)} exited {done.returncode}: {done.stderr[-2000:]}")
        wall, peak_kb = out.read().split()[-2:]
    return {"wall_s": float(wall), "peak_mb": round(int(peak_kb) / 1024), "stdout_bytes": len(done.stdout)}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--models", default="1,10,50", help="comma-separated numbers of models")
    parser.add_argument("--languages", default="all")
    parser.add_argument("--limit", type=int, default=21, help="prompts per model x language")
    parser.add_argument("--only-summary", action="store_true", help="time summary --json only (no report)")
    parser.add_argument("--json", type=Path, help="write the figures here")
    parser.add_argument("--keep", type=Path, help="build the studies under this folder (kept)")
    args = parser.parse_args()
    languages = ALL_LANGUAGES if args.languages == "all" else args.languages.split(",")
    root = args.keep or Path(tempfile.mkdtemp(prefix="many-models-"))
    root.mkdir(parents=True, exist_ok=True)
    rows = []
    for n in (int(x) for x in args.models.split(",")):
        study = root / f"m{n}"
        yaml = root / f"m{n}.yaml"
        audit_file(yaml, n, languages, args.limit)
        start = time.perf_counter()
        built = subprocess.run([str(BIN), "audit", str(yaml), "--study", str(study)], capture_output=True,
                               text=True)  # the audit ends by writing the report: timed again below on its own
        if built.returncode != 0:
            raise SystemExit(f"the audit of {n} models exited {built.returncode}: {built.stderr[-2000:]}")
        row: dict[str, float | int | str] = {"models": n, "languages": len(languages), "limit": args.limit,
                                             "build_s": round(time.perf_counter() - start, 1)}
        summary = timed([str(BIN), "summary", "--study", str(study), "--json"])
        row.update({f"summary_json_{k}": v for k, v in summary.items()})
        if not args.only_summary:
            report = timed([str(BIN), "report", "--study", str(study)])
            row.update({f"report_{k}": v for k, v in report.items()})
            row["report_html_mb"] = round((study / "report.html").stat().st_size / 1e6, 1)
        row["load_1min"] = round(os.getloadavg()[0], 2)
        rows.append(row)
        print(json.dumps(row), flush=True)
    if args.json:
        args.json.write_text(json.dumps(rows, indent=2), encoding="utf-8")


if __name__ == "__main__":
    main()
