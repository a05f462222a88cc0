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


def _stratified(strata: dict[str, tuple[int, int, int]]) -> pd.DataFrame:
    """Labelled rows of contact/en: per reader label (study answers N, sampled n, read right)."""
    rows = []
    for label, (size, n, right) in strata.items():
        for i in range(n):
            human = label if i < right else ("refusal" if label != "refusal" else "affirmative")
            rows.append({"probe": "contact", "language": "en", "group": "A", "reader": "rules",
                         "reader_label": label, "human_label": human, "reader_class": label,
                         "human_class": human, "answer_key": f"{label}{i}", "stratum_size": size})
    return pd.DataFrame(rows)


def test_the_study_level_accuracy_weights_each_stratum_by_its_size() -> None:
    # the sample gives each reader label an equal share; the study holds far more read answers than unread ones
    strata = {"affirmative": (600, 40, 39), "negative": (380, 40, 38), "unreadable": (20, 20, 13)}
    result = score(_stratified(strata))
    overall = result["overall"]
    assert overall["accuracy_pct"] == pytest.approx(90.0)  # the sample's share: 90 of 100
    study = overall["study_level"]
    expected = 0.6 * 39 / 40 + 0.38 * 38 / 40 + 0.02 * 13 / 20  # 95.9%: what a reader of the whole study sees
    assert study["accuracy_pct"] == pytest.approx(100 * expected, abs=0.05)
    low, high = study["ci"]
    assert low < expected < high < 1
    # stratified variance with the finite-population correction, as the effective n of the interval
    variance = sum((size / 1000) ** 2 * (r / n) * (1 - r / n) / n * (1 - n / size) for size, n, r in strata.values())
    assert study["n_effective"] == pytest.approx(expected * (1 - expected) / variance, rel=1e-6)
    assert study["answers"] == 1000
    assert result["probes"]["contact"]["study_level"]["accuracy_pct"] == study["accuracy_pct"]
    assert result["by_probe_language"][0]["study_level"]["accuracy_pct"] == study["accuracy_pct"]


def test_without_strata_sizes_there_is_no_study_level_figure() -> None:
    frame = _stratified({"affirmative": (10, 5, 5)}).drop(columns="stratum_size")
    assert score(frame)["overall"]["study_level"] is None


def test_the_printed_score_says_which_figure_is_which() -> None:
    import io

    from rich.console import Console

    from biasatlas.cli.readers import _print

    result = score(_stratified({"affirmative": (600, 40, 39), "negative": (380, 40, 38), "unreadable": (20, 20, 13)}))
    result["run_id"] = 1
    console = Console(file=io.StringIO(), width=200)
    _print(result, console)
    text = console.file.getvalue()  # type: ignore[attr-defined]
    assert "sample accuracy" in text.lower() and "90.0%" in text
    assert "study-level" in text.lower() and "95.9%" in text
