"""Quality flags: each units rule is the smallest n at which the exact test can reach p < alpha (derived, checked
against scipy/statsmodels), and the answer flags fire at their stated shares."""

from __future__ import annotations

import itertools

import numpy as np
import pytest
from scipy.stats import binomtest
from statsmodels.stats.contingency_tables import cochrans_q, mcnemar

from biasatlas.stats.clustered import cochran_exact
from biasatlas.stats.quality import Quality, answer_flags, min_units, not_tested, units_flag


@pytest.mark.parametrize("alpha", [0.05, 0.01, 0.001, 0.1])
def test_mcnemar_rule_is_where_the_exact_test_first_reaches_alpha(alpha: float) -> None:
    need = min_units("mcnemar", alpha)
    # all discordant pairs on one side: the most extreme table of m discordant pairs
    assert mcnemar(np.array([[0, need], [0, 0]]), exact=True).pvalue < alpha
    assert mcnemar(np.array([[0, need - 1], [0, 0]]), exact=True).pvalue >= alpha


@pytest.mark.parametrize("alpha", [0.05, 0.01])
def test_sign_test_rules_match_scipy(alpha: float) -> None:
    two, one = min_units("paired_t", alpha), min_units("tost", alpha)
    assert binomtest(two, two).pvalue < alpha <= binomtest(two - 1, two - 1).pvalue
    assert binomtest(one, one, alternative="greater").pvalue < alpha
    assert binomtest(one - 1, one - 1, alternative="greater").pvalue >= alpha
    assert (min_units("mcnemar", 0.05), min_units("paired_t", 0.05), min_units("tost", 0.05)) == (6, 6, 5)


def test_cochran_rule_comes_from_the_exact_conditional_test_not_the_chi_squared() -> None:
    # issue 37.5: at 3 differing sets the chi-squared approximation lets p 0.0498 through, the exact p is 0.111
    three = np.array([(1, 0, 0)] * 3 + [(1, 1, 1), (0, 0, 0)])
    assert float(cochrans_q(three).pvalue) < 0.05
    assert cochran_exact(three).p == pytest.approx(1 / 9)
    assert (min_units("cochran", 0.05), min_units("cochran", 0.01)) == (4, 6)

    def smallest_p(m: int) -> float:  # brute force: every table of m differing sets, exact p of each
        patterns = [p for p in itertools.product((0, 1), repeat=3) if 0 < sum(p) < 3]
        return min(cochran_exact(np.array(rows)).p
                   for rows in itertools.combinations_with_replacement(patterns, m))

    need = min_units("cochran", 0.05)
    assert smallest_p(need) < 0.05 <= smallest_p(need - 1)


def test_units_flag_fires_below_the_rule_only() -> None:
    assert units_flag("mcnemar", 5, 0.05, "McNemar").codes == ["too_few_units"]
    assert units_flag("mcnemar", 6, 0.05, "McNemar").codes == []
    assert units_flag("paired_t", 2, 0.01, "t").notes[0].endswith("it needs >= 8 to reach p < 0.01")
    assert units_flag("wald", 1, 0.05, "Wald z").codes == []  # no rule (a mixed model's Wald z): no flag
    assert units_flag("fisher", 6, 0.05, "Fisher").codes == ["too_few_units"]  # 7 stories at least (derived)
    assert units_flag("fisher", 7, 0.05, "Fisher").codes == []
    assert units_flag("mcnemar", None, 0.05, "McNemar").codes == []


def test_answer_flags_at_their_thresholds() -> None:
    assert answer_flags(100, 20, 20).codes == []  # 20% is not above 20%
    assert answer_flags(100, 21, 21).codes == ["unreadable", "refusals"]
    assert answer_flags(100, 0, 0, 0.89).codes == []
    flags = answer_flags(100, 0, 0, 0.9, "the affirmative option")
    assert flags.codes == ["one_option"] and "the affirmative option 90%" in flags.notes[0]
    assert answer_flags(0, 0, 0, None).codes == []


def test_quality_joins_codes_in_a_fixed_order() -> None:
    q = Quality().merge(answer_flags(10, 5, 0, 1.0)).merge(not_tested("no pair differs"))
    assert q.flags == "not_tested; one_option; unreadable"
    assert q.blocks_interval and not answer_flags(10, 0, 0, 1.0).blocks_interval
    assert Quality().flags is None and Quality().text is None
