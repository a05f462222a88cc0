"""The report and ``summary --json`` against the number of models in one study.

Builds a study from a fake audit (``fake:mK`` models: each answers by its own seed; model 0 has a planted
disparity) of N models × the contact probe in every language of the packs (``--languages``, default all
twelve) with ``--limit`` prompts per cell, then times ``biasatlas report`` and ``biasatlas summary --json``
as whole processes (wall time and peak resident memory from GNU ``time``).
Each N has its own study (smaller ones are not subsets of a larger one).

Building by audit costs about 2.6 s per model × language (and the audit ends by writing its report), so a
1,000-model study would take most of an hour. ``--audited K`` (default: every model) builds it faster and
honestly: the audit asks K models (model 0 planted, as ever), then each further model k gets a copy of the
stored answers of audited model 1 + (k − 1) mod (K − 1) (model 0 where K is 1) under its own backend id
``fake:mk`` and display name ``model-k``: its runs, planned items and responses rows, copied with SQL through
the store's own tables (``runs``, ``run_items``, ``responses``; answer keys get a ``#copy-k`` suffix, so
every model owns its answers). The summary reads such a copy as any other model: the same prompts, the same
decisions (unplanted), its own runs. Only what it measures (the time to summarise N models) is the point.

    .venv/bin/python benchmarks/bench_many_models.py --models 1,10,50 [--languages all] [--limit 21]
    .venv/bin/python benchmarks/bench_many_models.py --models 1000 --languages en --limit 21 --only-summary \
        --audited 4
"""

from __future__ import annotations

import argparse
import json
import os
import sqlite3
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


def copy_models(study: Path, audited: int, models: int) -> None:
    """Models ``audited`` .. ``models`` − 1 as copies of the audited ones' stored answers (module docstring)."""
    conn = sqlite3.connect(study / "biasatlas.db")
    sources = list(range(1, audited)) or [0]
    source_runs: dict[str, list[tuple[int, str]]] = {}
    with conn:
        for k in range(audited, models):
            src = sources[(k - audited) % len(sources)]
            src_id = f"fake:m{src}?biased=Muslims" if src == 0 else f"fake:m{src}"
            new_id, suffix = f"fake:m{k}", f"#copy-{k}"
            if src_id not in source_runs:
                source_runs[src_id] = conn.execute(
                    "SELECT run_id, config_json FROM runs WHERE backend_id = ? ORDER BY run_id", (src_id,)).fetchall()
            conn.execute("INSERT INTO responses (key, backend_id, request_json, text, option_probs_json, "
                         "prompt_tokens, completion_tokens, latency_s, finish_reason, info_json, created_at) "
                         "SELECT key || ?, ?, request_json, text, option_probs_json, prompt_tokens, completion_tokens, "
                         "latency_s, finish_reason, info_json, created_at FROM responses WHERE backend_id = ?",
                         (suffix, new_id, src_id))
            for run_id, config_json in source_runs[src_id]:
                config = json.loads(config_json)
                config["display_name"] = f"model-{k:04d}"
                cur = conn.execute("INSERT INTO runs (probe, backend_id, config_json, package_version, started_at, "
                                   "finished_at, status, totals_json) SELECT probe, ?, ?, package_version, "
                                   "started_at, finished_at, status, totals_json FROM runs WHERE run_id = ?",
                                   (new_id, json.dumps(config), run_id))
                conn.execute("INSERT INTO run_items (run_id, prompt_id, key, backend_id, mode, sample_index) "
                             "SELECT ?, prompt_id, key || ?, ?, mode, sample_index FROM run_items WHERE run_id = ?",
                             (cur.lastrowid, suffix, new_id, run_id))
    conn.close()


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
    parser.add_argument("--audited", type=int, help="audit only this many models, copy the others' answers")
    parser.add_argument("--json", type=Path, help="write the figures here")
    parser.add_argument("--keep", type=Path, help="build the studies under this folder (kept; a study found "
                        "there from an earlier call is timed again, not rebuilt)")
    args = parser.parse_args()
    languages = ALL_LANGUAGES if args.languages == "all" else args.languages.split(",")
    root = args.keep or Path(tempfile.mkdtemp(prefix="many-models-"))
    root.mkdir(parents=True, exist_ok=True)
    rows = []
    for n in (int(x) for x in args.models.split(",")):
        study = root / f"m{n}"
        yaml = root / f"m{n}.yaml"
        audited = n if args.audited is None else min(n, args.audited)
        audit_file(yaml, audited, languages, args.limit)
        start = time.perf_counter()
        if not (args.keep and study.exists()):  # one built by an earlier call is timed again, not rebuilt
            built = subprocess.run([str(BIN), "audit", str(yaml), "--study", str(study)], capture_output=True,
                                   text=True)  # the audit ends by writing the report: timed below on its own
            if built.returncode != 0:
                raise SystemExit(f"the audit of {audited} models exited {built.returncode}: {built.stderr[-2000:]}")
            copy_models(study, audited, n)
        row: dict[str, float | int | str] = {"models": n, "audited": audited, "languages": len(languages),
                                             "limit": args.limit, "build_s": round(time.perf_counter() - start, 1)}
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
