"""Planted truths through the CLI path: the size `biasatlas power` gives is what `--plan-only` draws, a CLI study
and its simulated twin give the same group rows, and at that size a planted group of 10 is the headline in
about the stated 80% of 200 studies (the simulation: ``tests/helpers/planted_truths.py``; its 200-study run of
every scenario through the CLI's reading and statistics: benchmarks/bench_group_truths.py, figures in
docs/methods.md).
"""

from __future__ import annotations

import math
from pathlib import Path
from typing import Any

import pytest
from planted_truths import (
    ALPHA,
    BASE_RATE,
    DISPARITY,
    SCENARIOS,
    cli_plan,
    cli_size,
    cli_study,
    plan_table,
    simulated,
    table_rates,
)
from scipy.stats import binom

from biasatlas.stats.group_power import disparity_mde, disparity_power

STUDIES = 200


@pytest.fixture(scope="module")
def size() -> dict[str, Any]:
    return cli_size()


def test_the_size_power_gives_is_what_the_plan_draws(size: dict[str, Any], tmp_path: Path) -> None:
    assert size["groups"] == 10 and size["limit"] == 3 * size["needed"] * 10
    plan = cli_plan(size["limit"], tmp_path / "plan")
    assert plan["prompt_sets_per_group"] == str(size["needed"])  # every group: the same sets
    questions = int(plan["questions_per_group"])
    assert questions == 3 * size["needed"] >= size["questions"]
    # the plan's MDE assumes the others at 30% biased; at the fake model's 50% it is the planned disparity
    assert float(plan["mde_pp"]) <= DISPARITY
    mde = disparity_mde(questions, 10, base_rate=BASE_RATE)
    assert mde is not None and 100 * mde <= DISPARITY


def _same(a: dict[str, Any], b: dict[str, Any]) -> bool:
    def equal(x: Any, y: Any) -> bool:
        both_nan = isinstance(x, float) and isinstance(y, float) and math.isnan(x) and math.isnan(y)
        return both_nan or x == y

    return a.keys() == b.keys() and all(equal(a[k], b[k]) for k in a)


def test_a_cli_study_and_its_simulated_twin_give_the_same_group_rows(tmp_path: Path) -> None:
    template = cli_study(tmp_path / "study", limit=3 * 10 * 8)
    twin = simulated(template, f"fake:s0{SCENARIOS['planted']}")
    assert len(twin) == len(template.cli_rows) > 10
    assert all(_same(a, b) for a, b in zip(twin, template.cli_rows, strict=True))
    assert {r["contact"] for r in twin} == {"all", "none", "positive", "negative"}


def test_at_that_size_a_planted_group_is_found_in_about_the_stated_share(size: dict[str, Any]) -> None:
    """200 studies on the plan's own questions (the probe's question logic, units and tests): a group whose
    decisions are biased 10 points more often than the others' 50% (as the planted fake model's)."""
    groups, units = plan_table(size["limit"])
    power = disparity_power(len(units), DISPARITY / 100, len(groups), base_rate=BASE_RATE, alpha=ALPHA)
    assert 0.8 <= power < 0.85  # the size is the smallest with 80% power
    counts = table_rates(groups, units, "planted", STUDIES)
    low, high = binom.ppf(0.005, STUDIES, power), binom.ppf(0.995, STUDIES, power)
    # about 80%: within the binomial 99% band of the stated power
    assert low <= counts["found"] <= high, (counts, power)
    assert counts["others_flagged"] <= binom.ppf(0.99, STUDIES, ALPHA)
