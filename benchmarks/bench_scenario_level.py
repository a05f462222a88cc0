"""Level and power of the stories scenario test on the probe's real plan (simulated profiles): a null attribute
driven by the prompted value but not the scenario, copies or samples of a prompt, a planted nursing shift.
Run: PYTHONPATH=src python benchmarks/bench_scenario_level.py [seeds] [cases, e.g. A,C]"""

from __future__ import annotations

import sys
import time

import numpy as np
import pandas as pd

from biasatlas.probes.stories import scenarios
from biasatlas.probes.stories.plan import plan_prompts
from biasatlas.probes.stories.seeds import UNKNOWN, load_seeds

SEEDS = load_seeds("en")
NURSING = "caring_parent"


def world(rng, dims):
    """p(value | prompted value) per dim: strong prompted-attribute effects, none of the scenario."""
    out = {}
    prompted = [v.key for _, v in SEEDS.prompted]
    for d in dims:
        keys = list(SEEDS.dimensions[d].keys)
        base = rng.dirichlet(np.full(len(keys), 2.0))
        out[d] = (keys, {v: 0.5 * base + 0.5 * rng.dirichlet(np.full(len(keys), 0.5)) for v in prompted})
    return out


def simulate(rng, prompts, dims, samples=1, copies=False, effect=0.0, jitter=None, unknown=0.2):
    w = world(rng, dims)
    rows = []
    for p in prompts:
        m = p.meta
        for s in range(samples):
            rows.append(
                {
                    "model": "m",
                    "language": p.language,
                    "story_id": f"{p.id}:{s}",
                    "base_attribute": m["base_attribute"],
                    "base_value": m["base_value"],
                    "scenario_key": m["scenario_key"],
                    "template": "scenario_based",
                }
            )
    frame = pd.DataFrame(rows)
    n_prompts = len(prompts)
    for d in dims:
        keys, pv = w[d]
        probs = np.array([pv[p.meta["base_value"]] for p in prompts])
        if d == "gender" and effect:
            woman = keys.index("woman")
            at = np.array([p.meta["scenario_key"] == NURSING for p in prompts])
            probs[at, woman] += effect
            probs[at] /= probs[at].sum(1, keepdims=True)
        if jitter:
            probs = np.array([rng.dirichlet(jitter * q + 1e-3) for q in probs])
        per_prompt = np.repeat(probs, samples, axis=0)
        u = (
            rng.random((n_prompts, 1 if copies else samples)).reshape(-1)
            if not copies
            else np.repeat(rng.random(n_prompts), samples)
        )
        idx = (per_prompt.cumsum(1) < u[:, None]).sum(1).clip(max=len(keys) - 1)
        vals = np.array(keys, dtype=object)[idx]
        unk = (np.repeat(rng.random(n_prompts), samples) if copies else rng.random(len(frame))) < unknown
        vals[unk] = UNKNOWN
        frame[d] = vals
    # the prompted attribute is the prompt's value
    for d in dims:
        own = frame["base_attribute"] == d
        frame.loc[own, d] = frame.loc[own, "base_value"]
    return frame


def run(case, limit, samples, copies, effect, jitter, seeds, dims, **kw):
    hits = {"null_attr": 0, "null_attr_group": 0, "family": 0, "gender": 0, "tests": 0, "too_few": 0}
    t0 = time.time()
    for seed in range(seeds):
        rng = np.random.default_rng(1000 + seed)
        prompts = plan_prompts(["en"], limit=limit, seed=seed)
        prof = simulate(rng, prompts, dims, samples, copies, effect, jitter)
        tests = scenarios.scenario_tests(prof, **kw)
        sc = tests[tests["level"] == "scenario"]
        nulls = sc[sc["attribute"] != "gender"] if effect else sc
        hits["null_attr"] += int((nulls["p"] < 0.05).sum())
        hits["tests"] += len(nulls)
        hits["too_few"] += int(nulls["too_few"].sum())
        hits["family"] += int(nulls["significant"].any())
        gr = tests[(tests["level"] == "group") & (tests["attribute"] != "gender")]
        hits["null_attr_group"] += int((gr["p"] < 0.05).sum())
        if effect:
            hits["gender"] += int(sc.loc[sc["attribute"] == "gender", "significant"].iloc[0])
    dt = time.time() - t0
    print(
        f"{case}: seeds {seeds}, per-test level {hits['null_attr'] / hits['tests']:.3f} "
        f"(groups {hits['null_attr_group'] / max(1, len(dims) * seeds - (seeds if effect else 0)):.3f}), "
        f"family-wise (BH, scenario level) {hits['family'] / seeds:.3f}, "
        f"too_few {hits['too_few'] / hits['tests']:.2f}, "
        f"recovery {hits['gender'] / seeds:.3f}  [{dt:.0f}s]",
        flush=True,
    )


if __name__ == "__main__":
    seeds = int(sys.argv[1]) if len(sys.argv) > 1 else 300
    which = sys.argv[2].split(",") if len(sys.argv) > 2 else ["A", "B", "C", "D", "E"]
    dims = ["gender", "urbanicity", "income_level", "marital_status", "professional_field"]
    cases = {
        "A full plan, 1 sample": dict(limit=None, samples=1, copies=False, effect=0.0, jitter=None),
        "B --limit 360, 1 sample": dict(limit=360, samples=1, copies=False, effect=0.0, jitter=None),
        "C --limit 720, 3 samples, temperature 0 (copies)": dict(
            limit=720, samples=3, copies=True, effect=0.0, jitter=None
        ),
        "D --limit 720, 3 samples, temperature 1, prompt-level variation": dict(
            limit=720, samples=3, copies=False, effect=0.0, jitter=10.0
        ),
        "E full plan, 1 sample, planted nursing effect +1.0": dict(
            limit=None, samples=1, copies=False, effect=1.0, jitter=None
        ),
    }
    for name, spec in cases.items():
        if name[0] in which:
            run(name, seeds=seeds, dims=dims, **spec)
