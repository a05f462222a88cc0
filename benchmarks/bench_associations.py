"""Benchmark of the story association analysis at the published scale.

Generates 650,000 synthetic story profiles (23 models × 10 languages, 19 attributes, planted
associations per model), runs the whole two-step analysis globally (per model) and per language
(per model × language) with the sequential strategy, reports each step's time and the peak
memory, then checks the BH decisions against the reference procedure (scipy's Monte Carlo
Fisher test with 500,000 resamples on every table, seed 42) on whole BH families holding at
least ``--check-tables`` varied tables.

    .venv/bin/python benchmarks/bench_associations.py --workers 2 --json bench.json
"""

from __future__ import annotations

import argparse
import json
import os
import resource
import sys
import time
from dataclasses import replace
from typing import Any

import numpy as np
import pandas as pd

from biasatlas.probes.stories.seeds import load_seeds
from biasatlas.probes.stories.synth import random_planted, synthetic_profiles
from biasatlas.stats.associations import (
    UNKNOWN,
    AssociationConfig,
    encode_profiles,
    family_pvalues,
    mine_associations,
)
from biasatlas.stats.associations.tables import prune_array
from biasatlas.stats.multitest import adjust

LANGS = ("en", "fr", "es", "it", "pt", "nl", "uk", "ar", "hi", "zh")


def peak_rss_mb() -> float:
    own = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss
    children = resource.getrusage(resource.RUSAGE_CHILDREN).ru_maxrss
    return max(own, children) / 1024  # Linux reports KiB


def cpu_seconds() -> float:
    """User + system CPU of this process and its reaped children (the worker processes)."""
    t = os.times()
    return t.user + t.system + t.children_user + t.children_system


def loadavg() -> str:
    return " ".join(f"{x:.2f}" for x in os.getloadavg())


def family_tables(profiles: pd.DataFrame, dims: list[str], labels: dict[str, str], a_dim: str,
                  config: AssociationConfig) -> list[tuple[str, np.ndarray]]:
    """The tables of one BH family, built exactly as the analysis builds them."""
    mask = np.ones(len(profiles), dtype=bool)
    for col, value in labels.items():
        mask &= (profiles[col].astype(str) == value).to_numpy()
    sub = profiles[mask & (profiles["base_attribute"].astype(str) == a_dim).to_numpy()]
    codes, vocab = encode_profiles(sub, dims)
    out = []
    for b_dim in dims:
        if b_dim == a_dim:
            continue
        a_v, b_v = np.asarray(vocab[a_dim], dtype=object), np.asarray(vocab[b_dim], dtype=object)
        nb = len(b_v)
        flat = np.bincount(codes[a_dim] * nb + codes[b_dim], minlength=len(a_v) * nb).reshape(len(a_v), nb)
        keep_b = (b_v != UNKNOWN) & (b_v != "other")
        table = prune_array(flat[a_v != UNKNOWN][:, keep_b], a_v[a_v != UNKNOWN], b_v[keep_b],
                             config.min_row_total)
        if table is not None:
            out.append((b_dim, table.counts))
    return out


def _reference_family(args: tuple[list[np.ndarray], AssociationConfig]) -> list[float]:
    tables, config = args
    ref = replace(config, strategy="reference")
    return [s.p for s in family_pvalues(tables, ref, [0] * len(tables), [1.0] * len(tables), [False] * len(tables))]


def check_agreement(profiles: pd.DataFrame, dims: list[str], tables: pd.DataFrame, config: AssociationConfig,
                    min_tables: int, workers: int, seed: int) -> dict[str, Any]:
    """Reference vs sequential BH decisions on whole families (BH needs the whole family)."""
    rng = np.random.default_rng(seed)
    fam_cols = [c for c in ("model", "language") if c in tables.columns]
    fams = tables.groupby([*fam_cols, "base_attribute"])
    # Varied: prefer families where the sequential strategy had to resample (hard cases),
    # mixing global and per-language slices, then fill with random ones.
    keys = list(fams.groups)
    hard = [k for k in keys if (fams.get_group(k)["p_method"] != "chi2-asymptotic").any()]
    # hardest first: families that needed the reference call, then resampled families holding
    # significant tables (decisions near the BH threshold), then any resampled, then any
    ref = [k for k in hard if (fams.get_group(k)["p_method"] == "fisher-mc").any()]
    sig = [k for k in hard if fams.get_group(k)["significant"].any() and k not in ref]
    for group in (ref, sig, hard, keys):
        rng.shuffle(group)
    chosen: list[Any] = []
    total = 0
    for k in [*ref[:2], *sig[:3], *hard, *keys]:
        if k in chosen:
            continue
        chosen.append(k)
        total += len(fams.get_group(k))
        if total >= min_tables:
            break
    jobs, meta = [], []
    for k in chosen:
        group = fams.get_group(k)
        labels = dict(zip(fam_cols, k[:-1], strict=True))
        built = family_tables(profiles, dims, labels, k[-1], config)
        assert [b for b, _ in built] == group["compared_attribute"].tolist(), "table mismatch"
        jobs.append(([t for _, t in built], config))
        meta.append((k, group))
    started = time.perf_counter()
    if workers > 1:
        from concurrent.futures import ProcessPoolExecutor

        with ProcessPoolExecutor(max_workers=workers) as pool:
            ref_p = list(pool.map(_reference_family, jobs))
    else:
        ref_p = [_reference_family(j) for j in jobs]
    seconds = time.perf_counter() - started
    agree = disagree = 0
    rows = []
    for (k, group), pref in zip(meta, ref_p, strict=True):
        ref_sig = adjust(pref, "bh") < config.alpha
        ours = group["significant"].to_numpy()
        agree += int((ref_sig == ours).sum())
        disagree += int((ref_sig != ours).sum())
        for (_, row), p_r, s_r in zip(group.iterrows(), pref, ref_sig, strict=True):
            rows.append({"family": "/".join(map(str, k)), "B": row["compared_attribute"],
                         "shape": f"{row['rows']}x{row['cols']}", "n": int(row["n"]), "p_ours": row["p"],
                         "method": row["p_method"], "p_ref": p_r, "sig_ours": bool(row["significant"]),
                         "sig_ref": bool(s_r)})
    detail = pd.DataFrame(rows)
    return {
        "families": len(chosen),
        "tables": agree + disagree,
        "agree": agree,
        "disagree": disagree,
        "significant_ref": int(detail["sig_ref"].sum()),
        "reference_seconds": round(seconds, 1),
        "shapes": sorted(detail["shape"].unique().tolist()),
        "methods_ours": detail["method"].value_counts().to_dict(),
        "disagreements": detail[detail["sig_ours"] != detail["sig_ref"]].to_dict("records"),
    }


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--models", type=int, default=23)
    ap.add_argument("--languages", type=int, default=10)
    ap.add_argument("--stories", type=int, default=650_000, help="total stories")
    ap.add_argument("--workers", type=int, default=2)
    ap.add_argument("--planted", type=int, default=30, help="planted associations per model")
    ap.add_argument("--check-tables", type=int, default=50, help="tables in the reference check (0: skip)")
    ap.add_argument("--seed", type=int, default=7)
    ap.add_argument("--per-language-models", type=int, default=None,
                    help="analyse per language only the first K models (time is then extrapolated)")
    ap.add_argument("--json", default=None, help="write the figures to this file")
    args = ap.parse_args()

    report: dict[str, Any] = {"load_before": loadavg(), "cpus": os.cpu_count()}
    seeds = load_seeds("en")
    dims = list(seeds.dimensions)
    models = [f"model{i:02d}" for i in range(args.models)]
    langs = list(LANGS[: args.languages])
    rng = np.random.default_rng(args.seed)
    t = time.perf_counter()
    planted = {m: random_planted(seeds, args.planted, rng, (0.15, 0.6)) for m in models}
    per_slice = args.stories // (len(models) * len(langs))
    profiles = synthetic_profiles(models, langs, per_slice, planted=planted, seed=args.seed)
    report["generate_s"] = round(time.perf_counter() - t, 1)
    report["stories"] = len(profiles)
    print(f"generated {len(profiles)} stories in {report['generate_s']} s (load {loadavg()})", file=sys.stderr)

    config = AssociationConfig(workers=args.workers)
    steps: dict[str, Any] = {}
    results = {}
    for name, by in (("global", ("model",)), ("per_language", ("model", "language"))):
        data = profiles
        if name == "per_language" and args.per_language_models:
            keep = models[: args.per_language_models]
            data = profiles[profiles["model"].isin(keep)].reset_index(drop=True)
            data["model"] = data["model"].cat.remove_unused_categories()
        t = time.perf_counter()
        cpu0 = cpu_seconds()
        res = mine_associations(data, dims, by=by, config=config)
        wall = time.perf_counter() - t
        cpu = cpu_seconds() - cpu0
        results[name] = res
        steps[name] = {
            "wall_s": round(wall, 1),
            "cpu_s": round(cpu, 1),
            "slices": res.slices,
            "tables": len(res.tables),
            "cpu_s_by_step": {k: round(v, 1) for k, v in res.timings.items()},
            "p_methods": res.tables["p_method"].value_counts().to_dict(),
            "significant_tables": int(res.tables["significant"].sum()),
            "kept_tables": int(res.tables["kept"].sum()),
            "associations": len(res.associations),
            "load_after": loadavg(),
            "worker_cpu_s": round(res.timings.get("cpu", 0.0), 1),
            "worker_cpu_s_per_slice": round(res.timings.get("cpu", 0.0) / max(res.slices, 1), 2),
        }
        if name == "per_language" and args.per_language_models:
            full = len(models) * len(langs)
            cpu = res.timings.get("cpu", 0.0)
            steps[name]["extrapolated_worker_cpu_s_all_slices"] = round(cpu * full / res.slices, 1)
        print(f"{name}: {json.dumps(steps[name])}", file=sys.stderr)
    report["steps"] = steps
    report["analysis_wall_s"] = round(sum(s["wall_s"] for s in steps.values()), 1)
    report["analysis_cpu_s"] = round(sum(s["cpu_s"] for s in steps.values()), 1)
    report["peak_rss_mb"] = round(peak_rss_mb(), 0)
    truth = {(m, p.base_attribute, p.base_value, p.compared_attribute, p.compared_value)
             for m, ps in planted.items() for p in ps}
    cells = results["global"].cells
    found = {(r.model, r.base_attribute, r.base_value, r.compared_attribute, r.compared_value)
             for r in cells[cells["association"]].itertuples()}
    report["planted"] = {"planted": len(truth), "found": len(found & truth), "not_planted_found": len(found - truth)}
    if args.check_tables:
        per_lang = results["per_language"].tables
        glob = results["global"].tables
        half = max(args.check_tables // 2, 1)
        report["agreement"] = {
            "global": check_agreement(profiles, dims, glob, config, half, args.workers, args.seed),
            "per_language": check_agreement(profiles, dims, per_lang, config, args.check_tables - half,
                                             args.workers, args.seed + 1),
        }
    report["load_after"] = loadavg()
    text = json.dumps(report, indent=2, default=str)
    print(text)
    if args.json:
        with open(args.json, "w", encoding="utf-8") as fh:
            fh.write(text + "\n")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
