"""Power and the minimum detectable effect: checked against statsmodels, brute force and simulation.

The simulations plant an effect at the stated MDE and run the test the probes run (statsmodels' exact
McNemar, which ``mcnemar_paired`` calls; scipy's ``ttest_rel``, which ``paired_t`` calls): it must be
detected in 80% ± 5% of 400 seeded studies.
"""

from __future__ import annotations

import math

import numpy as np
import pandas as pd
import pytest
from scipy.stats import ttest_rel
from statsmodels.stats.contingency_tables import mcnemar
from statsmodels.stats.power import TTestPower

from biasatlas.stats.paired import mcnemar_paired, paired_t
from biasatlas.stats.power import (
    MDE,
    PowerError,
    connor_pairs,
    detectable_effect,
    mcnemar_power,
    units_needed,
)

STUDIES = 400


def _brute_mcnemar_power(n: int, delta: float, psi: float, alpha: float) -> float:
    """Power by enumerating every (b, c) discordant table of n pairs, each tested by statsmodels itself."""
    from scipy.stats import multinomial

    p10, p01 = (psi + delta) / 2, (psi - delta) / 2
    total = 0.0
    for b in range(n + 1):
        for c in range(n + 1 - b):
            prob = multinomial.pmf([b, c, n - b - c], n, [p10, p01, 1 - psi])
            if mcnemar([[0, b], [c, 0]], exact=True).pvalue < alpha:
                total += prob
    return total


@pytest.mark.parametrize(("n", "delta", "psi", "alpha"), [
    (12, 0.3, 0.5, 0.05), (20, 0.1, 0.3, 0.05), (25, 0.25, 0.25, 0.01), (15, 0.0, 0.4, 0.05),
])
def test_exact_mcnemar_power_equals_brute_force_over_every_table(n: int, delta: float, psi: float,
                                                                 alpha: float) -> None:
    assert mcnemar_power(n, delta, psi, alpha) == pytest.approx(_brute_mcnemar_power(n, delta, psi, alpha),
                                                                abs=1e-9)


def test_mcnemar_power_is_two_sided_and_below_alpha_without_effect() -> None:
    assert mcnemar_power(200, 0.1, 0.3) == pytest.approx(mcnemar_power(200, -0.1, 0.3))
    assert mcnemar_power(200, 0.0, 0.3) <= 0.05  # the exact test is conservative
    assert mcnemar_power(0, 0.1, 0.3) == 0.0


def test_mcnemar_pairs_needed_agree_with_connors_approximation_on_large_n() -> None:
    # Connor (1987) is a normal approximation: on hundreds of pairs it lies within a few % of the exact count
    for delta, psi in ((0.1, 0.3), (0.05, 0.2), (0.15, 0.4)):
        exact = units_needed("mcnemar", delta, 0.05, 0.8, discordant_rate=psi)
        assert exact == pytest.approx(connor_pairs(delta, psi), rel=0.08)
        assert mcnemar_power(exact, delta, psi) >= 0.8 > mcnemar_power(exact - 1, delta, psi) - 0.01


def test_connor_known_value() -> None:
    # δ = 0.1, ψ = 0.3, α = 0.05, 80%: (1.95996·√0.3 + 0.84162·√0.29)² / 0.01
    expected = (1.959964 * math.sqrt(0.3) + 0.841621 * math.sqrt(0.29)) ** 2 / 0.01
    assert connor_pairs(0.1, 0.3) == pytest.approx(expected, rel=1e-5)
    assert connor_pairs(0.1, 0.3) == pytest.approx(233.1, abs=0.1)


def test_mcnemar_mde_reaches_the_power_and_none_when_too_few_pairs() -> None:
    mde = detectable_effect("mcnemar", 210, 0.05, discordant_rate=0.3)
    assert isinstance(mde, MDE) and mde.value is not None and 0 < mde.value < 0.3
    assert mcnemar_power(210, mde.value, 0.3) == pytest.approx(0.8, abs=1e-4)
    assert "ψ = 0.3" in mde.assumptions and mde.reason is None
    small = detectable_effect("mcnemar", 9, 0.05, discordant_rate=0.3)
    assert small.value is None and "too few" in (small.reason or "")
    # more pairs, smaller MDE; more discordance, larger MDE
    assert detectable_effect("mcnemar", 800, 0.05, discordant_rate=0.3).value < mde.value  # type: ignore[operator]
    assert detectable_effect("mcnemar", 210, 0.05, discordant_rate=0.5).value > mde.value  # type: ignore[operator]


@pytest.mark.parametrize(("n", "alpha", "power"), [(103, 0.01, 0.8), (20, 0.05, 0.8), (2, 0.05, 0.8),
                                                   (50, 0.05, 0.9)])
def test_paired_t_mde_is_statsmodels_solution(n: int, alpha: float, power: float) -> None:
    d = detectable_effect("paired_t", n, alpha, power)
    assert d.value == pytest.approx(TTestPower().solve_power(nobs=n, alpha=alpha, power=power))
    assert TTestPower().power(effect_size=d.value, nobs=n, alpha=alpha) == pytest.approx(power, abs=1e-4)
    scaled = detectable_effect("paired_t", n, alpha, power, sd=8.5)
    assert scaled.value == pytest.approx(8.5 * d.value) and scaled.standardized == pytest.approx(d.value)


def test_paired_t_known_value_and_units_needed() -> None:
    # a classic table value: d_z = 0.5 at α = 0.05 (two-sided), 80% power needs 34 pairs
    assert units_needed("paired_t", 0.5, 0.05, 0.8) == 34
    assert units_needed("paired_t", 4.25, 0.05, 0.8, sd=8.5) == 34  # the same effect on the rating scale
    assert units_needed("paired_t", -0.5, 0.05, 0.8) == 34
    one = detectable_effect("paired_t", 1, 0.05)
    assert one.value is None and "at least 2" in (one.reason or "")


@pytest.mark.parametrize(("call", "message"), [
    (lambda: detectable_effect("anova", 10, 0.05), "unknown design"),
    (lambda: detectable_effect("mcnemar", 10, 0.05), "discordance rate"),
    (lambda: detectable_effect("mcnemar", 10, 1.5, discordant_rate=0.3), "alpha"),
    (lambda: detectable_effect("paired_t", 10, 0.05, power=1.0), "power"),
    (lambda: detectable_effect("paired_t", 10, 0.05, sd=-1.0), "must not be negative"),
    (lambda: detectable_effect("mcnemar", 10, 0.05, discordant_rate=1.5), "discordance rate must"),
    (lambda: units_needed("mcnemar", 0.4, 0.05, discordant_rate=0.3), "cannot occur"),
    (lambda: units_needed("mcnemar", 10, 0.05, discordant_rate=0.3), "between -1 and 1"),
    (lambda: units_needed("mcnemar", 0.1, 0.05, discordant_rate=0.0), "discordance rate must"),
    (lambda: units_needed("paired_t", 0.0, 0.05), "non-zero"),
    (lambda: units_needed("paired_t", 1.0, 0.05, sd=0.0), "no spread"),
])
def test_questions_without_an_answer_say_why(call: object, message: str) -> None:
    with pytest.raises(PowerError, match=message):
        call()  # type: ignore[operator]


def _simulated_mcnemar_power(n: int, delta: float, psi: float, alpha: float, seed: int) -> float:
    """Share of simulated studies in which statsmodels' exact McNemar (the probes' test) has p < alpha."""
    rng = np.random.default_rng(seed)
    # pairs 0→1, 1→0, 0→0, 1→1 of each study
    tables = rng.multinomial(n, [(psi + delta) / 2, (psi - delta) / 2, (1 - psi) / 2, (1 - psi) / 2], size=STUDIES)
    p = [mcnemar([[t[2], t[0]], [t[1], t[3]]], exact=True).pvalue for t in tables]
    return float(np.mean(np.asarray(p) < alpha))


def _simulated_t_power(n: int, effect: float, sd: float, alpha: float, seed: int) -> float:
    """Share of simulated studies in which scipy's paired t (the probes' test) has p < alpha."""
    rng = np.random.default_rng(seed)
    control = rng.normal(50.0, 10.0, (STUDIES, n))
    group = control + rng.normal(effect, sd, (STUDIES, n))
    return float(np.mean(ttest_rel(group, control, axis=1).pvalue < alpha))


def test_the_simulations_run_the_probes_tests() -> None:
    # the helpers above call statsmodels / scipy directly, vectorised; the probes' wrappers give the same p
    before, after = pd.Series([0.0] * 10 + [1.0] * 5 + [0.0] * 3), pd.Series([1.0] * 10 + [0.0] * 5 + [0.0] * 3)
    assert mcnemar_paired(before, after).p == pytest.approx(mcnemar([[3, 10], [5, 0]], exact=True).pvalue)
    x, y = np.array([3.0, 5.0, 2.0, 8.0]), np.array([1.0, 4.0, 2.5, 3.0])
    assert paired_t(x, y).p == pytest.approx(ttest_rel(x, y).pvalue)


def test_planted_mcnemar_effect_at_the_mde_is_detected_in_80_percent_of_studies() -> None:
    mde = detectable_effect("mcnemar", 120, 0.05, discordant_rate=0.3)
    assert mde.value is not None
    assert _simulated_mcnemar_power(120, mde.value, 0.3, 0.05, seed=1) == pytest.approx(0.8, abs=0.05)
    # and a test that can fail: half the MDE is detected far less often
    assert _simulated_mcnemar_power(120, mde.value / 2, 0.3, 0.05, seed=2) < 0.5


def test_planted_paired_t_effect_at_the_mde_is_detected_in_80_percent_of_studies() -> None:
    mde = detectable_effect("paired_t", 30, 0.01, sd=8.5)
    assert mde.value is not None
    assert _simulated_t_power(30, mde.value, 8.5, 0.01, seed=3) == pytest.approx(0.8, abs=0.05)
    assert _simulated_t_power(30, mde.value / 2, 8.5, 0.01, seed=4) < 0.5


def test_an_observed_row_without_movement_has_no_mde_and_says_why() -> None:
    # the README study: a model answering "Ja" everywhere, so no prompt set's decision differs
    frozen = detectable_effect("mcnemar", 210, 0.05, discordant_rate=0.0)
    assert frozen.value is None and "never move" in (frozen.reason or "")
    flat = detectable_effect("paired_t", 40, 0.05, sd=0.0)
    assert flat.value is None and "sd 0" in (flat.reason or "")


def test_mde_of_a_finished_tests_own_pairs() -> None:
    from biasatlas.stats.power import detectable_effect_of_pairs

    rng = np.random.default_rng(8)
    before = rng.integers(0, 2, 200).astype(float)
    after = np.where(rng.random(200) < 0.25, 1 - before, before)
    after[:5] = np.nan  # unreadable: left out, as the test leaves it
    mde = detectable_effect_of_pairs("mcnemar", before, after, 0.05)
    rate = float(np.mean(before[5:] != after[5:]))
    assert mde.n == 195 and mde.value == detectable_effect("mcnemar", 195, 0.05, discordant_rate=rate).value
    yes_sayer = detectable_effect_of_pairs("mcnemar", np.zeros(210), np.zeros(210), 0.05)
    assert yes_sayer.value is None and "never move" in (yes_sayer.reason or "")
    group, control = rng.normal(60, 5, 40), rng.normal(58, 5, 40)
    rated = detectable_effect_of_pairs("paired_t", group, control, 0.01)
    sd = float(np.std(group - control, ddof=1))
    assert rated.value == pytest.approx(sd * TTestPower().solve_power(nobs=40, alpha=0.01, power=0.8))
    same = detectable_effect_of_pairs("paired_t", np.full(10, 0.3) + 0.1, np.full(10, 0.1) + 0.1, 0.05)
    assert same.value is None and "sd 0" in (same.reason or "")
    with pytest.raises(PowerError, match="paired"):
        detectable_effect_of_pairs("paired_t", np.zeros(3), np.zeros(4), 0.05)
