"""Fagan et al.'s Tables 1-3, 6-14 and Figures 1-3 in the paper's layout, on a planted study of fake models."""

from __future__ import annotations

from typing import Any

import numpy as np
import pandas as pd
import pytest
from scipy import stats

from biasatlas.probes.samaritan import analysis as sa
from biasatlas.probes.samaritan import paper_figures as pf
from biasatlas.probes.samaritan import paper_tables as pt

GROUPS = {"race": ["White", "African American", "American Indian", "Asian", "Native Hawaiian / Pacific Islander"],
          "gender": ["male", "female", "non-binary"],
          "age": ["teenager", "young adult", "middle-aged", "senior"]}
SCENARIOS = 8
#: planted truth: model "a" rates seniors 6 points kinder; model "b" rates non-binary people 6 points kinder
SHIFT = {("a", "senior"): 6.0, ("b", "non-binary"): 6.0}


def _planted() -> pd.DataFrame:
    """Models a and b (and a second run of a, sample 1), every group and the control, 8 scenarios × 4
    rephrasings, one phrasing a group. Model b's White answers swing 30 points across the rephrasings: its race
    brittleness differs between groups; nothing else does."""
    rng = np.random.default_rng(3)
    rows: list[dict[str, Any]] = []
    for model, sample in (("a", 0), ("a", 1), ("b", 0)):
        for category, groups in {"control": ["control"], **GROUPS}.items():
            for group in groups:
                for s in range(SCENARIOS):
                    for r in range(1, 5):
                        swing = 30.0 * (r % 2) if (model, group) == ("b", "White") else 0.0
                        rating = 60 + 2 * s + r + SHIFT.get((model, group), 0.0) + swing + rng.normal(0, 1)
                        rows.append({"model": model, "language": "en", "temperature": 1.0, "max_tokens": 512,
                                     "category": category, "group": group, "phrasing": group,
                                     "scenario": f"s{s}", "rephrasing": r, "sample_index": sample,
                                     "status": "answered", "parse_reason": None, "rating": float(rating)})
    return pd.DataFrame(rows)


@pytest.fixture(scope="module")
def planted() -> pd.DataFrame:
    return _planted()


@pytest.fixture(scope="module")
def comparison(planted: pd.DataFrame) -> pd.DataFrame:
    return sa.compare_to_control(planted, alpha=0.01, correction="holm")


def test_tables_1_3_bias_rows_models_columns_the_papers_groups(comparison: pd.DataFrame) -> None:
    age = pt.bias_table(comparison, "age")
    assert list(age.columns) == ["Model", "Teenager", "Young Adult", "Middle Aged", "Senior", pt.N_OURS]
    assert list(age["Model"]) == ["a", "b"]
    assert list(pt.bias_table(comparison, "gender").columns)[1:-1] == ["Male", "Female", "Non Binary"]
    assert list(pt.bias_table(comparison, "race").columns)[1:-1] == [
        "White", "African American", "Native American", "Asian", "Native Hawaiian"]
    senior = age.set_index("Model")["Senior"]
    assert senior["a"].endswith("*") and 5 < float(senior["a"].rstrip("*")) < 7  # planted, paper rule
    assert not age.set_index("Model")["Teenager"]["a"].endswith("*")
    assert set(age[pt.N_OURS]) == {str(SCENARIOS)}
    row = comparison[(comparison["model"] == "a") & (comparison["group"] == "senior")].iloc[0]
    assert senior["a"] == f"{row['bias']:.2f}*"


def test_tables_6_8_raw_scores_with_the_shared_control_first(planted: pd.DataFrame) -> None:
    tables = {c: pt.raw_table(planted, c) for c in ("age", "gender", "race")}
    assert list(tables["age"].columns) == ["Model", "Control", "Teenager", "Young Adult", "Middle-Aged", "Senior",
                                           pt.N_OURS]
    assert list(tables["race"].columns)[2:-1] == ["White", "African American", "American Indian", "Asian",
                                                  "Native Hawaiian"]
    # one control shared by the categories: the same column in each table
    assert tables["age"]["Control"].tolist() == tables["gender"]["Control"].tolist() == tables["race"][
        "Control"].tolist()
    a = planted[(planted["model"] == "a") & (planted["group"] == "senior")]
    by_hand = a.groupby(["scenario", "rephrasing"])["rating"].mean().groupby("scenario").mean().mean()
    assert tables["age"].set_index("Model").loc["a", "Senior"] == pytest.approx(by_hand, abs=0.005)  # both runs


def test_tables_9_11_brittleness_in_the_papers_order(planted: pd.DataFrame) -> None:
    gender = pt.brittleness_table(planted, "gender")
    assert list(gender.columns) == ["Model", "Control", "Male", "Female", "Non-Binary", pt.N_OURS]
    race = pt.brittleness_table(planted, "race").set_index("Model")
    assert race.loc["b", "White"] > 10 > race.loc["a", "White"]  # the planted swing
    assert pt.ORDER["brittleness"] == ("gender", "age", "race")
    assert [pt.NUMBERS[c][2] for c in pt.ORDER["brittleness"]] == [9, 10, 11]


def test_tables_12_14_runs_only_for_models_with_two_runs(planted: pd.DataFrame) -> None:
    race = pt.runs_table(planted, "race")
    assert list(race.columns) == ["Model", "Run", "Control", "White", "African American", "American Indian",
                                  "Asian", "Native Hawaiian", pt.N_OURS, "largest run difference (ours)"]
    assert list(zip(race["Model"], race["Run"], strict=True)) == [("a", 1), ("a", 2)]  # b has one run
    first = planted[(planted["model"] == "a") & (planted["sample_index"] == 0) & (planted["group"] == "White")]
    assert race.loc[0, "White"] == pytest.approx(
        first.groupby("scenario")["rating"].mean().mean(), abs=0.005)
    assert pt.runs_table(planted[planted["sample_index"] == 0], "race").empty


def test_captions_name_the_papers_tables_and_the_shared_control() -> None:
    assert pt.caption("bias", "age").startswith("As in Fagan et al., 2025, Table 1: Age Category")
    assert "Table 7" in pt.caption("raw", "gender") and "shared" in pt.caption("raw", "gender")
    assert "Table 12" in pt.caption("runs", "race")


def test_figures_share_of_models_under_the_papers_rule_and_holm(comparison: pd.DataFrame) -> None:
    rows = pf.figure_rows(comparison).set_index(["category", "group"])
    assert rows.loc[("age", "senior"), "share_paper"] == 0.5  # a of a, b
    assert rows.loc[("gender", "non-binary"), "share_holm"] == 0.5
    assert rows.loc[("age", "teenager"), "share_paper"] == 0.0
    assert set(rows["n_models"]) == {2}
    senior = comparison[comparison["group"] == "senior"]["rating"]
    assert rows.loc[("age", "senior"), "helpfulness"] == pytest.approx(senior.mean())
    half = stats.t.ppf(0.975, 1) * senior.std(ddof=1) / np.sqrt(2)
    assert rows.loc[("age", "senior"), "helpfulness_high"] == pytest.approx(senior.mean() + half)
    assert 0 < rows.loc[("age", "senior"), "share_low"] < 0.5 < rows.loc[("age", "senior"), "share_high"] < 1


def test_brittleness_between_groups_friedman_finds_only_the_planted_swing(planted: pd.DataFrame) -> None:
    table = pf.brittleness_between_groups(planted).set_index(["model", "category"])
    assert table.loc[("b", "race"), "p"] < 0.01
    assert table.loc[("b", "race"), "groups"] == 6 and table.loc[("b", "race"), "n scenarios"] == SCENARIOS
    assert (table.drop(index=("b", "race"))["p adj (Holm)"] > 0.01).all()
    per = pf.scenario_brittleness(planted)
    one = per[(per["model"] == "b") & (per["category"].isin(["control", "race"]))]
    wide = one.pivot_table(index="scenario", columns="group", values="brittleness")
    assert table.loc[("b", "race"), "p"] == pytest.approx(stats.friedmanchisquare(*wide.to_numpy().T).pvalue)
    row = table.loc[("b", "race")]
    assert row["W low"] <= row["Kendall's W"] <= row["W high"] <= 1


def test_kendall_w_is_friedman_over_n_k_minus_one_without_ties() -> None:
    matrix = np.random.default_rng(1).normal(size=(7, 4))
    chi2 = stats.friedmanchisquare(*matrix.T).statistic
    assert pf.kendall_w(matrix) == pytest.approx(chi2 / (7 * 3))
    assert pf.kendall_w(np.tile(np.arange(4.0), (5, 1))) == pytest.approx(1.0)
