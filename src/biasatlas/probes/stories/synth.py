"""Synthetic story profiles with planted associations, for tests and the performance benchmark.

Each story gets one prompted (dimension, value) as in the real probe; every other dimension is
drawn from a per-model distribution, left "unknown" at a per-dimension rate, and, for planted
associations A=a → B=b, set to b with probability ``strength`` when the story was prompted a.
Nothing here is model output: it exists to check that the statistics find what was planted and
no more, and to time them at the published scale (650,000 stories).
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

import numpy as np
import pandas as pd

from biasatlas.probes.stories.seeds import Seeds, load_seeds


@dataclass(frozen=True)
class Planted:
    base_attribute: str
    base_value: str
    compared_attribute: str
    compared_value: str
    strength: float


def random_planted(seeds: Seeds, count: int, rng: np.random.Generator, strength: tuple[float, float]) -> list[Planted]:
    """``count`` distinct associations between a prompted value and a value of another dimension."""
    prompted = seeds.prompted
    out: dict[tuple[str, str, str], Planted] = {}
    while len(out) < count:
        dim, value = prompted[rng.integers(len(prompted))]
        others = [d for d in seeds.dimensions.values() if d.key != dim.key]
        target = others[rng.integers(len(others))]
        bvalue = target.values[rng.integers(len(target.values))].key
        key = (dim.key, value.key, target.key)
        out.setdefault(key, Planted(dim.key, value.key, target.key, bvalue, float(rng.uniform(*strength))))
    return list(out.values())


def synthetic_profiles(
    models: Sequence[str],
    languages: Sequence[str],
    stories_per_slice: int,
    *,
    planted: dict[str, list[Planted]] | None = None,
    seed: int = 0,
    unknown_rate: tuple[float, float] = (0.2, 0.7),
    seeds: Seeds | None = None,
) -> pd.DataFrame:
    """One row per story: model, language, base_attribute, base_value, one column per dimension."""
    seeds = seeds or load_seeds("en")
    rng = np.random.default_rng(seed)
    dims = list(seeds.dimensions.values())
    prompted = seeds.prompted
    planted = planted or {}
    frames = []
    for model in models:
        dists = {d.key: rng.dirichlet(np.full(len(d.values), 2.0)) for d in dims}
        unknown = {d.key: rng.uniform(*unknown_rate) for d in dims}
        for language in languages:
            n = stories_per_slice
            pick = rng.integers(len(prompted), size=n)
            base_dim = np.array([prompted[i][0].key for i in range(len(prompted))])[pick]
            base_val = np.array([prompted[i][1].key for i in range(len(prompted))])[pick]
            frame: dict[str, np.ndarray] = {
                "model": np.full(n, model, dtype=object),
                "language": np.full(n, language, dtype=object),
                "base_attribute": base_dim,
                "base_value": base_val,
            }
            for d in dims:
                keys = np.array(d.keys, dtype=object)
                values = keys[rng.choice(len(keys), size=n, p=dists[d.key])]
                for p in planted.get(model, []):
                    if p.compared_attribute != d.key:
                        continue
                    hit = (base_dim == p.base_attribute) & (base_val == p.base_value)
                    values[hit & (rng.random(n) < p.strength)] = p.compared_value
                values[rng.random(n) < unknown[d.key]] = "unknown"
                own = base_dim == d.key
                values[own] = base_val[own]
                frame[d.key] = values
            frames.append(pd.DataFrame(frame))
    out = pd.concat(frames, ignore_index=True)
    for col in out.columns:
        out[col] = out[col].astype("category")
    return out
