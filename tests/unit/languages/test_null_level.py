"""The level of the across-language and Samaritan tests on the real plans (issue 37), a short run in the suite.

Null studies (null_plans.py) of three language packs' default plans: every distinct stored answer drawn afresh,
independent of group and framing, with shared no-contact questions, three correlated samples a question and
two modes. The full run (twelve languages, 200 studies, samples 1 and 3, one and two modes) is
null_level_simulation.py; its figures are in docs/languages.md. A planted effect on the same plans is found.
"""

from __future__ import annotations

import sys
from collections.abc import Iterator
from pathlib import Path

import numpy as np
import pytest

sys.path.insert(0, str(Path(__file__).parent))
from null_plans import binomial_interval, contact_plan, contact_study, free_plans, samaritan_plan, samaritan_study

ALPHA = 0.05


@pytest.fixture(autouse=True, scope="module")
def _free_the_plans() -> Iterator[None]:
    yield
    free_plans()
CONTACT_LANGUAGES = ("es", "fr", "zh")
SAMARITAN_LANGUAGES = ("en", "fr", "zh")


def _within(rejected: int, tests: int, studies: int) -> tuple[float, float, float]:
    """The rate and the binomial 95% range it must lie in: over ``studies`` studies' worth of independent tests,
    at least (the tests of one study share the other groups, or the control: not all independent)."""
    low, high = binomial_interval(ALPHA, max(studies, tests // 2))
    return rejected / tests, low, high


@pytest.mark.slow
def test_contact_across_languages_holds_its_level_on_the_real_plans() -> None:
    from biasatlas.probes.contact.across_languages import language_differences

    plan = contact_plan(CONTACT_LANGUAGES, samples=3, modes=2)
    frame = plan.frame
    shared = frame[(frame["contact"] == "none") & (frame["sample_index"] == 0)]
    assert shared["key"].nunique() < len(shared)  # the plan's shared no-contact questions are in the study
    p = []
    for seed in range(30):
        tests = language_differences(contact_study(plan, seed))
        assert set(tests["mode"]) == {"choice", "generate"}
        p.extend(tests["p"])
    # the units: per mode, every distinct text of the group (its samples one unit) at most once
    questions = frame[frame["sample_index"] == 0].groupby(["mode", "descriptor"])["messages_json"].nunique()
    counted = tests.set_index(["mode", "group"])["n"]
    assert (counted <= questions.reindex(counted.index)).all()
    assert (counted >= 0.7 * questions.reindex(counted.index)).all()  # ties and unreadable answers left out
    rate, low, high = _within(int((np.array(p) < ALPHA).sum()), len(p), 30)
    assert low <= rate <= high, (rate, low, high)


@pytest.mark.slow
def test_samaritan_tests_hold_their_level_on_the_real_plans() -> None:
    from biasatlas.probes.samaritan.across_languages import language_differences, language_effects
    from biasatlas.probes.samaritan.analysis import compare_to_control

    plan = samaritan_plan(SAMARITAN_LANGUAGES, samples=3)
    paired, q = [], []
    for seed in range(12):
        frame = samaritan_study(plan, seed)
        table = compare_to_control(frame, alpha=ALPHA, correction="none")
        assert (table["n"] <= 103).all()  # the unit is the scenario: samples and rephrasings never add to it
        paired.extend(table["p"])
        q.extend(language_differences(language_effects(frame), alpha=ALPHA)["p"])
    rate, low, high = _within(int((np.array(paired) < ALPHA).sum()), len(paired), 12)
    assert low <= rate <= high, ("group vs control", rate, low, high)
    rate, low, high = _within(int((np.array(q) < ALPHA).sum()), len(q), 12)
    assert low <= rate <= high, ("across languages", rate, low, high)


def test_a_planted_contact_effect_in_one_language_is_found_on_the_real_plan() -> None:
    from biasatlas.probes.contact.across_languages import language_differences

    plan = contact_plan(CONTACT_LANGUAGES, samples=1, modes=1)
    group = str(plan.frame["descriptor"].iloc[0])
    frame = contact_study(plan, 1, plan.planted("descriptor", group, "zh"), shift=0.45)
    tests = language_differences(frame).set_index("group")
    assert tests.loc[group, "differs"], tests.loc[group]
    assert tests.drop(index=group)["differs"].sum() <= 1


def test_a_planted_samaritan_gap_in_one_language_is_found_on_the_real_plan() -> None:
    from biasatlas.probes.samaritan.across_languages import language_differences, language_effects

    plan = samaritan_plan(("fr", "zh"), samples=1)
    frame = samaritan_study(plan, 2, plan.planted("group", "female", "zh"), shift=-8.0)
    tests = language_differences(language_effects(frame), alpha=0.01).set_index("group")
    assert tests.loc["female", "differs"], tests.loc["female"]
    assert not tests.drop(index="female")["differs"].any()
