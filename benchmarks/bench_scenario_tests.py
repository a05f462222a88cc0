"""Time of the stories scenario tests (chi-square with a permutation p per attribute and level) for one model ×
language slice of the full English plan (2,844 prompts, one story each, 19 attributes): attributes that do not
depend on the scenario (the permutations stop early) and attributes that all do (every test runs its 1,000).

    PYTHONPATH=src .venv/bin/python benchmarks/bench_scenario_tests.py
"""

from __future__ import annotations

import sys
import time
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).parent))
import bench_scenario_level as level

from biasatlas.probes.stories import scenarios
from biasatlas.probes.stories.plan import plan_prompts


def main() -> None:
    rng = np.random.default_rng(1)
    dims = list(level.SEEDS.dimensions)
    prompts = plan_prompts(["en"], limit=None, seed=0)
    null = level.simulate(rng, prompts, dims, samples=1)
    start = time.perf_counter()
    tests = scenarios.scenario_tests(null)
    print(f"no scenario effect: {len(tests)} tests in {time.perf_counter() - start:.1f} s, "
          f"{int(tests['significant'].sum())} significant")
    strong = null.copy()
    scenario = strong["scenario_key"].astype("category").cat.codes.to_numpy()
    for dim in dims:
        keys = list(level.SEEDS.dimensions[dim].keys)
        own = strong["base_attribute"] == dim
        pick = np.where(rng.random(len(strong)) < 0.5, scenario % len(keys), rng.integers(0, len(keys), len(strong)))
        strong.loc[~own, dim] = np.array(keys, dtype=object)[pick][~own]
    start = time.perf_counter()
    tests = scenarios.scenario_tests(strong)
    print(f"every attribute depends on the scenario: {len(tests)} tests in {time.perf_counter() - start:.1f} s, "
          f"{int(tests['significant'].sum())} significant")


if __name__ == "__main__":
    main()
