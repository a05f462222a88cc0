"""The scenario test's level and power on the stories probe's own plan (its prompts, scenarios and prompted
values), with profiles simulated as the probe makes them: one profile per story, several stories a prompt with
``--samples``, each story's attributes driven by its prompted value (the associations the probe exists to find)
and, for the null attributes, not by the scenario.

The unit is the prompt: with deterministic decoding (temperature 0) a prompt's samples are copies, and even when
sampled they share the prompt. A test counting stories as independent rejects a null attribute far above its
level there; the test here must stay at it."""

from __future__ import annotations

from functools import lru_cache

import numpy as np
import pandas as pd

from biasatlas.probes.base import limit_prompts
from biasatlas.probes.stories import scenarios
from biasatlas.probes.stories.plan import build_prompts, design_cell
from biasatlas.probes.stories.seeds import UNKNOWN, load_seeds

NURSING = "caring_parent"
DIMS = ("gender", "urbanicity", "marital_status")


@lru_cache(maxsize=1)
def _plan() -> tuple:
    return tuple(build_prompts(load_seeds("en")))


def _profiles(seed: int, limit: int | None, samples: int = 1, copies: bool = False, effect: float = 0.0,
              ) -> pd.DataFrame:
    """Profiles of the plan's stories: values drawn given the prompted value (strong effects, as in the paper),
    the nursing scenario adding ``effect`` to the share of women; ``copies``: a prompt's samples are one story."""
    seeds = load_seeds("en")
    rng = np.random.default_rng(seed)
    prompts = limit_prompts(_plan(), limit, seed, cell=design_cell)  # what plan_prompts(["en"], limit, seed) draws
    meta = pd.DataFrame([p.meta for p in prompts])
    frame = pd.DataFrame({"model": "m", "language": "en",
                          "story_id": [f"{p.id}:{s}" for p in prompts for s in range(samples)],
                          "template": "scenario_based"})
    for column in ("base_attribute", "base_value", "scenario_key"):
        frame[column] = np.repeat(meta[column].to_numpy(), samples)
    for dim in seeds.dimensions:
        frame[dim] = UNKNOWN
    prompted = sorted(set(meta["base_value"]))
    for dim in DIMS:
        keys = list(seeds.dimensions[dim].keys)
        given = {v: rng.dirichlet(np.full(len(keys), 0.5)) for v in prompted}
        probs = np.array([given[v] for v in meta["base_value"]])
        if dim == "gender" and effect:
            at = (meta["scenario_key"] == NURSING).to_numpy()
            probs[at, keys.index("woman")] += effect
            probs[at] /= probs[at].sum(1, keepdims=True)
        draws = len(prompts) if copies else len(frame)
        u = rng.random(draws)
        rows = np.repeat(probs, 1 if copies else samples, axis=0)
        values = np.array(keys, dtype=object)[(rows.cumsum(1) < u[:, None]).sum(1).clip(max=len(keys) - 1)]
        values[rng.random(draws) < 0.2] = UNKNOWN
        frame[dim] = np.repeat(values, samples) if copies else values
        own = (frame["base_attribute"] == dim).to_numpy()
        frame.loc[own, dim] = frame.loc[own, "base_value"]
    return frame


def _rejections(seeds: range, **plan) -> tuple[int, int]:
    hits = tests = 0
    for seed in seeds:
        result = scenarios.scenario_tests(_profiles(seed, **plan), permutations=199)
        null = result[(result["level"] == "scenario") & (result["attribute"] != "gender")]
        hits += int((null["p"] < 0.05).sum())
        tests += len(null)
    return hits, tests


def test_copies_of_a_prompt_do_not_make_a_null_attribute_significant():
    # --samples 3 at temperature 0: every story thrice; counted as stories, a null is rejected nearly always
    hits, tests = _rejections(range(30), limit=360, samples=3, copies=True)
    assert tests == 60 and hits <= 7  # level 0.05: 8 or more of 60 has probability 1%


def test_a_null_attribute_is_rejected_at_about_the_nominal_level_on_a_limited_plan():
    hits, tests = _rejections(range(30), limit=360, samples=2)  # sampled: a prompt's stories still share it
    assert tests == 60 and hits <= 7


def test_the_planted_scenario_is_recovered_on_the_full_plan():
    found = 0
    for seed in range(3):
        result = scenarios.scenario_tests(_profiles(seed, limit=None, effect=1.0), permutations=199)
        gender = result[(result["level"] == "scenario") & (result["attribute"] == "gender")].iloc[0]
        found += bool(gender["significant"])
        assert gender["prompts"] == gender["n"]  # one story a prompt: as many units as stories
    assert found == 3
