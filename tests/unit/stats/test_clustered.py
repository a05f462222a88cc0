"""The exact tests of stats.clustered: McNemar's and Cochran's tests where each set has its own question,
exact by brute force where questions are shared, and at their level where counting shared answers as
independent pairs is not."""

from __future__ import annotations

import itertools
import math

import numpy as np
import pytest
from scipy.stats import binomtest
from statsmodels.stats.contingency_tables import cochrans_q, mcnemar

from biasatlas.stats.clustered import cochran_exact, shared_cochran, shared_reference_test


def test_one_set_per_question_is_mcnemars_exact_test() -> None:
    rng = np.random.default_rng(7)
    for _ in range(150):
        n = int(rng.integers(1, 60))
        x, y = rng.integers(0, 2, n), rng.integers(0, 2, n)
        got = shared_reference_test(x, y, np.arange(n))
        b, c = int(((x == 1) & (y == 0)).sum()), int(((x == 0) & (y == 1)).sum())
        want = float(mcnemar(np.array([[0, b], [c, 0]]), exact=True).pvalue) if b + c else 1.0
        assert got.p == pytest.approx(want, abs=1e-9)
        assert got.effect == pytest.approx((c - b) / n)
        assert (got.b, got.c, got.n_units) == (b, c, n)


def _brute_force_p(x_unit: list[int], y_units: list[list[int]]) -> float:
    """Every assignment of the no-contact role to one of each question's answers, equally likely."""
    observed = sum(sum(ys) - len(ys) * x for x, ys in zip(x_unit, y_units, strict=True))
    outcomes = []
    for choice in itertools.product(*[range(len(ys) + 1) for ys in y_units]):
        t = 0
        for pick, x, ys in zip(choice, x_unit, y_units, strict=True):
            answers = [x, *ys]
            none = answers[pick]
            t += sum(answers) - none - len(ys) * none
        outcomes.append(t)
    return sum(abs(t) >= abs(observed) for t in outcomes) / len(outcomes)


def test_shared_questions_exact_by_brute_force() -> None:
    rng = np.random.default_rng(3)
    for _ in range(40):
        units = int(rng.integers(1, 5))
        sizes = rng.integers(1, 4, units)
        x_unit = [int(v) for v in rng.integers(0, 2, units)]
        y_units = [[int(v) for v in rng.integers(0, 2, size)] for size in sizes]
        x = np.concatenate([[xu] * len(ys) for xu, ys in zip(x_unit, y_units, strict=True)])
        y = np.concatenate(y_units)
        unit = np.repeat(np.arange(units), sizes)
        assert shared_reference_test(x, y, unit).p == pytest.approx(_brute_force_p(x_unit, y_units), abs=1e-9)


def test_cochran_exact_matches_enumeration_and_statsmodels_statistic() -> None:
    rng = np.random.default_rng(5)
    for _ in range(30):
        data = rng.integers(0, 2, (int(rng.integers(2, 7)), 3))
        got = cochran_exact(data)
        rows = [r for r in data if 0 < r.sum() < 3]
        if not rows:
            assert math.isnan(got.p)
            continue
        assert got.statistic == pytest.approx(float(cochrans_q(data).statistic))
        # enumerate every permutation of each differing row's pattern (equally likely)
        options = [sorted(set(itertools.permutations(r))) for r in rows]
        qs = [float(cochrans_q(np.array(t)).statistic) for t in itertools.product(*options)]
        assert got.p == pytest.approx(sum(q >= got.statistic - 1e-9 for q in qs) / len(qs))


def test_shared_omnibus_is_cochrans_q_without_sharing() -> None:
    rng = np.random.default_rng(11)
    data = rng.integers(0, 2, (400, 3))
    got = shared_cochran(data[:, 0], data[:, 1], data[:, 2], np.arange(400))
    assert got.statistic == pytest.approx(float(cochrans_q(data).statistic))
    assert got.p == pytest.approx(float(cochrans_q(data).pvalue))


def _binomial_band(rejections: int, studies: int, alpha: float) -> bool:
    """The observed rate is compatible with alpha (two-sided exact binomial test at 1%)."""
    return binomtest(rejections, studies, alpha).pvalue > 0.01


def test_level_with_six_sets_per_question_where_independent_pairs_are_not() -> None:
    """The MMHB structure: one no-contact answer paired with six framed ones. Under the null (every answer of a
    question drawn alike, questions differing) the naive McNemar on sets rejects far above alpha."""
    rng = np.random.default_rng(2024)
    studies, questions, k, alpha = 300, 120, 6, 0.05
    unit = np.repeat(np.arange(questions), k)
    naive = shared = omnibus = 0
    for _ in range(studies):
        p = rng.uniform(0.1, 0.9, questions)
        x = (rng.random(questions) < p).astype(int)[unit]
        y = (rng.random(questions * k) < p[unit]).astype(int)
        z = (rng.random(questions * k) < p[unit]).astype(int)
        b, c = int(((x == 1) & (y == 0)).sum()), int(((x == 0) & (y == 1)).sum())
        naive += float(mcnemar(np.array([[0, b], [c, 0]]), exact=True).pvalue) < alpha
        shared += shared_reference_test(x, y, unit).p < alpha
        omnibus += shared_cochran(x, y, z, unit, permutations=400).p < alpha
    assert naive / studies > 0.2
    assert _binomial_band(shared, studies, alpha), shared / studies
    assert _binomial_band(omnibus, studies, alpha), omnibus / studies


def test_a_planted_framing_effect_is_found_with_shared_questions() -> None:
    rng = np.random.default_rng(9)
    questions, k = 120, 6
    unit = np.repeat(np.arange(questions), k)
    found = 0
    for _ in range(50):
        p = rng.uniform(0.3, 0.7, questions)
        x = (rng.random(questions) < p).astype(int)[unit]
        y = (rng.random(questions * k) < p[unit] - 0.25).astype(int)  # positive contact: 25 points less biased
        res = shared_reference_test(x, y, unit)
        found += res.p < 0.05 and res.effect < 0
        assert res.ci_low < -0.25 + 0.15 and res.ci_high > -0.25 - 0.15
    assert found >= 45
