"""Stories, leakage and debias statistics rows are tidy: factors in columns, flags on every row (issue 26.4/26.1)."""

from __future__ import annotations

import math
from typing import Any

import pytest
from scipy.stats import fisher_exact

from biasatlas.export.statistics import statistics_rows
from biasatlas.probes.leakage.model import METHOD
from biasatlas.stats.quality import min_units
from biasatlas.tidy.columns import STATISTICS

STORIES: dict[str, Any] = {
    "tables": {"stories": 300},
    "associations": [{"base_attribute": "gender", "base_value": "female", "compared_attribute": "occupation",
                      "compared_value": "nurse", "count": 14, "row_total": 40, "lift": 2.6, "p": 1e-4,
                      "q": 0.003, "cramers_v": 0.31, "effect": "medium", "models": ["m1", "m2"],
                      "languages": ["en"], "slices": 2}],
}
STORIES_SMALL: dict[str, Any] = {**STORIES, "tables": {"stories": 5}}
LEAKAGE: dict[str, Any] = {
    "settings": {"alpha": 0.05, "correction": "bh"},
    "fits": [{"variant": "m1 (choice)", "target": "de", "method": METHOD, "formula": "model ~ human_en",
              "n_traits": 12, "n_groups": 9, "zero_fill": False, "converged": False, "n_obs": 108,
              "coefficients": [{"term": "human_en", "source": "en", "estimate": 0.4, "ci_low": 0.1,
                                "ci_high": 0.7, "z": 2.6, "p": 0.009, "p_adj": 0.02, "significant": True},
                               {"term": "Intercept", "source": None, "estimate": 0.1, "ci_low": -0.1,
                                "ci_high": 0.3, "z": 1.0, "p": 0.3, "p_adj": None, "significant": None}]}],
    "dropped_fits": [{"variant": "m2 (choice)", "target": "fr", "stage": "not fitted", "reason": "too little data",
                      "n_obs": 3}],
}
DEBIAS: dict[str, Any] = {
    "analysis": {"alpha": 0.05, "correction": "bh"},
    "contact": [{"before_model": "base", "after_model": "tuned", "setting": "s1", "part": "test", "mode": "generate",
                 "tables": {"by_scale": [{"scale": "certainty", "contact": "positive", "before_pct": 40.0,
                                          "after_pct": 20.0, "n_pairs": 30, "test": "McNemar exact (discordant: "
                                          "2 → unbiased, 0 → biased)", "statistic": 0.0, "p": 0.5, "p_adj": 0.5,
                                          "correction": "bh", "effect": -0.2, "effect_ci_low": -0.5,
                                          "effect_ci_high": 0.1}],
                            "by_axis": [{"axis": "religion", "contact": "none", "n_pairs": 0, "test": "McNemar exact",
                                         "statistic": None, "p": None, "p_adj": None, "correction": "bh",
                                         "effect": None, "effect_ci_low": None, "effect_ci_high": None}]},
                 "probability_shift": {"method": "paired t-test", "n": 30, "statistic": 2.1, "p": 0.04,
                                       "effect": 0.05, "effect_name": "Cohen's d_z", "ci_low": 0.01,
                                       "ci_high": 0.09, "mean_before": 0.6, "mean_after": 0.65}}],
    "quality": [{"before_model": "base", "after_model": "tuned", "setting": "s1", "task": "bbq",
                 "tests": [{"condition": "ambiguous", "quantity": "error rate",
                            "method": "McNemar exact (discordant: 9 → unbiased, 11 → biased; Newcombe interval)",
                            "n": 50,
                            "statistic": 3.0, "p": 0.2, "effect": 0.04, "ci_low": -0.02, "ci_high": 0.1}]}],
}


def _rows(probe: str, summary: dict[str, Any], source: str | None = None) -> list[dict[str, Any]]:
    rows = statistics_rows(probe, summary, alpha=0.05)
    return rows if source is None else [r for r in rows if r["source"] == source]


@pytest.mark.parametrize(("probe", "summary"), [("stories", STORIES), ("leakage", LEAKAGE), ("debias", DEBIAS)])
def test_rows_have_every_column_and_no_data_in_test_or_subset(probe: str, summary: dict[str, Any]) -> None:
    rows = _rows(probe, summary)
    assert rows
    for row in rows:
        assert list(row) == list(STATISTICS)
        assert "=" not in str(row.get("test") or ""), row["test"]
        assert not any(ch in str(row.get("test") or "") for ch in "=:0123456789"), row["test"]
        assert not row.get("subset")
        assert "flags" in row and "flag_notes" in row


def test_stories_factors_in_columns_and_fisher_rule() -> None:
    (row,) = _rows("stories", STORIES, "associations")  # beside it, its group's row (group disparity)
    assert (row["attribute"], row["value"]) == ("gender", "female")
    assert (row["compared_attribute"], row["compared_value"]) == ("occupation", "nurse")
    assert row["slices"] == 2 and row["estimate"] == 2.6 and row["estimand"].startswith("lift")
    assert row["ci_low"] is None and row["ci_high"] is None  # no interval of the lift is computed
    assert row["flags"] is None and row["min_units"] == min_units("fisher", 0.05)
    (small,) = _rows("stories", STORIES_SMALL, "associations")
    assert small["flags"] == "too_few_units"


@pytest.mark.parametrize("alpha", [0.05, 0.01, 0.001])
def test_fisher_rule_is_the_smallest_table_that_can_reach_alpha(alpha: float) -> None:
    need = min_units("fisher", alpha)
    assert need is not None

    def best(n: int) -> float:  # the most extreme 2 x 2 table of n stories: balanced, perfectly associated
        a = n // 2
        return float(fisher_exact([[a, 0], [0, n - a]], alternative="greater")[1])

    assert best(need) < alpha <= best(need - 1)


def test_leakage_method_details_in_columns_and_flags() -> None:
    rows = _rows("leakage", LEAKAGE)
    coef = next(r for r in rows if r["term"] == "human_en")
    assert coef["formula"] == "model ~ human_en" and coef["test"] == METHOD
    assert (coef["n_traits"], coef["n_groups"], coef["zero_fill"], coef["converged"]) == (12, 9, False, False)
    assert coef["estimate"] == 0.4 and (coef["ci_low"], coef["ci_high"]) == (0.1, 0.7)
    assert coef["flags"] == "not_converged"
    dropped = next(r for r in rows if r["source"] == "dropped_fits")
    assert dropped["flags"] == "not_fitted" and "too little data" in dropped["flag_notes"]


def test_debias_factors_in_columns_units_flag_and_not_tested() -> None:
    rows = _rows("debias", DEBIAS)
    scale = next(r for r in rows if r["scale"] == "certainty")
    assert (scale["setting"], scale["part"], scale["mode"], scale["contact"]) == ("s1", "test", "generate", "positive")
    assert scale["test"] == "McNemar exact" and scale["estimate"] == -0.2
    assert (scale["ci_low"], scale["ci_high"]) == (-0.5, 0.1)
    # the rule counts the discordant pairs (2 + 0 of 30 pairs), read out of the method string into columns
    assert (scale["discordant_b"], scale["discordant_c"]) == (2, 0)
    assert "too_few_units" in scale["flags"] and scale["min_units"] == min_units("mcnemar", 0.05)
    assert "2 discordant" in scale["flag_notes"] and scale["ci_method"].startswith("Wald")
    axis = next(r for r in rows if r["axis"] == "religion")
    assert "not_tested" in axis["flags"]
    shift = next(r for r in rows if r["source"] == "contact.probability_shift")
    # the estimate is the mean difference, and the interval is that difference's
    assert math.isclose(shift["estimate"], 0.05) and shift["estimand"].startswith("mean difference in P(")
    assert (shift["effect_size"], shift["effect_size_name"]) == (0.05, "Cohen's d_z")
    assert (shift["ci_low"], shift["ci_high"]) == (0.01, 0.09)
    bbq = next(r for r in rows if r["source"] == "quality.bbq.tests")
    assert bbq["condition"] == "ambiguous" and bbq["task"] == "bbq" and bbq["flags"] is None
    assert (bbq["discordant_b"], bbq["discordant_c"]) == (9, 11) and bbq["ci_method"].startswith("Newcombe")
    assert bbq["estimate"] == 0.04 and bbq["estimand"].startswith("difference in the error rate")
