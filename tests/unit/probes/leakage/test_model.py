"""The leakage mixed model recovers known coefficients; flows and the qualitative finder."""

from __future__ import annotations

import numpy as np
import pandas as pd
import pytest

from biasatlas.probes.leakage.human import load_human
from biasatlas.probes.leakage.model import (
    correct,
    find_leaked,
    fit_leakage,
    flows,
    flows_figure,
    long_frame,
)

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
