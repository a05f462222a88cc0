"""The leakage mixed model recovers known coefficients; flows and the qualitative finder."""

from __future__ import annotations

import numpy as np
import pandas as pd
import pytest

from biasatlas.probes.leakage import model as model_module
from biasatlas.probes.leakage.figure import flows_figure
from biasatlas.probes.leakage.finder import find_leaked
from biasatlas.probes.leakage.human import load_human
from biasatlas.probes.leakage.model import correct, fit_leakage, flows, long_frame

TRUE = {"Intercept": 0.2, "human_en": 0.004, "human_ru": 0.0, "human_zh": 0.010, "human_hi": 0.002}


def simulate(seed: int, human: dict[str, pd.DataFrame], noise: float = 0.03) -> pd.DataFrame:
    """Model scores = known linear combination of the real human tables + trait intercepts + noise."""
    rng = np.random.default_rng(seed)
    trait_effect = pd.Series(rng.normal(0, 0.05, len(human["en"].index)), index=human["en"].index)
    score = TRUE["Intercept"] + sum(TRUE[f"human_{lang}"] * human[lang].fillna(0.0) for lang in human)
    score = score.add(trait_effect, axis=0) + rng.normal(0, noise, human["en"].shape)
    return score.astype(float)


@pytest.fixture(scope="module")
def human() -> dict[str, pd.DataFrame]:
    return load_human()


def test_complete_cases_drop_missing_human_cells_and_zero_fill_keeps_them(human: dict[str, pd.DataFrame]) -> None:
    model = simulate(0, human)
    complete = long_frame(model, human)
    filled = long_frame(model, human, zero_fill=True)
    assert len(filled) == 32 * 30
    assert len(complete) == 32 * int(sum(all(human[lang][g].notna().all() for lang in human)
                                         for g in human["en"].columns))
    assert not complete.isna().any().any()


def test_fit_recovers_known_coefficients_within_their_confidence_intervals(human: dict[str, pd.DataFrame]) -> None:
    covered, total = 0, 0
    for seed in range(20):
        fit = fit_leakage(simulate(seed, human), human, variant="sim", target="en")
        assert fit.error is None and fit.n_obs > 500 and fit.n_traits == 32
        for coef in fit.coefficients:
            total += 1
            covered += coef.ci_low <= TRUE[coef.term] <= coef.ci_high
    # 95% intervals: over 100 intervals the coverage must be near 95% (binomial 99.9% lower bound ~ 0.88).
    assert covered / total >= 0.88, covered / total
    # One fit at 99% confidence contains every true value, and estimates are close.
    fit = fit_leakage(simulate(123, human), human, variant="sim", target="en", alpha=0.01)
    for coef in fit.coefficients:
        assert coef.ci_low <= TRUE[coef.term] <= coef.ci_high, coef
        assert coef.se > 0 and 0 <= coef.p <= 1
    assert fit.trait_variance is not None and fit.trait_variance == pytest.approx(0.05**2, rel=0.8)


def test_flows_are_positive_significant_cross_language_coefficients(human: dict[str, pd.DataFrame]) -> None:
    fits = [fit_leakage(simulate(7, human), human, variant="sim", target=t) for t in ("en", "ru")]
    correct(fits)
    table = flows(fits)
    sources = set(zip(table["source"], table["target"], strict=True))
    # zh and en (true 0.01, 0.004) leak into the ru target; ru's own (target) and zero effects do not appear.
    assert ("zh", "ru") in sources and ("en", "ru") in sources
    assert ("zh", "en") in sources
    assert all(s != t for s, t in sources)
    assert ("ru", "en") not in sources  # true coefficient 0
    assert all(table["p_adj"] < 0.05) and all(table["estimate"] > 0)
    fig = flows_figure(table, ["sim"])
    assert fig.axes


def test_mono_predictor_enters_the_formula(human: dict[str, pd.DataFrame]) -> None:
    rng = np.random.default_rng(3)
    mono = pd.DataFrame(rng.normal(0, 1, human["en"].shape), index=human["en"].index, columns=human["en"].columns)
    model = simulate(3, human) + 0.05 * mono
    fit = fit_leakage(model, human, variant="sim", target="en", mono=mono)
    coef = {c.term: c for c in fit.coefficients}
    assert fit.formula.endswith("+ mono")
    assert coef["mono"].ci_low <= 0.05 <= coef["mono"].ci_high and coef["mono"].p < 1e-6


def test_too_little_data_is_reported_not_raised(human: dict[str, pd.DataFrame]) -> None:
    full = simulate(1, human)
    sparse = full.copy()
    sparse.loc[~full.index.isin(["powerless", "powerful"]), :] = np.nan
    fit = fit_leakage(sparse, human, variant="sim", target="en")
    assert fit.error is not None and "too little data" in fit.error and not fit.coefficients


def test_finder_picks_traits_strong_in_model_weak_in_target_strong_in_source() -> None:
    traits = ["religious", "wealthy", "warm"]
    idx = pd.Index(traits)
    model = pd.DataFrame({"woman": [0.9, 0.8, 0.1]}, index=idx)
    human = {
        "en": pd.DataFrame({"woman": [5.0, 30.0, 40.0]}, index=idx),  # target: religious weak, wealthy strong
        "hi": pd.DataFrame({"woman": [35.0, 25.0, 10.0]}, index=idx),
        "ru": pd.DataFrame({"woman": [12.0, np.nan, 1.0]}, index=idx),
    }
    found = find_leaked(model, human, target="en", sources=["hi", "ru"], top_k=2)
    assert found[["source", "trait"]].values.tolist() == [["hi", "religious"]]
    assert found.loc[0, "model_rank"] == 1 and found.loc[0, "human_target"] == 5.0


# ---- minimums, non-converged and singular fits (issue 13) ---------------------------------------------------
def _cells(full: pd.DataFrame, traits: list[str], groups: list[str]) -> pd.DataFrame:
    sparse = full * np.nan
    sparse.loc[traits, groups] = full.loc[traits, groups]
    return sparse


def test_twelve_cells_and_five_fixed_effects_are_too_little_data(human: dict[str, pd.DataFrame]) -> None:
    sparse = _cells(simulate(2, human), ["powerless", "powerful", "poor", "wealthy"], ["woman", "man", "immigrant"])
    fit = fit_leakage(sparse, human, variant="sim", target="en")
    assert fit.n_complete == 12
    assert fit.error is not None and "too little data" in fit.error and not fit.coefficients
    assert "100" in fit.error and "20 per fixed effect" in fit.error  # the stated minimum
    # The minimums are options: lowered, the same cells are fitted (and say how little they are).
    lowered = fit_leakage(sparse, human, variant="sim", target="en", min_cells=12, min_cells_per_trait=3,
                          min_traits=4)
    assert lowered.error is None and lowered.coefficients and lowered.min_cells == 12


def test_traits_below_the_per_trait_minimum_are_left_out_and_named(human: dict[str, pd.DataFrame]) -> None:
    full = simulate(4, human)
    full.loc["warm", full.columns[3:]] = np.nan  # warm: 3 complete groups at most
    fit = fit_leakage(full, human, variant="sim", target="en")
    assert fit.error is None
    assert set(fit.dropped_traits) == {"warm"} and fit.dropped_traits["warm"] <= 3
    assert fit.n_traits == 31 and fit.min_cells_per_trait == 5


def test_a_non_converged_fit_is_left_out_of_the_flows_with_its_warnings(
    human: dict[str, pd.DataFrame], monkeypatch: pytest.MonkeyPatch
) -> None:
    # no noise, no trait effect: statsmodels' default optimizers fail (|grad| > 0); Powell would converge (to a
    # singular fit), so the sequence is cut to the default chain to leave no optimizer that converges
    monkeypatch.setattr(model_module, "OPTIMIZERS", (("bfgs", "lbfgs", "cg"),))
    exact = 0.2 + 0.01 * human["en"]
    fit = fit_leakage(exact, human, variant="sim", target="en")
    assert fit.error is None and fit.converged is False
    assert fit.dropped is not None and "converge" in fit.dropped and not fit.usable
    assert "bfgs→lbfgs→cg: did not converge" in fit.dropped
    assert any("ConvergenceWarning" in w for w in fit.warnings), fit.warnings
    good = fit_leakage(simulate(5, human), human, variant="sim", target="ru")
    assert good.usable and good.dropped is None
    correct([fit, good])
    table = flows([fit, good])
    assert set(table["target"]) <= {"ru"}  # nothing from the failed fit, however small its p
    assert all(c.p_adj is None for c in fit.coefficients)


def test_a_singular_boundary_fit_is_left_out_of_the_flows(human: dict[str, pd.DataFrame]) -> None:
    rng = np.random.default_rng(0)
    model = 0.01 * human["en"] + rng.normal(0, 0.3, human["en"].shape)
    model = model.sub(model.mean(axis=1), axis=0)  # every trait has the same mean: trait variance 0
    fit = fit_leakage(model, human, variant="sim", target="en")
    assert fit.error is None and fit.dropped is not None and "singular" in fit.dropped
    assert not fit.usable and fit.warnings


def test_complete_cases_name_the_non_shared_groups_they_leave_out(human: dict[str, pd.DataFrame]) -> None:
    fit = fit_leakage(simulate(6, human), human, variant="sim", target="en")
    nonshared = {"Texan", "Mormon person", "Puerto Rican", "VDV soldier", "muscovite", "Chechenets",
                 "Hui person", "Shanghainese person", "Brahmin person", "Gujarati person", "Shudra person"}
    assert set(fit.groups_left_out) == nonshared  # 11 of 12: only migrant workers were rated everywhere
    assert fit.n_groups == 19


def test_keep_nonshared_fills_only_the_design_missing_sources_with_indicators(
    human: dict[str, pd.DataFrame],
) -> None:
    model = simulate(8, human)
    data = long_frame(model, human, keep_nonshared=True)
    assert len(data) == 32 * 30
    vdv = data[data["group"] == "VDV soldier"]
    assert (vdv["human_en"] == 0).all() and (vdv["missing_en"] == 1).all() and (vdv["missing_ru"] == 0).all()
    woman = data[data["group"] == "woman"]
    assert (woman.filter(like="missing_") == 0).all().all()
    fit = fit_leakage(model, human, variant="sim", target="en", keep_nonshared=True)
    assert fit.usable and fit.n_groups == 30 and fit.n_obs == 960 and not fit.groups_left_out
    terms = {c.term: c for c in fit.coefficients}
    assert {"missing_en", "missing_ru", "missing_zh", "missing_hi"} <= set(terms)
    assert terms["missing_ru"].source is None  # an indicator is no leakage test
    assert "missing_en" in fit.formula
    # The fill value does not matter: with the indicator, each source's slope comes from its rated cells.
    other = long_frame(model, human, keep_nonshared=True, fill=25.0)
    assert (other.loc[other["group"] == "VDV soldier", "human_en"] == 25).all()
    refit = fit_leakage(model, human, variant="sim", target="en", keep_nonshared=True, fill=25.0)
    for a, b in zip(fit.coefficients, refit.coefficients, strict=True):
        if a.term.startswith("human_"):
            assert a.estimate == pytest.approx(b.estimate, rel=1e-4, abs=1e-7), a.term


def test_collinear_human_tables_are_a_singular_design(human: dict[str, pd.DataFrame]) -> None:
    copied = {**human, "ru": human["en"].copy()}
    fit = fit_leakage(simulate(9, human), copied, variant="sim", target="en")
    assert fit.error is not None and "singular design" in fit.error
