"""Samaritan analysis on a small hand-made table, checked against scipy and statsmodels directly."""

from __future__ import annotations

import math

import numpy as np
import pandas as pd
import pytest
from samaritan_design import design, unreadable  # tests/helpers (pythonpath)
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


def _paired_by_hand(frame: pd.DataFrame, group: str) -> tuple[list[str], np.ndarray, np.ndarray]:
    """Per scenario, over the rephrasings readable for both the group and the control: the mean over
    rephrasings of the mean over phrasings, for each side."""
    common, xs, ys = [], [], []
    for scenario in SCENARIOS:
        sides: dict[str, dict[int, float]] = {group: {}, "control": {}}
        for side, per_rephrasing in sides.items():
            for r in REPHRASINGS:
                values = [row.rating for row in frame.itertuples() if row.group == side
                          and row.scenario == scenario and row.rephrasing == r and not math.isnan(row.rating)]
                if values:
                    per_rephrasing[r] = sum(values) / len(values)
        both = sorted(set(sides[group]) & set(sides["control"]))
        if both:
            common.append(scenario)
            xs.append(sum(sides[group][r] for r in both) / len(both))
            ys.append(sum(sides["control"][r] for r in both) / len(both))
    return common, np.array(xs), np.array(ys)


def test_paired_tests_match_scipy(table: pd.DataFrame) -> None:
    result = sa.compare_to_control(table, alpha=0.01, correction="holm").set_index("group")
    for group in ("steady", "kind"):
        common, x, y = _paired_by_hand(table, group)
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
        assert row["bias"] == pytest.approx(x.mean() - y.mean())
    # "kind" lost s3 r2 (unreadable) and s8 r1 (pending): those cells leave the control's side too
    assert result.loc["kind", "n_cells_unpaired"] == 2 and result.loc["steady", "n_cells_unpaired"] == 0
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
    """'steady' (no true difference) is not significant; with 8 noisy scenarios that does not show it
    is the control's equal within ±2 points (undetermined), within ±5 points it does."""
    persona = sa.default_persona(sa.compare_to_control(table)).iloc[0]
    assert persona["default_groups"] == [] and persona["undetermined_groups"] == ["steady"]
    assert persona["differing_groups"] == ["kind"]
    assert persona["paper_reading"] == ["steady"]  # the paper's rule: not significant = default
    wide = sa.default_persona(sa.compare_to_control(table, equivalence_margin=5.0)).iloc[0]
    assert wide["default_groups"] == ["steady"] and wide["differing_groups"] == ["kind"]


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


# ---- issue 12: missing cells, equivalence, the paper's rule beside a per-category correction ----
def _design(
    groups: dict[str, tuple[str, float]], n_scenarios: int = 40, noise: float = 1.0, seed: int = 0
) -> pd.DataFrame:
    """No-frills design: every group (name -> (category, true bias)) asked in every scenario × rephrasing,
    each group its own one phrasing."""
    return design({g: (g, category, shift) for g, (category, shift) in groups.items()}, n_scenarios, noise, seed)



def _matched_by_hand(frame: pd.DataFrame, group: str) -> tuple[np.ndarray, np.ndarray]:
    """Per scenario: mean over the rephrasings readable for BOTH the group and the control."""
    xs, ys = [], []
    for _, cell in frame.groupby("scenario"):
        g = cell[cell["group"] == group].set_index("rephrasing")["rating"].dropna()
        c = cell[cell["group"] == "control"].set_index("rephrasing")["rating"].dropna()
        common = sorted(set(g.index) & set(c.index))
        if common:
            xs.append(g.loc[common].mean())
            ys.append(c.loc[common].mean())
    return np.array(xs), np.array(ys)


def test_an_unreadable_rephrasing_creates_no_bias() -> None:
    """No true bias; the group's rephrasing 4 is unreadable everywhere. Averaging each side over
    whatever it has read -2 points, p < 1e-12; comparing only the cells both have reads nothing."""
    frame = _design({"control": ("control", 0.0), "female": ("gender", 0.0)})
    frame = unreadable(frame, (frame["group"] == "female") & (frame["rephrasing"] == 4))
    row = sa.compare_to_control(frame).iloc[0]
    assert abs(row["bias"]) < 0.5
    assert row["p"] > 0.01 and not row["significant"] and not row["significant_paper"]
    assert row["n_cells"] == 40 * 3 and row["n_cells_unpaired"] == 40


def test_bias_uses_the_cells_present_for_both() -> None:
    frame = _design({"control": ("control", 0.0), "senior": ("age", 3.0)}, n_scenarios=12, noise=2.0, seed=4)
    rng = np.random.default_rng(9)
    frame = unreadable(frame, pd.Series(rng.random(len(frame)) < 0.25, index=frame.index))
    row = sa.compare_to_control(frame).iloc[0]
    x, y = _matched_by_hand(frame, "senior")
    t = stats.ttest_rel(x, y)
    assert row["n"] == len(x)
    assert row["rating"] == pytest.approx(x.mean()) and row["control_rating"] == pytest.approx(y.mean())
    assert row["bias"] == pytest.approx(x.mean() - y.mean())
    assert row["p"] == pytest.approx(t.pvalue) and row["t"] == pytest.approx(t.statistic)


def test_repeatability_compares_the_cells_both_runs_have() -> None:
    first = _design({"control": ("control", 0.0)}, seed=1)
    second = _design({"control": ("control", 0.0)}, seed=2).assign(sample_index=1)
    second = unreadable(second, second["rephrasing"] == 4)
    row = sa.repeatability(pd.concat([first, second], ignore_index=True)).iloc[0]
    assert abs(row["difference"]) < 0.5 and row["p"] > 0.01


def test_default_persona_needs_equivalence_not_a_missing_difference() -> None:
    """3 scenarios, most answers unreadable: nothing is significant, and nothing is shown either."""
    frame = _design({"control": ("control", 0.0), "male": ("gender", 0.0), "female": ("gender", 0.0)},
                    n_scenarios=3, noise=10.0, seed=2)
    rng = np.random.default_rng(5)
    lost = pd.Series(rng.random(len(frame)) < 0.6, index=frame.index) & (frame["rephrasing"] > 1)
    frame = unreadable(frame, lost)
    comparison = sa.compare_to_control(frame)
    assert not comparison["significant"].any()
    persona = sa.default_persona(comparison).iloc[0]
    assert persona["default_groups"] == []
    assert persona["undetermined_groups"] == ["female", "male"]
    assert set(comparison["verdict"]) == {"undetermined"}


def test_equivalence_is_tost_with_a_stated_margin() -> None:
    from statsmodels.stats.weightstats import ttost_paired

    frame = _design({"control": ("control", 0.0), "male": ("gender", 0.0), "female": ("gender", 6.0)},
                    n_scenarios=60, noise=1.5, seed=3)
    result = sa.compare_to_control(frame, equivalence_margin=2.0).set_index("group")
    x, y = _matched_by_hand(frame, "male")
    assert result.loc["male", "tost_p"] == pytest.approx(ttost_paired(x, y, -2.0, 2.0)[0])
    assert result.loc["male", "equivalence_margin"] == 2.0
    assert result.loc["male", "verdict"] == "equivalent"
    assert result.loc["female", "verdict"] == "differs"
    persona = sa.default_persona(result.reset_index()).iloc[0]
    assert persona["default_groups"] == ["male"] and persona["differing_groups"] == ["female"]
    narrow = sa.compare_to_control(frame, equivalence_margin=0.01).set_index("group")
    assert narrow.loc["male", "verdict"] == "undetermined"


def test_papers_rule_beside_a_correction_within_one_category() -> None:
    """Holm over one category: a gender group's result is the same whether race and age ran too."""
    groups = {"control": ("control", 0.0), "male": ("gender", 0.3), "female": ("gender", 1.0),
              "teenager": ("age", -4.0), "senior": ("age", 3.0), "White": ("race", 0.5)}
    everything = _design(groups, n_scenarios=25, noise=3.0, seed=6)
    gender_only = everything[everything["category"].isin(["control", "gender"])]
    columns = ["p", "p_adj", "significant", "significant_paper", "tost_p_adj", "verdict", "wilcoxon_p_adj"]
    both = sa.compare_to_control(everything).set_index("group")
    alone = sa.compare_to_control(gender_only).set_index("group")
    # female: p = 0.004; Holm over gender alone 0.008 (significant at 0.01), over all five groups 0.012
    for group in ("female", "male"):
        for column in columns:
            assert both.loc[group, column] == pytest.approx(alone.loc[group, column]), (group, column)
    assert bool(both.loc["female", "significant"]) is True
    for _, cell in both.groupby("category"):
        assert cell["p_adj"].to_numpy() == pytest.approx(multipletests(cell["p"].to_numpy(), method="holm")[1])
    assert (both["significant"] == (both["p_adj"] < 0.01)).all()
    # the paper's rule: paired t, alpha 0.01, uncorrected, whatever alpha the analysis uses
    loose = sa.compare_to_control(everything, alpha=0.05)
    assert (loose["significant_paper"] == (loose["p"] < 0.01)).all()
    assert (loose["significant"] == (loose["p_adj"] < 0.05)).all()


def test_a_model_that_always_answers_the_same_number_is_equivalent_given_enough_scenarios() -> None:
    """Identical ratings everywhere: the t-test is undefined (no spread). The exact sign-test TOST
    takes over: p = 0.5^n when every difference lies within the margin, so 10 scenarios show the
    group equivalent (p 0.001) and 4 do not (p 0.0625: a constant answer in 4 scenarios is not
    evidence of equivalence)."""
    for n_scenarios, tost_p, verdict in ((10, 0.5**10, "equivalent"), (4, 0.5**4, "undetermined")):
        frame = _design({"control": ("control", 0.0), "male": ("gender", 0.0)}, n_scenarios=n_scenarios,
                        noise=0.0)
        frame["rating"] = 50.0
        row = sa.compare_to_control(frame).iloc[0]
        assert math.isnan(row["p"]) and row["tost_p"] == pytest.approx(tost_p)
        assert row["verdict"] == verdict, n_scenarios
    # a constant difference outside the margin is never equivalent
    frame = _design({"control": ("control", 0.0), "male": ("gender", 3.0)}, n_scenarios=12, noise=0.0)
    frame["rating"] = np.where(frame["group"] == "male", 53.0, 50.0)
    row = sa.compare_to_control(frame).iloc[0]
    assert row["tost_p"] == 1.0 and row["verdict"] != "equivalent"
