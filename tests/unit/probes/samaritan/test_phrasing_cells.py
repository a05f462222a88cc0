"""Issue 25 (points 9, 10): planted truths the Samaritan analysis must recover when a cell lacks a phrasing,
a rephrasing is missing from a brittleness set, or constant answers differ only by rounding."""

from __future__ import annotations

import numpy as np
import pandas as pd
import pytest
from samaritan_design import design, unreadable  # tests/helpers (pythonpath)

from biasatlas.probes.samaritan import analysis as sa


def _design(phrasings: dict[str, tuple[str, str, float]], n_scenarios: int = 103, noise: float = 1.0,
            seed: int = 0) -> pd.DataFrame:
    """Every phrasing (name -> (group, category, true shift)) in every scenario × rephrasing."""
    return design(phrasings, n_scenarios, noise, seed)



SENIOR = {"person": ("control", "control", 0.0), "senior citizen": ("senior", "age", 16.0),
          "elderly person": ("senior", "age", -2.0), "old person": ("senior", "age", -2.0)}


def test_a_phrasing_missing_in_some_cells_does_not_shift_the_bias() -> None:
    """Planted: senior phrasings at +16, −2, −2 (true pooled bias +4); the +16 phrasing unreadable in
    rephrasings 1 and 2 of 95 of 103 scenarios (15.4% of the group's answers, under the 20% warning).
    Pooling whatever phrasings a cell had read gave 1.04 [0.54, 1.55], 'equivalent'."""
    frame = _design(SENIOR, noise=2.0, seed=1)
    lost = (frame["phrasing"] == "senior citizen") & frame["rephrasing"].isin([1, 2])
    lost &= frame["scenario"] < "s095"
    frame = unreadable(frame, lost)
    row = sa.compare_to_control(frame).iloc[0]
    assert row["ci_low"] <= 4.0 <= row["ci_high"], (row["bias"], row["ci_low"], row["ci_high"])
    assert row["bias"] == pytest.approx(4.0, abs=0.5)
    assert row["verdict"] == "differs"
    assert row["n"] == 103  # every scenario keeps each phrasing in some rephrasing: none left out
    assert row["n_scenarios_incomplete"] == 0
    assert row["n_cells_unpaired"] == 2 * 95  # the lost phrasing cells, counted
    warning = sa.unparseable(frame).set_index("group").loc["senior"]
    assert not warning["unreadable_warning"]  # the share alone would not have warned


def test_a_scenario_that_lacks_a_phrasing_entirely_is_left_out_and_counted() -> None:
    frame = _design(SENIOR, n_scenarios=30, noise=2.0, seed=2)
    gone = (frame["phrasing"] == "senior citizen") & frame["scenario"].isin(["s000", "s001", "s002"])
    row = sa.compare_to_control(unreadable(frame, gone)).iloc[0]
    assert row["n"] == 27 and row["n_scenarios_incomplete"] == 3
    assert row["bias"] == pytest.approx(4.0, abs=0.6)


def test_unpaired_repeatability_runs_are_matched_by_phrasing() -> None:
    first = _design(SENIOR, n_scenarios=40, seed=3)
    second = _design(SENIOR, n_scenarios=40, seed=4).assign(sample_index=1)
    lost = (second["phrasing"] == "senior citizen") & second["rephrasing"].isin([1, 2])
    row = sa.repeatability(pd.concat([first, unreadable(second, lost)], ignore_index=True))
    senior = row.set_index("group").loc["senior"]
    assert abs(senior["difference"]) < 0.5, senior["difference"]


def test_brittleness_is_over_complete_rephrasing_sets() -> None:
    """Planted: no group changes brittleness (the control's is the truth). The group's rephrasing 4 (+8)
    is unreadable in half the scenarios; an SD over the other three rephrasings made the group look
    less brittle (3.03 vs the control's 5.30 in the review's case)."""
    frame = _design({"person": ("control", "control", 0.0), "male": ("male", "gender", 0.0)}, n_scenarios=40,
                    seed=5)
    lost = (frame["group"] == "male") & (frame["rephrasing"] == 4) & (frame["scenario"] < "s020")
    frame = unreadable(frame, lost)
    row = sa.compare_to_control(frame).iloc[0]
    control = sa.control_summary(frame).iloc[0]
    assert row["brittleness"] == pytest.approx(control["brittleness"], abs=0.3)
    assert row["brittleness_n"] == 20 and row["brittleness_incomplete"] == 20


def test_constant_answers_that_differ_by_rounding_have_no_spread() -> None:
    """Differences 1/3 ± 4e-15 over 3 scenarios: the t-test already says 'no spread'; the TOST must too
    (exact sign test: 0.5^3 = 0.125, undetermined), not ttost_paired's p = 1e-30 ('equivalent')."""
    frame = _design({"person": ("control", "control", 0.0), "male": ("male", "gender", 0.0)}, n_scenarios=3,
                    noise=0.0)
    frame["rating"] = frame["rating"] + np.where(frame["group"] == "male", 1 / 3, 0.0)
    row = sa.compare_to_control(frame).iloc[0]
    d = frame[frame["group"] == "male"]["rating"].to_numpy() - frame[frame["group"] != "male"]["rating"].to_numpy()
    assert np.ptp(d) > 0  # the differences are not exactly equal
    assert row["tost_p"] == pytest.approx(0.125)
    # nor does the difference test read the t-test's limit (t infinite, p 0) as evidence: the same exact
    # sign test, two-sided, 2 × 0.5^3
    assert row["p"] == pytest.approx(0.25) and "sign test" in row["test"]
    assert row["verdict"] == "undetermined"


def test_brittleness_counts_a_set_complete_over_the_rephrasings_it_was_asked_in() -> None:
    """A group asked in rephrasings 1-2 only (another run than the control's 1-4) is not 'incomplete'."""
    frame = _design({"person": ("control", "control", 0.0), "male": ("male", "gender", 0.0)}, n_scenarios=10,
                    seed=6)
    frame = frame[(frame["group"] == "control") | (frame["rephrasing"] <= 2)]
    row = sa.compare_to_control(frame).iloc[0]
    assert row["brittleness_n"] == 10 and row["brittleness_incomplete"] == 0
