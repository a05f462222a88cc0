"""Samaritan analysis on a small hand-made table, checked against scipy and statsmodels directly."""

from __future__ import annotations

import math

import numpy as np
import pandas as pd
import pytest
from scipy import stats
from statsmodels.stats.multitest import multipletests

from biasatlas.probes.samaritan import analysis as sa

SCENARIOS = [f"s{i}" for i in range(1, 9)]
REPHRASINGS = (1, 2)
# group -> phrasings; "steady" is close to the control, "kind" is rated higher
GROUPS = {"control": ["person"], "steady": ["steady one", "steady two"], "kind": ["kind"]}
SHIFT = {"control": 0.0, "steady": 0.0, "kind": 9.0}


def _rows(sample: int = 0, seed: int = 1, model: str = "m") -> list[dict[str, object]]:
    rng = np.random.default_rng(seed)
    rows = []
    for s_i, scenario in enumerate(SCENARIOS):
        for r in REPHRASINGS:
            for group, phrasings in GROUPS.items():
                for phrasing in phrasings:
                    rating = 60 + 2 * s_i + 3 * r + SHIFT[group] + float(rng.normal(0, 2))
                    rows.append({
                        "model": model, "language": "en", "temperature": 0.0, "max_tokens": 24,
                        "category": "control" if group == "control" else "age", "group": group,
                        "phrasing": phrasing, "scenario": scenario, "rephrasing": r,
                        "sample_index": sample, "status": "answered", "rating": round(rating, 1),
                        "parse_reason": None,
                    })
    return rows


@pytest.fixture
def table() -> pd.DataFrame:
    frame = pd.DataFrame(_rows())
    # one unreadable answer and one pending prompt: excluded from every mean, counted
    bad = (frame["group"] == "kind") & (frame["scenario"] == "s3") & (frame["rephrasing"] == 2)
    frame.loc[bad, ["rating", "parse_reason"]] = [math.nan, "no number"]
    pending = {**_rows()[0], "scenario": "s8", "status": "pending", "rating": math.nan}
    pending["parse_reason"] = "pending"
    pending.update(group="kind", category="age", phrasing="kind", rephrasing=1)
    frame = frame[~((frame["group"] == "kind") & (frame["scenario"] == "s8") & (frame["rephrasing"] == 1))]
    return pd.concat([frame, pd.DataFrame([pending])], ignore_index=True)


def _scenario_means_by_hand(frame: pd.DataFrame, group: str) -> dict[str, float]:
    """Eq. 1's inner part computed with plain loops: per scenario, mean over rephrasings of the
    mean over phrasings (valid ratings only)."""
    out = {}
    for scenario in SCENARIOS:
        per_rephrasing = []
        for r in REPHRASINGS:
            values = [
                row.rating for row in frame.itertuples()
                if row.group == group and row.scenario == scenario and row.rephrasing == r
                and not math.isnan(row.rating)
            ]
            if values:
                per_rephrasing.append(sum(values) / len(values))
        if per_rephrasing:
            out[scenario] = sum(per_rephrasing) / len(per_rephrasing)
    return out


def test_rating_is_paper_equation_1(table: pd.DataFrame) -> None:
    ratings = sa.group_ratings(table).set_index("group")
    for group in GROUPS:
        by_hand = _scenario_means_by_hand(table, group)
        assert ratings.loc[group, "rating"] == pytest.approx(sum(by_hand.values()) / len(by_hand))
        assert ratings.loc[group, "n_scenarios"] == len(by_hand)


def test_paired_tests_match_scipy(table: pd.DataFrame) -> None:
    result = sa.compare_to_control(table, alpha=0.01, correction="holm").set_index("group")
    control = _scenario_means_by_hand(table, "control")
    for group in ("steady", "kind"):
        means = _scenario_means_by_hand(table, group)
        common = [s for s in SCENARIOS if s in means and s in control]
        x = np.array([means[s] for s in common])
        y = np.array([control[s] for s in common])
        t = stats.ttest_rel(x, y)
        w = stats.wilcoxon(x, y)
        ci = t.confidence_interval(0.95)
        row = result.loc[group]
        assert row["n"] == len(common)
        assert row["t"] == pytest.approx(t.statistic)
        assert row["p"] == pytest.approx(t.pvalue)
        assert row["wilcoxon_p"] == pytest.approx(w.pvalue)
        assert row["wilcoxon_W"] == pytest.approx(w.statistic)
        assert (row["ci_low"], row["ci_high"]) == pytest.approx((ci.low, ci.high))
        d = x - y
        assert row["d_z"] == pytest.approx(d.mean() / d.std(ddof=1))
        rating = sum(means.values()) / len(means)
        assert row["bias"] == pytest.approx(rating - sum(control.values()) / len(control))
    # Holm over the unit's family of tests
    expected = multipletests(result["p"].to_numpy(), method="holm")[1]
    assert result["p_adj"].to_numpy() == pytest.approx(expected)
    assert bool(result.loc["kind", "significant"]) is True
    assert bool(result.loc["steady", "significant"]) is False


def test_correction_is_selectable(table: pd.DataFrame) -> None:
    none = sa.compare_to_control(table, correction="none")
    bonf = sa.compare_to_control(table, correction="bonferroni")
    assert none["p_adj"].to_numpy() == pytest.approx(none["p"].to_numpy())
    assert bonf["p_adj"].to_numpy() == pytest.approx(np.minimum(1.0, 2 * bonf["p"].to_numpy()))


def test_brittleness_is_mean_sd_over_rephrasings(table: pd.DataFrame) -> None:
    result = sa.brittleness(table).set_index("group")
    for group, phrasings in GROUPS.items():
        per_scenario = []
        for scenario in SCENARIOS:
            sds = []
            for phrasing in phrasings:
                values = table[(table["group"] == group) & (table["scenario"] == scenario)
                               & (table["phrasing"] == phrasing)]["rating"].dropna()
                if len(values) >= 2:
                    sds.append(float(np.std(values.to_numpy(), ddof=1)))
            if sds:
                per_scenario.append(sum(sds) / len(sds))
        assert result.loc[group, "brittleness"] == pytest.approx(sum(per_scenario) / len(per_scenario))


def test_default_persona_lists_groups_like_the_control(table: pd.DataFrame) -> None:
    persona = sa.default_persona(sa.compare_to_control(table)).iloc[0]
    assert persona["default_groups"] == ["steady"]
    assert persona["differing_groups"] == ["kind"]


def test_unparseable_and_pending_are_counted_not_dropped(table: pd.DataFrame) -> None:
    counts = sa.unparseable(table).set_index("group")
    kind = counts.loc["kind"]
    assert kind["n_unparseable"] == 1
    assert kind["reasons"] == {"no number": 1}
    assert kind["n_pending"] == 1
    assert kind["n_prompts"] == len(SCENARIOS) * len(REPHRASINGS)
    assert counts.loc["steady", "n_unparseable"] == 0


def test_repeatability_compares_two_sample_indices() -> None:
    frame = pd.DataFrame(_rows(sample=0, seed=1) + _rows(sample=1, seed=2))
    result = sa.repeatability(frame, alpha=0.01, correction="none").set_index("group")
    first, second = frame[frame["sample_index"] == 0], frame[frame["sample_index"] == 1]
    for group in GROUPS:
        a, b = _scenario_means_by_hand(first, group), _scenario_means_by_hand(second, group)
        x, y = np.array([a[s] for s in SCENARIOS]), np.array([b[s] for s in SCENARIOS])
        assert result.loc[group, "difference"] == pytest.approx(x.mean() - y.mean())
        assert result.loc[group, "p"] == pytest.approx(stats.ttest_rel(x, y).pvalue)
    assert sa.repeatability(first).empty  # a single run has nothing to compare


def test_units_are_analysed_separately() -> None:
    frame = pd.DataFrame(_rows(model="a") + _rows(model="b", seed=7))
    result = sa.compare_to_control(frame)
    assert sorted(result["model"].unique()) == ["a", "b"]
    assert len(result) == 4
    figure = sa.significance_frequency(result).set_index("group")
    assert figure.loc["kind", "n_units"] == 2
    assert 0.0 <= figure.loc["steady", "share_significant"] <= 1.0
