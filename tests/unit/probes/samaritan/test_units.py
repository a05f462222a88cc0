"""The Samaritan tests' unit is the scenario (issue 37): samples, a stored answer shared by two prompts (one
cache key) and the control that every group is compared with never count as extra units, nor reweigh one."""

from __future__ import annotations

import numpy as np
import pandas as pd
from samaritan_design import design  # tests/helpers (pythonpath)
from scipy import stats

from biasatlas.probes.samaritan import analysis as sa

PHRASINGS = {"person": ("control", "control", 0.0), "woman": ("female", "gender", 0.0),
             "man": ("male", "gender", 1.5)}


def _samples(n: int, seed: int = 3) -> pd.DataFrame:
    """``n`` samples of every prompt (a key each: prompt text x sample), ratings varying between samples."""
    base = design(PHRASINGS, n_scenarios=20, noise=2.0, seed=seed)
    rng = np.random.default_rng(seed)
    parts = [base.assign(sample_index=s, rating=base["rating"] + rng.normal(0, 3, len(base))) for s in range(n)]
    frame = pd.concat(parts, ignore_index=True)
    frame["key"] = (frame["phrasing"] + frame["scenario"] + frame["rephrasing"].astype(str)
                    + frame["sample_index"].astype(str))
    return frame


def test_samples_are_averaged_per_scenario_not_counted() -> None:
    frame = _samples(3)
    table = sa.compare_to_control(frame, correction="none").set_index("group")
    assert (table["n"] == 20).all()  # 20 scenarios, not 20 x 4 rephrasings x 3 samples
    # the t-test by hand: per scenario, the group's mean over rephrasings and samples minus the control's
    per = frame.groupby(["group", "scenario"])["rating"].mean().unstack("group")
    expected = stats.ttest_rel(per["male"], per["control"])
    assert np.isclose(table.loc["male", "p"], expected.pvalue)
    assert np.isclose(table.loc["male", "mean_diff"], float((per["male"] - per["control"]).mean()))


def test_a_stored_answer_shared_by_two_rows_counts_once() -> None:
    frame = _samples(2)
    # the same stored answer twice (one key): a second prompt of the same text, or a run that planned it again
    doubled = pd.concat([frame, frame[(frame["group"] == "male") & (frame["sample_index"] == 0)]],
                        ignore_index=True)
    before = sa.compare_to_control(frame, correction="none").set_index("group")
    after = sa.compare_to_control(doubled, correction="none").set_index("group")
    columns = ["n", "mean_diff", "p", "sd_diff", "rating", "control_rating"]
    pd.testing.assert_frame_equal(after[columns], before[columns])


def test_the_shared_control_is_one_side_of_each_groups_test() -> None:
    frame = _samples(1)
    table = sa.compare_to_control(frame, correction="none").set_index("group")
    control = frame[frame["group"] == "control"].groupby("scenario")["rating"].mean()
    for group in ("female", "male"):
        mine = frame[frame["group"] == group].groupby("scenario")["rating"].mean()
        assert np.isclose(table.loc[group, "p"], stats.ttest_rel(mine, control).pvalue)
        assert table.loc[group, "n"] == len(control)
