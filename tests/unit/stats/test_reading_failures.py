"""The group test of reading failures: its statistics against statsmodels and a brute-force permutation."""

from __future__ import annotations

import numpy as np
import pytest
from statsmodels.stats.contingency_tables import StratifiedTable

from biasatlas.stats.reading_failures import exceeds_effect, group_failure_test


def _design(rng: np.random.Generator, strata: int, groups: int, per: int) -> tuple[np.ndarray, np.ndarray]:
    stratum = np.repeat(np.arange(strata), groups * per)
    group = np.tile(np.repeat(np.arange(groups), per), strata)
    return stratum, group


def test_two_groups_statistic_is_the_cmh_test_of_statsmodels() -> None:
    rng = np.random.default_rng(1)
    stratum, group = _design(rng, 60, 2, 3)
    p = rng.uniform(0, 0.3, 60)[stratum] * np.where(group == 0, 2.0, 1.0)
    failed = rng.random(len(p)) < p
    result = group_failure_test(failed, group, stratum)
    tables = []
    for s in range(60):
        here = stratum == s
        a, n1 = failed[here & (group == 0)].sum(), (here & (group == 0)).sum()
        c, n2 = failed[here & (group == 1)].sum(), (here & (group == 1)).sum()
        tables.append(np.array([[a, n1 - a], [c, n2 - c]]))
    expected = StratifiedTable(tables).test_null_odds(correction=False)
    assert result.statistic == pytest.approx(expected.statistic)
    assert result.dof == 1
    assert result.groups[0].p == pytest.approx(result.groups[1].p)  # one comparison, seen from either side


def test_each_groups_exact_p_agrees_with_a_brute_force_permutation() -> None:
    rng = np.random.default_rng(2)
    stratum, group = _design(rng, 25, 4, 2)
    p = rng.uniform(0, 0.25, 25)[stratum] * np.where(group == 3, 2.5, 1.0)
    failed = rng.random(len(p)) < p
    result = group_failure_test(failed, group, stratum)
    # shuffle which answers failed within each question, count group 3's failures
    observed = failed[group == 3].sum()
    expected = sum(failed[stratum == s].mean() * (group[stratum == s] == 3).sum() for s in range(25))
    draws, hits = 20000, 0
    order = np.argsort(stratum, kind="stable")
    bounds = np.flatnonzero(np.diff(stratum[order])) + 1
    for _ in range(draws):
        shuffled = np.concatenate([rng.permutation(part) for part in np.split(failed[order], bounds)])
        hits += abs(shuffled[group[order] == 3].sum() - expected) >= abs(observed - expected) - 1e-9
    brute = hits / draws
    assert result.groups[3].p == pytest.approx(brute, abs=4 * np.sqrt(brute * (1 - brute) / draws) + 1e-3)
    assert result.groups[3].ratio == pytest.approx(
        failed[group == 3].mean() / failed[group != 3].mean())


def test_holm_adjusts_over_the_groups() -> None:
    from statsmodels.stats.multitest import multipletests

    rng = np.random.default_rng(3)
    stratum, group = _design(rng, 40, 5, 2)
    failed = rng.random(len(stratum)) < np.where(group == 0, 0.3, 0.1)
    result = group_failure_test(failed, group, stratum)
    raw = [g.p for g in result.groups]
    assert [g.p_adj for g in result.groups] == pytest.approx(list(multipletests(raw, method="holm")[1]))
    assert result.differs == any(g.p_adj < 0.05 for g in result.groups)


def test_no_failure_is_no_test() -> None:
    stratum, group = _design(np.random.default_rng(0), 5, 3, 2)
    result = group_failure_test(np.zeros(len(group), bool), group, stratum)
    assert result.p is None and not result.differs
    assert all(g.p is None and g.pct == 0 for g in result.groups)


def test_a_question_one_group_answered_alone_carries_no_information() -> None:
    # group 1 failed only on a question no other group was asked: no evidence against the null
    failed = np.array([1, 0, 0, 1, 1, 1])
    group = np.array([0, 1, 0, 1, 1, 1])
    stratum = np.array(["q1", "q1", "q2", "q2", "q3", "q3"])
    result = group_failure_test(failed, group, stratum)
    assert result.informative == 2  # q3 holds group 1 only


@pytest.mark.parametrize(("rates", "effect", "flag"), [
    ([2.0, 8.0], 5.0, True),   # 6 points of failures apart, an effect of 5 points: the failures may make it
    ([2.0, 8.0], -7.0, False),  # the sign of the effect does not matter, its size does
    ([3.0, 3.5], 0.2, True),
    ([4.0], 1.0, False),       # one rate: nothing to compare
    ([1.0, float("nan")], 0.5, False),
])
def test_the_flag_compares_the_spread_of_failures_with_the_effect(rates: list[float], effect: float,
                                                                   flag: bool) -> None:
    assert exceeds_effect(rates, effect) is flag
