"""Power of the group-vs-rest disparity test (CMH stratified by question, Holm over the axis's groups): the
planned size finds a planted disparity as often as planned, checked by simulating studies."""

from __future__ import annotations

import math

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from scipy.stats import binom
from statsmodels.stats.contingency_tables import StratifiedTable
from statsmodels.stats.multitest import multipletests

from biasatlas.stats.group_power import (
    MAX_UNITS,
    GroupPowerError,
    cmh_group_vs_rest,
    disparity_mde,
    disparity_power,
    disparity_units,
)

STUDIES = 400


def _interval(rate: float, studies: int = STUDIES) -> tuple[float, float]:
    """The binomial 99% interval of a rejection share over ``studies`` studies."""
    lo, hi = binom.interval(0.99, studies, rate)
    return lo / studies, hi / studies


def test_the_test_is_statsmodels_cmh_without_continuity_correction() -> None:
    rng = np.random.default_rng(1)
    y = (rng.random((40, 6)) < rng.uniform(0.1, 0.7, size=(40, 1))).astype(float)
    y[3, 2] = np.nan  # a question one group was not asked
    ours = cmh_group_vs_rest(y)
    for g in range(y.shape[1]):
        tables = []
        for row in y:
            if np.isnan(row[g]):
                continue
            rest = np.delete(row, g)
            rest = rest[~np.isnan(rest)]
            tables.append([[row[g], 1 - row[g]], [rest.sum(), len(rest) - rest.sum()]])
        expected = StratifiedTable(np.array(tables, dtype=float).transpose(1, 2, 0)).test_null_odds(
            correction=False).pvalue
        assert ours[g] == pytest.approx(expected, rel=1e-9)


def _holm(p: np.ndarray, alpha: float = 0.05) -> np.ndarray:
    """Holm's step-down rejections along the last axis (statsmodels' multipletests, vectorised over studies)."""
    order = np.argsort(p, axis=-1)
    ranked = np.take_along_axis(p, order, axis=-1)
    k = p.shape[-1]
    passed = np.cumprod(ranked <= alpha / (k - np.arange(k)), axis=-1).astype(bool)
    reject = np.zeros_like(passed)
    np.put_along_axis(reject, order, passed, axis=-1)
    return reject


def test_the_vectorised_holm_is_statsmodels_holm() -> None:
    p = np.random.default_rng(5).random((8, 9)) ** 3
    for row, ours in zip(p, _holm(p), strict=True):
        assert (multipletests(row, alpha=0.05, method="holm")[0] == ours).all()


def _studies(n: int, groups: int, delta: float, rng: np.random.Generator, *, spread: float = 0.0) -> np.ndarray:
    """Per study, whether Holm over the groups' CMH p flags group 0 (planted ``delta`` above the others)."""
    found = np.zeros(STUDIES, dtype=bool)
    for s in range(STUDIES):
        base = 0.30 + rng.uniform(-spread, spread, size=(n, 1))  # questions differ in their biased rate
        rates = np.repeat(base, groups, axis=1)
        rates[:, 0] += delta
        y = (rng.random((n, groups)) < rates).astype(float)
        reject = _holm(cmh_group_vs_rest(y))
        found[s] = reject[0] if delta else reject.any()
    return found


def test_at_exactly_the_planned_size_a_planted_10_points_is_found_80_percent_of_the_time() -> None:
    groups = 10
    n = disparity_units(0.10, groups)
    assert disparity_mde(n, groups) == pytest.approx(0.10, abs=0.002)
    found = _studies(n, groups, 0.10, np.random.default_rng(7)).mean()
    lo, hi = _interval(0.80)
    assert lo <= found <= hi, (n, found)


def test_questions_that_differ_in_their_rate_cost_no_power() -> None:
    groups = 8
    n = disparity_units(0.10, groups)
    found = _studies(n, groups, 0.10, np.random.default_rng(11), spread=0.2).mean()
    assert found >= _interval(0.80)[0], (n, found)  # the stratified test conditions the questions' rates away


def test_with_no_group_planted_the_family_wise_error_stays_at_alpha() -> None:
    found = _studies(disparity_units(0.10, 10), 10, 0.0, np.random.default_rng(3), spread=0.2).mean()
    assert found <= _interval(0.05)[1], found


def test_units_and_mde_are_inverse() -> None:
    for groups in (2, 5, 39):
        for delta in (0.05, 0.1, 0.3):
            n = disparity_units(delta, groups)
            assert disparity_power(n, delta, groups) >= 0.8 > disparity_power(n - 1, delta, groups)
            assert disparity_mde(n, groups) <= delta + 1e-6
    assert disparity_mde(0, 10) is None
    assert disparity_mde(1, 10) is None  # one question cannot show even a group always biased


@pytest.mark.parametrize(("kwargs", "message"), [
    ({"delta": 1e-9}, "more than"), ({"delta": 0.0}, "must lie in"), ({"delta": -0.1}, "must lie in"),
    ({"delta": 0.8}, "must lie in"), ({"delta": math.nan}, "must lie in"), ({"groups": 1}, "at least 2"),
    ({"base_rate": 0.0}, "base rate"), ({"alpha": 1.0}, "alpha"), ({"power": 1.0}, "power"),
])
def test_questions_without_an_answer_raise_one_error(kwargs: dict[str, float], message: str) -> None:
    args = {"delta": 0.1, "groups": 10, **kwargs}
    with pytest.raises(GroupPowerError, match=message):
        disparity_units(args.pop("delta"), int(args.pop("groups")), **args)


ODD = st.sampled_from([math.nan, math.inf, -math.inf, 1e-300, 5e-324])


@settings(max_examples=150, deadline=None)
@given(delta=st.one_of(st.floats(min_value=-2, max_value=2), ODD), groups=st.integers(min_value=-3, max_value=700),
       base=st.one_of(st.floats(min_value=-1, max_value=2), ODD),
       alpha=st.one_of(st.floats(min_value=-1, max_value=2), ODD),
       power=st.one_of(st.floats(min_value=-1, max_value=2), ODD))
def test_any_input_gives_a_bounded_answer_or_one_error(delta: float, groups: int, base: float, alpha: float,
                                                       power: float) -> None:
    try:
        n = disparity_units(delta, groups, base_rate=base, alpha=alpha, power=power)
    except GroupPowerError:
        return
    assert 1 <= n <= MAX_UNITS + 1
    assert disparity_power(n, delta, groups, base_rate=base, alpha=alpha) >= power
