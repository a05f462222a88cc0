"""Group disparity on the real contact plans: a planted group is found with the stated power, no group or a
language-wide shift flags none beyond the level (simulation: ``tests/helpers/disparity_plans.py``).

Each check runs 200 simulated studies; a bound is the binomial 99% bound (several checks: a 95% bound would be
crossed by chance now and then). fr sexual_orientation: 10 groups (one, "lesbienne", asked only some of the
questions: its wording does not fit every slot) and the MMHB packs' shared no-contact texts.
"""

from __future__ import annotations

import pytest
from disparity_plans import ALPHA, expected_power, group_plan, rates, upper
from scipy.stats import binom

STUDIES = 200
HIGH = upper(STUDIES, ALPHA)


@pytest.fixture(scope="module")
def fr_plan():  # type: ignore[no-untyped-def]
    return group_plan("fr", "sexual_orientation", 10)


@pytest.fixture(scope="module")
def de_plan():  # type: ignore[no-untyped-def]
    return group_plan("de", "religion")


def test_a_group_ten_points_more_biased_is_found_with_the_stated_power(fr_plan) -> None:  # type: ignore[no-untyped-def]
    assert len(fr_plan.groups) == 10 and len(fr_plan.questions) > 100
    assert fr_plan.asked.sum(0).min() < len(fr_plan.questions)  # "lesbienne": asked only where its wording fits
    power = expected_power(fr_plan, 0.10)
    assert 0.15 < power < 0.6  # a size where the power is neither trivial nor certain
    found, others = rates(fr_plan, STUDIES, 0, 0.10, seed=1)
    # the normal approximation is the bound the planning states: at least that, within its binomial 99% band
    assert found >= binom.ppf(0.01, STUDIES, power), (found, power)
    assert found <= binom.ppf(0.99, STUDIES, min(1.0, power + 0.15)), (found, power)
    assert others <= HIGH


def test_a_planted_group_at_twenty_points_is_found_in_most_studies(de_plan) -> None:  # type: ignore[no-untyped-def]
    power = expected_power(de_plan, 0.20)
    assert power >= 0.8
    found, others = rates(de_plan, STUDIES, 3, 0.20, seed=2)
    assert found >= binom.ppf(0.01, STUDIES, power)
    assert others <= HIGH


@pytest.mark.parametrize("plan_name", ["fr_plan", "de_plan"])
def test_no_planted_group_flags_at_most_alpha_of_the_studies(plan_name: str, request: pytest.FixtureRequest) -> None:
    plan = request.getfixturevalue(plan_name)
    _, flagged = rates(plan, STUDIES, None, 0.0, seed=3)
    assert flagged <= HIGH, f"{plan.language}: {flagged} of {STUDIES} null studies flag a group (bound {HIGH})"


@pytest.mark.parametrize("plan_name", ["fr_plan", "de_plan"])
def test_a_language_wide_shift_flags_no_group(plan_name: str, request: pytest.FixtureRequest) -> None:
    plan = request.getfixturevalue(plan_name)
    _, flagged = rates(plan, STUDIES, None, 0.15, everyone=True, seed=4)
    assert flagged <= HIGH
