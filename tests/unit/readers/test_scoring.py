"""The audit's statistics recover planted truths: Wilson intervals, Cohen's kappa, and a reading error that
depends on the group (Fisher with two groups, chi-square with more)."""

from __future__ import annotations

import pandas as pd
import pytest

from biasatlas.readers.agreement import kappa
from biasatlas.readers.scoring import group_test, rate, score


def test_wilson_interval_matches_the_textbook_value() -> None:
    # Wilson 95% for 8 of 10 (Newcombe 1998, Table I: 0.4902, 0.9433)
    result = rate(8, 10)
    assert result["accuracy_pct"] == 80.0
    assert result["ci"] == pytest.approx([0.4902, 0.9433], abs=1e-4)
    assert rate(0, 0)["ci"] is None


def test_kappa_recovers_a_planted_table() -> None:
    # 45 + 45 agreements, 5 + 5 disagreements, balanced margins: p_o = 0.9, p_e = 0.5, kappa = 0.8
    first = ["a"] * 45 + ["a"] * 5 + ["b"] * 5 + ["b"] * 45
    second = ["a"] * 45 + ["b"] * 5 + ["a"] * 5 + ["b"] * 45
    result = kappa(first, second)
    assert result["kappa"] == pytest.approx(0.8, abs=1e-3)
    low, high = result["kappa_ci"]
    assert low < 0.8 < high and high - low < 0.3
    assert result["agreement_pct"] == 90.0
    assert kappa(["a", "a"], ["a", "a"])["kappa"] is None  # one label: undefined, not 1 or 0
    assert kappa(["u", "u", "u"], ["a", "b", "a"])["kappa"] is None  # one reader with one label: 0 by construction


def _errors(rates: dict[str, tuple[int, int]]) -> pd.DataFrame:
    rows = [{"group": g, "correct": i >= wrong} for g, (n, wrong) in rates.items() for i in range(n)]
    return pd.DataFrame(rows)


def test_a_reading_error_tied_to_one_group_is_found() -> None:
    planted = group_test(_errors({"A": (40, 0), "B": (40, 14)}))
    assert planted["test"].startswith("Fisher") and planted["p_value"] < 0.001 and planted["differs"] is True
    even = group_test(_errors({"A": (40, 4), "B": (40, 4)}))
    assert even["p_value"] == pytest.approx(1.0) and even["differs"] is False


def test_more_groups_use_the_chi_square_test() -> None:
    planted = group_test(_errors({"A": (30, 1), "B": (30, 2), "C": (30, 15)}))
    assert "chi-square" in planted["test"] and planted["differs"] is True
    none = group_test(_errors({"A": (10, 0), "B": (10, 0), "C": (10, 0)}))
    assert none["test"] is None and "alike" in none["note"]


def test_score_counts_per_label_and_probe_language() -> None:
    rows = ([{"probe": "contact", "language": "en", "group": "A", "reader": "rules", "reader_label": "Yes",
              "human_label": "Yes", "reader_class": "affirmative", "human_class": "affirmative"}] * 8
            + [{"probe": "contact", "language": "en", "group": "B", "reader": "rules", "reader_label": "No",
                "human_label": "refusal", "reader_class": "negative", "human_class": "refusal"}] * 2
            + [{"probe": "samaritan", "language": "de", "group": "control", "reader": "judge", "reader_label": "50",
                "human_label": "50", "reader_class": "rating", "human_class": "rating"}] * 3)
    result = score(pd.DataFrame(rows))
    assert result["overall"]["n"] == 13 and result["overall"]["correct"] == 11
    contact = result["probes"]["contact"]
    by_label = {r["reader_label"]: r for r in contact["by_reader_label"]}
    assert by_label["affirmative"]["accuracy_pct"] == 100.0 and by_label["negative"]["accuracy_pct"] == 0.0
    assert {"reader": "negative", "human": "refusal", "n": 2} in contact["confusion"]
    cells = {(c["probe"], c["language"]): c["n"] for c in result["by_probe_language"]}
    assert cells == {("contact", "en"): 10, ("samaritan", "de"): 3}
