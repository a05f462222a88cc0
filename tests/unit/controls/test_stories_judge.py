"""The stories control's judge: the probe's association mining recovers a planted association of known size,
does not flag null groups, and the verdict's interval covers the planted share."""

from __future__ import annotations

import numpy as np
import pandas as pd

from biasatlas.controls import stories
from biasatlas.controls.stories_check import MIN_LIFT, judge
from biasatlas.probes.stories.seeds import load_seeds

FIELDS = stories.ROTATION  # what the untouched groups are trained on


def profiles(planted_share: float, per_group: int = 6, seed: int = 0, unknown: float = 0.0,
             planted_group: str = stories.PLANTED) -> pd.DataFrame:
    """Voted profiles as the probe makes them: ``planted_group``'s characters work in the arts with probability
    ``planted_share`` (else a rotated field), the other groups' in a field drawn evenly from ``FIELDS``. As in
    :func:`biasatlas.probes.stories.profiles.load_profiles`, the prompted dimension holds the prompted value."""
    rng = np.random.default_rng(seed)
    dims = list(load_seeds("en").dimensions)
    rows = []
    for group in (stories.PLANTED, *stories.UNTOUCHED):
        for i in range(per_group):
            if group == planted_group:
                value = "arts" if rng.random() < planted_share else stories.ROTATION[i % 5]
            else:
                value = str(rng.choice(FIELDS))
            if rng.random() < unknown:
                value = "unknown"
            row = {d: "unknown" for d in dims}
            row.update(model="m", language="en", story_id=f"{group}-{i}:0", base_attribute="geographic_origin",
                       base_value=group, scenario_key=f"s{i}", template="scenario_based", professional_field=value,
                       geographic_origin=group)
            rows.append(row)
    return pd.DataFrame(rows)


def measurement() -> stories.Measurement:
    return stories.Measurement([], stories.PLANTED, stories.UNTOUCHED, ())


def test_a_planted_association_is_found_with_its_lift_and_an_interval_around_the_share() -> None:
    v = judge(profiles(1.0, per_group=8), measurement())
    assert v.detected and v.passed, v.as_dict()
    # 8 arts stories of 48, all in the planted group: lift 1 / (8 / 48) = 6
    assert v.lift == 6.0 and v.lift >= MIN_LIFT
    assert v.count == v.known == 8 and v.fraction == 1.0
    assert v.ci_low is not None and v.ci_high is not None and v.ci_low < 1.0 <= v.ci_high
    assert v.untouched == 5 and v.bound == 2
    assert v.table["compared_attribute"] == "professional_field" and v.table["significant"]


def test_no_planted_association_is_not_found_and_null_groups_stay_within_the_bound() -> None:
    found, flagged = 0, 0
    for seed in range(6):
        v = judge(profiles(0.0, per_group=8, seed=seed, planted_group="none"), measurement())
        found += v.detected
        flagged += len(v.false_flags) > v.bound
    assert found == 0 and flagged == 0


def test_an_untouched_group_with_an_association_is_flagged() -> None:
    v = judge(profiles(1.0, per_group=8, planted_group="europe"), measurement())
    assert not v.detected
    assert v.false_flags == ["europe"]


def test_rows_below_the_minimum_are_left_out_so_nothing_is_found() -> None:
    v = judge(profiles(1.0, per_group=4), measurement())  # 4 < MIN_ROW_TOTAL stories a group: no table
    assert not v.detected and v.table == {} and v.count == 4


def test_unknown_fields_leave_the_share_and_are_not_counted_as_other_fields() -> None:
    v = judge(profiles(1.0, per_group=8, unknown=0.25, seed=3), measurement())
    assert v.known < 8 and v.fraction == 1.0
