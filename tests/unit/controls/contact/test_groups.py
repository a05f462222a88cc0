"""The group test of the controls: a planted group is recovered, null groups are not, the bound is binomial."""

from __future__ import annotations

import numpy as np
import pandas as pd
import pytest

from biasatlas.controls.common.measure import false_flag_bound
from biasatlas.controls.contact.groups import find_groups, flagged
from biasatlas.controls.contact.power import analytic_mde, detection_rate, exact_min_questions

GROUPS = ["A", "B", "C", "D", "E", "F", "G"]


def outcomes(planted: str | None, rate: float, base: float, cells: int = 10, seed: int = 0) -> pd.DataFrame:
    """Every group answers the same questions (cells x 3 framings); the planted group is biased at ``rate``,
    the others at ``base``."""
    rng = np.random.default_rng(seed)
    rows = []
    for c in range(cells):
        for contact in ("none", "positive", "negative"):
            for g in GROUPS:
                p = rate if g == planted else base
                rows.append({"language": "en", "template_set": "en-b", "template_id": f"t{c}", "scale": "certainty",
                             "action": "positive", "contact": contact, "group": g, "principle": f"p{c}",
                             "scenario": "s", "biased": float(rng.random() < p)})
    return pd.DataFrame(rows)


def test_a_planted_group_is_found_more_biased_with_an_interval_around_the_truth() -> None:
    frame = outcomes("C", 0.9, 0.02)
    found = {f.group: f for f in find_groups(frame)}
    assert found["C"].significant and found["C"].direction == "more biased"
    assert found["C"].ci_low < 0.88 < found["C"].ci_high  # the planted difference, 0.9 − 0.02
    assert found["C"].n == 30
    assert len(flagged(list(found.values()), "en", exclude="C")) == 0


def test_a_group_less_biased_than_the_others_is_found_in_that_direction() -> None:
    found = {f.group: f for f in find_groups(outcomes("A", 0.0, 0.8, seed=3))}
    assert found["A"].significant and found["A"].direction == "less biased"


def test_no_planted_group_flags_about_alpha_of_the_groups() -> None:
    families = [find_groups(outcomes(None, 0.3, 0.3, cells=6, seed=s)) for s in range(10)]
    # a flag needs 4 of 6 pairs significant after BH: under the null far rarer than alpha per group
    assert sum(f.significant for family in families for f in family) <= 1


def test_identical_answers_flag_nothing() -> None:
    assert not any(f.significant for f in find_groups(outcomes(None, 0.0, 0.0)))


def test_false_flag_bound_is_the_binomial_quantile() -> None:
    assert false_flag_bound(6, 0.05) == 2  # P(X <= 1) = 0.967 < 0.99 <= P(X <= 2) = 0.998
    assert false_flag_bound(20, 0.05) == 4
    assert false_flag_bound(6, 0.05, risk=0.05) == 1


def test_detection_rate_is_high_for_a_strong_effect_and_low_without_one() -> None:
    strong = outcomes("C", 0.9, 0.02, cells=8)
    null = outcomes("C", 0.1, 0.1, cells=8, seed=5)
    assert detection_rate(strong, "en", "C", sets=4, studies=8) >= 0.85
    assert detection_rate(null, "en", "C", sets=4, studies=8) <= 0.25


def test_analytic_mde_matches_the_normal_approximation_for_many_pairs() -> None:
    from scipy.stats import norm

    sd, n, groups = 0.4, 400, 7
    expected = (norm.ppf(1 - 0.05 / groups / 2) + norm.ppf(0.8)) * sd / np.sqrt(n)
    assert analytic_mde(sd, n, groups) == pytest.approx(expected, rel=0.01)
    assert analytic_mde(sd, 12, groups) > analytic_mde(sd, 24, groups)


def test_exact_min_questions_is_where_bh_adjusted_mcnemar_first_passes() -> None:
    # 7 groups: 21 pairs, 6 of them the planted group's; 2 * 0.5^7 * 21 / 6 = 0.055, 2 * 0.5^8 * 21 / 6 = 0.027
    assert exact_min_questions(7) == 8
    assert exact_min_questions(3) == 6  # 3 pairs, 2 the group's: 2 * 0.5^n * 1.5 < 0.05 from n = 6
