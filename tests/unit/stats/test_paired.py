"""Paired tests and intervals: Newcombe's interval for paired proportions, log-odds and mean differences."""

from __future__ import annotations

import math
import warnings

import numpy as np
import pandas as pd
import pytest
from scipy import stats as sps

from biasatlas.stats.paired import (
    mcnemar_paired,
    newcombe_paired_ci,
    paired_mean_difference,
    paired_t,
    tost_paired,
)
from biasatlas.stats.proportions import mean_interval


def test_newcombe_matches_the_published_worked_example() -> None:
    # Fagerland, Lydersen & Laake, "Statistical Analysis of Contingency Tables", ch. 8: complete response
    # before and after consolidation therapy (Cavo et al. 2012), table [[59, 6], [16, 80]]: the Newcombe
    # square-and-add interval is -0.0621 (95% CI -0.1186 to -0.0046).
    low, high = newcombe_paired_ci(both=59, first_only=6, second_only=16, neither=80)
    assert low == pytest.approx(-0.1186, abs=5e-5)
    assert high == pytest.approx(-0.0046, abs=5e-5)


def test_newcombe_is_antisymmetric_and_contains_the_estimate() -> None:
    low, high = newcombe_paired_ci(10, 3, 9, 20)
    back_low, back_high = newcombe_paired_ci(10, 9, 3, 20)
    assert (low, high) == pytest.approx((-back_high, -back_low))
    assert low < (3 - 9) / 42 < high


def test_no_discordant_pairs_do_not_collapse_the_interval() -> None:
    low, high = newcombe_paired_ci(both=0, first_only=0, second_only=0, neither=30)
    assert low < 0 < high and high - low > 0.1  # 30 agreeing pairs still leave uncertainty
    x = pd.Series([True] * 5 + [False] * 25)
    res = mcnemar_paired(x, x, ci="newcombe")
    assert res.effect == 0 and res.ci_low < 0 < res.ci_high and res.p == 1.0
    assert "Newcombe" in res.method
    # the default keeps the Wald interval the other callers rely on
    assert (mcnemar_paired(x, x).ci_low, mcnemar_paired(x, x).ci_high) == (0.0, 0.0)


def test_mcnemar_newcombe_direction_is_after_minus_before() -> None:
    before = pd.Series([1] * 10 + [0] * 10, dtype=float)
    after = pd.Series([0] * 8 + [1] * 2 + [0] * 10, dtype=float)  # 8 of 10 biased became unbiased
    res = mcnemar_paired(before, after, ci="newcombe")
    assert res.effect == pytest.approx(-0.4)
    assert res.ci_low < -0.4 < res.ci_high < 0


def test_paired_mean_difference_is_scipy_paired_t_with_its_interval() -> None:
    rng = np.random.default_rng(1)
    before = rng.normal(0, 1, 40)
    after = before + 0.3 + rng.normal(0, 0.5, 40)
    res = paired_mean_difference(after, before, alpha=0.05)
    ref = sps.ttest_rel(after, before)
    ci = ref.confidence_interval(0.95)
    assert res.p == pytest.approx(ref.pvalue) and res.statistic == pytest.approx(ref.statistic)
    assert res.effect == pytest.approx(float(np.mean(after - before)))
    assert (res.ci_low, res.ci_high) == pytest.approx((ci.low, ci.high))
    assert res.n == 40 and "d_z" in res.method
    narrower = paired_mean_difference(after, before, alpha=0.5)
    assert narrower.ci_high - narrower.ci_low < res.ci_high - res.ci_low


def test_paired_mean_difference_needs_two_pairs() -> None:
    res = paired_mean_difference(np.array([0.1, math.nan]), np.array([0.2, 0.3]))
    assert res.n == 1 and math.isnan(res.p)


def test_mean_interval_is_the_t_interval() -> None:
    values = np.array([0.2, 0.4, 0.5, 0.9, 0.3])
    mean, low, high = mean_interval(values)
    ref = sps.t.interval(0.95, 4, loc=values.mean(), scale=sps.sem(values))
    assert mean == pytest.approx(values.mean()) and (low, high) == pytest.approx(ref)
    assert all(math.isnan(v) for v in mean_interval(np.array([]))[0:1])
    one = mean_interval(np.array([0.4]))
    assert one[0] == 0.4 and math.isnan(one[1])


# Paired samples with no spread in their differences (a model that answers the same number for every
# scenario, or identical answers before and after): the t statistic is 0/0 or c/0. scipy returns NaN
# or an infinite t with p 0 and warns "Precision loss ... Results may be unreliable", a warning that
# reached the terminal of `biasatlas summary`. The values stay scipy's (their limit); the warning goes,
# and the method says why.
NO_SPREAD = [
    # (x, y, t, p, mean difference, words in the method)
    ([50.0, 50.0, 50.0, 50.0], [50.0, 50.0, 50.0, 50.0], math.nan, math.nan, 0.0, "no pair differs"),
    ([53.0, 53.0, 53.0], [50.0, 50.0, 50.0], math.inf, 0.0, 3.0, "every difference"),
    ([0.2, 0.4, 0.6], [0.7, 0.9, 1.1], -math.inf, 0.0, -0.5, "every difference"),
    ([7.0, 7.0], [7.0, 7.0], math.nan, math.nan, 0.0, "no pair differs"),
]


@pytest.mark.parametrize(("x", "y", "t", "p", "mean", "words"), NO_SPREAD)
def test_no_spread_in_the_differences_gives_scipys_limit_without_a_warning(
    x: list[float], y: list[float], t: float, p: float, mean: float, words: str
) -> None:
    with warnings.catch_warnings():
        warnings.simplefilter("error")  # any warning fails the test
        diff = paired_mean_difference(np.array(x), np.array(y))
        dz = paired_t(np.array(x), np.array(y))
    for res in (diff, dz):
        assert res.n == len(x)
        assert (math.isnan(res.statistic) and math.isnan(t)) or res.statistic == t
        assert (math.isnan(res.p) and math.isnan(p)) or res.p == p
        assert res.ci_low == pytest.approx(mean) and res.ci_high == pytest.approx(mean)
        assert words in res.method
    assert diff.effect == pytest.approx(mean)
    assert math.isnan(dz.effect)  # Cohen's d_z: no spread, undefined


def test_differences_with_any_spread_are_scipys_t_test() -> None:
    x, y = np.array([53.0, 53.0, 54.0]), np.array([50.0, 50.0, 50.0])
    res, expected = paired_t(x, y), sps.ttest_rel(x, y)
    assert res.statistic == pytest.approx(expected.statistic) and res.p == pytest.approx(expected.pvalue)
    assert res.method == "paired t-test"


def test_tost_without_spread_uses_the_t_tests_tolerance() -> None:
    """Issue 25, point 10: differences 1/3 ± 4e-15 are 'no spread' for the t-test, so for the TOST too:
    the exact sign test, 0.5^3 = 0.125 (was ttost_paired's 1e-30 on the rounding noise)."""
    y = np.array([50.0, 61.0, 72.0])
    x = y + 1 / 3
    assert np.ptp(x - y) > 0 and "every difference" in paired_t(x, y).method
    assert tost_paired(x, y, 2.0) == pytest.approx(0.125)
    assert tost_paired(x + 3, y, 2.0) == 1.0  # a constant difference outside the margin
    assert math.isnan(tost_paired(x[:1], y[:1], 2.0))


def test_tost_with_spread_is_statsmodels_ttost_paired() -> None:
    from statsmodels.stats.weightstats import ttost_paired

    rng = np.random.default_rng(2)
    y = rng.normal(50, 5, 30)
    x = y + rng.normal(0.3, 1.0, 30)
    assert tost_paired(x, y, 2.0) == pytest.approx(ttost_paired(x, y, -2.0, 2.0)[0])
