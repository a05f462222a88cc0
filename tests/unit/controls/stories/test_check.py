"""The stories control's judge: the probe's association mining recovers a planted association of known size,
does not flag null groups, and the verdict's interval covers the planted share."""

from __future__ import annotations

from stories_profiles import measurement, profiles

from biasatlas.controls.stories.check import MIN_LIFT, StoriesVerdict, agrees_with_card, judge


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


def _verdict(count: int, known: int) -> StoriesVerdict:
    from biasatlas.stats.proportions import wilson_interval

    lo, hi = wilson_interval(count, known)
    return StoriesVerdict(planted="oceania", value="arts", count=count, known=known, fraction=count / known,
                          ci_low=lo, ci_high=hi, lift=5.0, q_by=1e-5, association=True, false_flags=[], untouched=5,
                          bound=2, cells_per_group=6)


def test_a_check_agrees_with_the_card_when_its_interval_holds_the_cards_share() -> None:
    card = {"fraction": 11 / 12, "count": 11, "known": 12}
    assert agrees_with_card(_verdict(7, 8), card)
    assert not agrees_with_card(_verdict(2, 8), card)  # Wilson [0.07, 0.59] misses 0.92


def test_a_card_share_of_one_is_compared_by_fishers_exact_test() -> None:
    card = {"fraction": 1.0, "count": 24, "known": 24}
    assert agrees_with_card(_verdict(8, 8), card)  # the interval reaches 1
    assert agrees_with_card(_verdict(7, 8), card)  # Wilson [0.53, 0.98] misses 1; Fisher p = 0.25
    assert not agrees_with_card(_verdict(4, 8), card)  # Fisher p = 0.002
    assert not agrees_with_card(_verdict(1, 1), {"fraction": 0.0, "count": 0, "known": 30})  # p = 0.03


def test_agreement_with_the_card_holds_at_the_planted_rate_and_fails_far_from_it() -> None:
    """Planted truth: card (24 stories) and check (8) drawn from one true arts share mostly agree; a check
    drawn from a share far below does not. The card's share is itself an estimate, so a 95% interval of the
    check holds it less often than 95% away from the boundary (measured: 0.99 at 0.97, 0.93 at 0.9, 0.86 at
    0.75); the control's share is near 1, where the check agrees in 99% of draws."""
    import numpy as np

    rng = np.random.default_rng(7)

    def agreement(card_rate: float, check_rate: float, draws: int = 400) -> float:
        hits = 0
        for _ in range(draws):
            card_count = int(rng.binomial(24, card_rate))
            card = {"fraction": card_count / 24, "count": card_count, "known": 24}
            hits += agrees_with_card(_verdict(int(rng.binomial(8, check_rate)), 8), card)
        return hits / draws

    for rate, least in ((0.97, 0.95), (0.9, 0.9), (0.75, 0.8)):
        assert agreement(rate, rate) >= least, rate
    assert agreement(0.97, 0.4) <= 0.1
