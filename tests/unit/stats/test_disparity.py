"""The group-disparity statistics: exact conditional tests checked by enumeration, intervals and Holm by
statsmodels, power and MDE each other's inverse, the step-down reference."""

from __future__ import annotations

import itertools
import math

import numpy as np
import pytest

from biasatlas.stats.disparity import (
    binary_groups,
    binary_omnibus,
    continuous_groups,
    continuous_omnibus,
    group_mde,
    group_power,
    newcombe_interval,
    step_down,
)
from biasatlas.stats.multitest import holm


def _enumerated_p(table: np.ndarray, group: int) -> float:
    """The exact two-sided p of ``group``'s count by enumerating every within-question placement of the ones."""
    rows = []
    for row in table:
        k, r = len(row), int(row.sum())
        placements = [np.isin(np.arange(k), c).astype(int) for c in itertools.combinations(range(k), r)]
        rows.append([p[group] for p in placements])
    counts = [sum(c) for c in itertools.product(*rows)]
    mean = float(np.mean(counts))
    observed = abs(float(table[:, group].sum()) - mean)
    return float(np.mean([abs(c - mean) >= observed - 1e-9 for c in counts]))


def test_the_group_test_is_the_exact_within_question_permutation_test() -> None:
    table = np.array([[1, 0, 0], [1, 1, 0], [1, 0, 0], [0, 0, 1], [1, 0, 1], [1, 0, 0]], float)
    results = binary_groups(table, ["a", "b", "c"], np.arange(6))
    for j, result in enumerate(results):
        assert result.p == pytest.approx(_enumerated_p(table, j), abs=1e-12)
    assert results[0].effect == pytest.approx(np.mean(table[:, 0] - table[:, 1:].mean(1)))


def test_groups_not_asked_a_question_are_left_out_of_it() -> None:
    table = np.array([[1, 0, np.nan], [1, 0, 0], [1, 1, 0], [0, 0, np.nan]])
    result = binary_groups(table, ["a", "b", "c"], np.arange(4))[2]
    assert result.n == 2 and result.value == 0.0
    assert result.others == pytest.approx(np.mean([0.5, 1.0]))


def test_the_omnibus_statistic_is_cochrans_q_on_a_complete_table() -> None:
    from statsmodels.stats.contingency_tables import cochrans_q

    rng = np.random.default_rng(4)
    table = (rng.random((40, 5)) < np.linspace(0.2, 0.6, 5)).astype(float)
    ours = binary_omnibus(table)
    q = cochrans_q(table)
    k = table.shape[1]
    assert ours.statistic * (k - 1) / k == pytest.approx(q.statistic)
    assert 0 < ours.p <= 1 and "permutation" in ours.method


def test_the_omnibus_permutation_test_holds_its_level() -> None:
    rng = np.random.default_rng(0)
    rejections = 0
    for _ in range(100):
        p_row = rng.uniform(0.1, 0.9, (20, 1))
        table = (rng.random((20, 6)) < p_row).astype(float)
        rejections += binary_omnibus(table, permutations=200).p < 0.05
    assert rejections <= 11  # binomial(100, 0.05): P(X > 11) < 0.01


def test_newcombe_interval_is_statsmodels_newcombe() -> None:
    from statsmodels.stats.proportion import confint_proportions_2indep

    low, high = newcombe_interval(7 / 20, 20, 15 / 60, 60)
    expected = confint_proportions_2indep(7, 20, 15, 60, method="newcomb", compare="diff")
    assert (low, high) == pytest.approx(expected)


def test_holm_is_statsmodels_holm() -> None:
    from statsmodels.stats.multitest import multipletests

    p = np.array([0.01, 0.04, 0.03, 0.2, np.nan, 0.001])
    ours = holm(p)
    ok = ~np.isnan(p)
    assert ours[ok] == pytest.approx(multipletests(p[ok], method="holm")[1])
    assert math.isnan(ours[4])


def test_power_at_the_mde_is_the_power_asked() -> None:
    mde = group_mde(90, 7, 0.3)
    assert group_power(90, 7, 0.3, mde) == pytest.approx(0.8, abs=1e-6)
    assert group_mde(360, 7, 0.3) < mde


def test_a_planted_group_does_not_make_the_others_differ() -> None:
    rng = np.random.default_rng(1)
    table = (rng.random((400, 8)) < 0.3).astype(float)
    table[:, 2] = (rng.random(400) < 0.8).astype(float)
    one_step = binary_groups(table, list("abcdefgh"), np.arange(400))
    stepped = step_down(table, list("abcdefgh"), np.arange(400), 0.05, binary_groups)
    assert {r.group for r in stepped if r.p_adj < 0.05} == {"c"}
    # against a reference that holds the planted group the untouched ones look favoured
    assert sum(r.p_adj < 0.05 for r in one_step) > 1


def test_ratings_groups_and_friedman() -> None:
    rng = np.random.default_rng(2)
    base = rng.normal(60, 10, (30, 1))
    table = base + rng.normal(0, 2, (30, 4))
    table[:, 1] -= 8
    omnibus = continuous_omnibus(table)
    assert omnibus.p < 1e-6 and "Friedman" in omnibus.method
    found = step_down(table, list("abcd"), np.arange(30), 0.05, continuous_groups)
    assert {r.group for r in found if r.p_adj < 0.05} == {"b"}
    assert found[1].ci_low < -8 < found[1].ci_high
