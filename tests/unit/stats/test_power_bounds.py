"""Power questions at the edges: every input gives a bounded answer in a moment, or one PowerError; never a
traceback, an endless search or an allocation that grows with 1 / effect²."""

from __future__ import annotations

import math
import time

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from scipy.stats import ttest_rel

from biasatlas.stats.power import MAX_UNITS, PowerError, mcnemar_power, units_needed

ODD = st.sampled_from([math.nan, math.inf, -math.inf, 0.0, -0.0, 1e-300, 5e-324, 1e300])


def _finite(lo: float, hi: float) -> st.SearchStrategy[float]:
    return st.one_of(st.floats(min_value=lo, max_value=hi), ODD)


@pytest.mark.parametrize("effect", [1e-6, 1e-9, 1e-12, 1e-3])
def test_a_tiny_mcnemar_effect_is_refused_at_once(effect: float) -> None:
    started = time.monotonic()
    with pytest.raises(PowerError, match="more than 1,000,000"):
        units_needed("mcnemar", effect, 0.05, 0.8, discordant_rate=0.3)
    assert time.monotonic() - started < 2


@pytest.mark.parametrize(("effect", "sd"), [(1e-9, 8.5), (1e-6, 30.0), (1e-300, 1.0)])
def test_a_tiny_t_effect_is_refused_at_once(effect: float, sd: float) -> None:
    with pytest.raises(PowerError, match="more than 1,000,000"):
        units_needed("paired_t", effect, 0.01, 0.8, sd=sd)


@pytest.mark.parametrize(("effect", "needed"), [(150.0, 3), (99.0, 3), (1e9, 2), (-1e9, 2)])
def test_a_huge_t_effect_needs_few_pairs_and_the_count_is_right(effect: float, needed: int) -> None:
    # statsmodels' power is NaN here (150 / 8.5, n = 2), its solver fails: the answer was a traceback
    n = units_needed("paired_t", effect, 0.01, 0.8, sd=8.5)
    assert n == needed

    def simulated(pairs: int) -> float:  # scipy's ttest_rel on 4,000 planted studies
        rng = np.random.default_rng(pairs)
        x = rng.normal(effect / 8.5, 1, size=(4000, pairs))
        return float((ttest_rel(x, np.zeros_like(x), axis=1).pvalue < 0.01).mean())

    assert simulated(n) >= 0.78
    if n > 2:
        assert simulated(n - 1) < 0.8


def test_the_largest_answer_is_within_the_bound_and_reaches_the_power() -> None:
    n = units_needed("mcnemar", 0.004, 0.05, 0.8, discordant_rate=0.3)
    assert n <= MAX_UNITS and mcnemar_power(n, 0.004, 0.3) >= 0.8 > mcnemar_power(n - 1, 0.004, 0.3)


@settings(max_examples=120, deadline=2000)
@given(effect=_finite(-2, 2), alpha=_finite(-0.5, 1.5), power=_finite(-0.5, 1.5), psi=_finite(-0.5, 1.5))
def test_mcnemar_inputs_give_a_bounded_answer_or_one_error(effect: float, alpha: float, power: float,
                                                           psi: float) -> None:
    try:
        n = units_needed("mcnemar", effect, alpha, power, discordant_rate=psi)
    except PowerError:
        return
    assert 1 <= n <= MAX_UNITS


@settings(max_examples=120, deadline=2000)
@given(effect=_finite(-1e3, 1e3), alpha=_finite(-0.5, 1.5), power=_finite(-0.5, 1.5),
       sd=st.one_of(st.none(), _finite(-10, 100)))
def test_t_inputs_give_a_bounded_answer_or_one_error(effect: float, alpha: float, power: float,
                                                     sd: float | None) -> None:
    try:
        n = units_needed("paired_t", effect, alpha, power, sd=sd)
    except PowerError:
        return
    assert 2 <= n <= MAX_UNITS


def test_extreme_alpha_and_power_are_answered_not_a_traceback() -> None:
    # statsmodels' solver raised TypeError here (found by the CLI's property test)
    n = units_needed("paired_t", 1.0, 1e-143 / 4, 1e-143, sd=6.93)
    assert 2 <= n <= MAX_UNITS
