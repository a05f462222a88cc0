"""The stories control's power curve: resampled studies recover a planted association of known size, and find
nothing where nothing was planted."""

from __future__ import annotations

import random

import pandas as pd
from stories_profiles import measurement, profiles

from biasatlas.controls.stories import power as stories_power
from biasatlas.controls.stories.check import MIN_ROW_TOTAL


def pooled(planted_share: float, per_seed: int = 12, seeds: int = 2, planted_group: str = "oceania") -> pd.DataFrame:
    return stories_power.pool({s: profiles(planted_share, per_group=per_seed, seed=s, planted_group=planted_group)
                                for s in range(seeds)})


def test_the_pool_keeps_stories_of_different_seeds_apart() -> None:
    pool = pooled(1.0)
    assert len(pool) == 6 * 24 and pool[stories_power.UNIT].nunique() == 6 * 24
    drawn = stories_power.draw(pool, 7, random.Random(0))
    assert drawn.groupby("base_value")[stories_power.UNIT].nunique().tolist() == [7] * 6


def test_a_total_plant_is_found_in_every_study_from_eight_stories_a_group() -> None:
    rows = stories_power.power_curve(pooled(1.0), measurement(), sizes=(8, 12, 24), studies=20)
    assert [r["stories_per_group"] for r in rows] == [8, 12, 24]
    assert all(r["detection_rate"] == 1.0 and r["association_rate"] == 1.0 for r in rows), rows
    assert all(r["untouched_flag_rate"] <= 0.05 for r in rows), rows
    assert rows[0]["pool_per_group"] == 24


def test_a_partial_plant_is_found_more_often_with_more_stories() -> None:
    rows = stories_power.power_curve(pooled(0.6, per_seed=30), measurement(), sizes=(6, 30, 60), studies=30)
    rates = [r["detection_rate"] for r in rows]
    assert rates[0] < rates[-1] and rates[-1] >= 0.8, rows


def test_nothing_planted_is_found_in_no_study() -> None:
    rows = stories_power.power_curve(pooled(0.0, planted_group="none"), measurement(), sizes=(6, 12, 24), studies=20)
    assert all(r["detection_rate"] == 0.0 for r in rows), rows
    assert all(r["untouched_flag_rate"] <= 0.05 for r in rows), rows


def test_sizes_the_pool_cannot_give_or_the_mining_cannot_test_are_left_out() -> None:
    rows = stories_power.power_curve(pooled(1.0, per_seed=4, seeds=2), measurement(), sizes=(3, 4, 8, 9))
    assert [r["stories_per_group"] for r in rows] == [8]
    assert MIN_ROW_TOTAL > 4
