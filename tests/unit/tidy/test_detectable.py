"""A headline that is not significant is shown with the smallest effect its test could have detected."""

from __future__ import annotations

import pandas as pd
import pytest

from biasatlas.report.overview import _headline_lines
from biasatlas.stats.power import detectable_effect
from biasatlas.tidy.rows import detectable


def test_mcnemar_rows_use_the_observed_discordance() -> None:
    row = {"test": "McNemar exact", "n": 100, "alpha": 0.05, "discordant_b": 10, "discordant_c": 12}
    got = detectable(row)
    assert got["mde"] == pytest.approx(detectable_effect("mcnemar", 100, 0.05, discordant_rate=0.22).value)
    assert "n = 100" in got["mde_note"] and "ψ = 0.22" in got["mde_note"]


def test_decisions_that_never_move_have_no_detectable_effect_and_say_why() -> None:
    got = detectable({"test": "McNemar exact", "n": 210, "alpha": 0.05, "discordant_b": 0, "discordant_c": 0})
    assert got["mde"] is None and "never move" in got["mde_note"]


def test_paired_t_rows_use_the_sd_of_the_differences() -> None:
    row = {"test": "paired t-test", "statistic_name": "t", "n": 103, "alpha": 0.01, "sd_diff": 8.5}
    assert detectable(row)["mde"] == pytest.approx(detectable_effect("paired_t", 103, 0.01, sd=8.5).value)
    assert detectable({**row, "sd_diff": None}) == {}
    assert detectable({"test": "Wilcoxon", "n": 10, "alpha": 0.05}) == {}


def test_the_overview_never_shows_not_significant_alone() -> None:
    base = {"scale": "certainty", "estimate": 2.0, "ci_low": -5.0, "ci_high": 9.0, "significant": False, "p": 0.5,
            "p_adj": 0.7, "flags": None, "flag_notes": None, "probability_effect": None, "measure": "Δ % biased",
            "test": "McNemar exact", "n": 80, "correction": "holm", "family": "contact", "seed": 0, "samples": 1}
    # the cell shows the estimate [CI]; what "not significant" means is in its hover, never alone
    _, hover = _headline_lines(pd.Series({**base, "mde": 14.2, "mde_note": "80% power"}), False)
    assert "not significant; smallest effect detectable at 80% power: ±14.2" in hover
    _, hover = _headline_lines(pd.Series({**base, "mde": None, "mde_note": "no pair is discordant"}), False)
    assert "not significant; no detectable effect to state: no pair is discordant" in hover
    lines, hover = _headline_lines(pd.Series({**base, "significant": True, "p_adj": 0.01, "mde": 3.0}), False)
    assert not any("not significant" in text for text in [*lines, hover])
