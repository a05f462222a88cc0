"""The two-step association procedure: golden case, cell tests, screening, planted associations."""

from __future__ import annotations

from dataclasses import replace

import numpy as np
import pandas as pd
import pytest
import scipy.stats as ss

from biasatlas.probes.stories.seeds import load_seeds
from biasatlas.probes.stories.synth import Planted, synthetic_profiles
from biasatlas.stats.associations import (
    AssociationConfig,
    cell_tests,
    contingency,
    cramers_v_corrected,
    effect_category,
    family_pvalues,
    fisher_rxc_mc,
    jaccard_matrix,
    mine_associations,
)
from biasatlas.stats.multitest import adjust

GOLDEN = np.array([[30, 10, 5], [8, 25, 12], [5, 9, 28]])
DIMS = list(load_seeds("en").dimensions)


def test_golden_table_chi2_and_cramers_v():
    v, chi2 = cramers_v_corrected(GOLDEN)
    assert chi2 == pytest.approx(55.4794, abs=5e-5)
    assert v == pytest.approx(0.444863, abs=5e-7)
    assert effect_category(v, GOLDEN.shape) == "large"


def test_golden_table_cells_after_by():
    cells = cell_tests(GOLDEN)
    significant = {tuple(ij) for ij in np.argwhere(cells["significant"])}
    assert significant == {(0, 0), (1, 1), (2, 2)}
    assert cells["lift"][0, 0] == pytest.approx(2.0465, abs=5e-5)
    assert cells["lift"][1, 1] == pytest.approx(1.6667, abs=5e-5)
    assert cells["lift"][2, 2] == pytest.approx(1.9556, abs=5e-5)
    # lift >= 2 keeps only (0, 0)
    assert {ij for ij in significant if cells["lift"][ij] >= 2} == {(0, 0)}


def test_cell_p_values_are_scipy_one_sided_fisher():
    rng = np.random.default_rng(3)
    table = rng.integers(0, 20, size=(4, 5))
    cells = cell_tests(table)
    n, rows, cols = table.sum(), table.sum(1), table.sum(0)
    for i in range(4):
        for j in range(5):
            a = table[i, j]
            two_by_two = [[a, rows[i] - a], [cols[j] - a, n - rows[i] - cols[j] + a]]
            expected = ss.fisher_exact(two_by_two, alternative="greater").pvalue
            assert cells["p"][i, j] == pytest.approx(expected, rel=1e-9, abs=1e-300)
    assert np.allclose(cells["q"].ravel(), adjust(cells["p"].ravel(), "by"))


def test_fisher_mc_is_scipy_seeded_and_handles_sparse_tables():
    method = ss.MonteCarloMethod(n_resamples=2000, rng=np.random.default_rng(42))
    assert fisher_rxc_mc(GOLDEN, 2000, 42) == ss.fisher_exact(GOLDEN, method=method).pvalue
    sparse = np.zeros((11, 12), dtype=int)  # more cells than observations: scipy returns an array
    sparse[:, 0] = 5
    sparse[:, 1] = 5
    sparse[0, 2] = 1
    assert 0 < fisher_rxc_mc(sparse, 500, 1) <= 1


def test_contingency_drops_unknown_other_and_sparse_rows():
    a = pd.Series(["x"] * 12 + ["y"] * 12 + ["z"] * 5 + ["unknown"] * 4)
    b = pd.Series((["p", "q", "other", "unknown"] * 9)[:33])
    table = contingency(a, b, min_row_total=5)
    assert table is not None
    assert list(table.columns) == ["p", "q"]
    assert "z" not in table.index and "unknown" not in table.index  # z has < 5 usable rows
    assert contingency(pd.Series(["x"] * 20), pd.Series(["p", "q"] * 10)) is None  # one row only


def _family(seed: int) -> list[np.ndarray]:
    """A BH family of varied tables: some independent, some with graded associations."""
    rng = np.random.default_rng(seed)
    tables = []
    for k in range(12):
        r, c = rng.integers(2, 5), rng.integers(2, 6)
        probs = np.outer(rng.dirichlet(np.ones(r) * 3), rng.dirichlet(np.ones(c) * 3))
        if k % 3 == 0:
            probs = probs * rng.lognormal(0, 0.4 + 0.2 * k / 3, size=probs.shape)
        probs /= probs.sum()
        tables.append(rng.multinomial(int(rng.integers(40, 200)), probs.ravel()).reshape(r, c) + 1)
    return tables


@pytest.mark.parametrize("seed", [0, 1, 2])
def test_sequential_strategy_gives_the_reference_decisions(seed):
    config = AssociationConfig(resamples=20_000, stages=(500, 4_000))
    tables = _family(seed)
    chi2_p = [ss.chi2_contingency(t, correction=False).pvalue for t in tables]
    ok = [bool((ss.contingency.expected_freq(t) >= 5).mean() >= 0.8) for t in tables]
    seq = family_pvalues(tables, config, list(range(len(tables))), chi2_p, ok)
    ref = family_pvalues(tables, replace(config, strategy="reference"), [0] * len(tables), chi2_p, ok)
    seq_sig = adjust([s.p for s in seq], "bh") < config.alpha
    ref_sig = adjust([s.p for s in ref], "bh") < config.alpha
    assert seq_sig.tolist() == ref_sig.tolist()
    assert sum(s.resamples for s in seq) < sum(s.resamples for s in ref)


def test_planted_associations_are_found():
    planted = {
        "m": [
            Planted("income_level", "low", "housing_status", "homeless", 0.7),
            Planted("age", "senior", "employment_status", "retired", 0.8),
            Planted("urbanicity", "rural", "professional_field", "agriculture", 0.7),
        ]
    }
    profiles = synthetic_profiles(["m"], ["en"], 8_000, planted=planted, seed=11)
    result = mine_associations(profiles, DIMS, config=AssociationConfig(resamples=20_000, stages=(500, 4_000)))
    key = ["base_attribute", "base_value", "compared_attribute", "compared_value"]
    significant_cells = set(result.cells[key].itertuples(index=False, name=None))
    kept = set(result.associations[key].itertuples(index=False, name=None))
    planted_keys = {(p.base_attribute, p.base_value, p.compared_attribute, p.compared_value) for p in planted["m"]}
    # every planted pair is a BY-significant cell of a kept (medium/large, BH-significant) table
    assert planted_keys <= significant_cells
    # lift >= 2 also depends on how common the value already is; what passes was planted
    assert kept and kept <= planted_keys
    assert ("age", "senior", "employment_status", "retired") in kept


def test_independent_attributes_stay_within_the_nominal_fdr():
    profiles = synthetic_profiles(["m1", "m2"], ["en"], 6_000, seed=5)
    result = mine_associations(profiles, DIMS, config=AssociationConfig(resamples=20_000, stages=(500, 4_000)))
    # every null is true here, so BH at 0.05 bounds P(any rejection in a family) by 0.05:
    # with 2 models × 19 families, more than a handful of significant tables would be a bug
    assert result.tables["significant"].sum() <= 5
    assert len(result.associations) <= 3  # a false discovery now and then is what an FDR allows


def test_jaccard_matrix():
    sets = {"en": {("a",), ("b",)}, "fr": {("b",), ("c",)}, "es": set()}
    jac = jaccard_matrix(sets)
    assert jac.loc["en", "fr"] == pytest.approx(1 / 3)
    assert jac.loc["en", "en"] == 1.0
    assert np.isnan(jac.loc["es", "es"])


def _two_models_planted() -> pd.DataFrame:
    planted = {
        "m1": [Planted("age", "senior", "employment_status", "retired", 0.9)],
        "m2": [Planted("age", "senior", "employment_status", "retired", 0.6)],
    }
    return synthetic_profiles(["m1", "m2"], ["en"], 12_000, planted=planted, seed=1)


def test_pooled_association_takes_the_mean_fraction_and_lift_across_models():
    result = mine_associations(_two_models_planted(), DIMS,
                               config=AssociationConfig(resamples=20_000, stages=(500, 4_000)))
    key = ("age", "senior", "employment_status", "retired")
    per = result.per_slice
    rows = per[[tuple(r) == key for r in per[list(result.associations.columns[:4])].itertuples(index=False)]]
    assert sorted(rows["model"]) == ["m1", "m2"]  # one row per model where it holds
    pooled = result.associations.set_index(["base_attribute", "base_value", "compared_attribute",
                                            "compared_value"]).loc[key]
    assert pooled["models"] == ["m1", "m2"]
    assert pooled["fraction"] == pytest.approx(rows["fraction"].mean())
    assert pooled["lift"] == pytest.approx(rows["lift"].mean())
    assert pooled["count"] == rows["count"].sum()
    # the two models differ, so a mean is not either model's own value
    assert rows["fraction"].nunique() == 2


def test_tables_decided_by_the_screen_report_a_bound():
    profiles = synthetic_profiles(["m"], ["en"], 8_000, planted={"m": [
        Planted("age", "senior", "employment_status", "retired", 0.9)]}, seed=3)
    config = AssociationConfig(resamples=20_000, stages=(500, 4_000))
    result = mine_associations(profiles, DIMS, config=config)
    tables = result.tables
    screened = tables[(tables["p_method"] == "chi2-asymptotic") & (tables["p_asymptotic"] <= config.screen_low)]
    assert len(screened)  # the planted table is decided by the screen
    # the reference Monte Carlo cannot report less than 1/(resamples+1): the p shown is a bound, not a value
    assert (screened["p_bound"] == "upper").all()
    assert screened["p"].isin([config.screen_low, config.sparse_low]).all()
    assert (screened["p_asymptotic"] <= screened["p"]).all()
    high = tables[(tables["p_method"] == "chi2-asymptotic") & (tables["p_asymptotic"] > config.screen_low)]
    assert (high["p_bound"] == "approximate").all()
    others = tables[tables["p_method"] != "chi2-asymptotic"]
    assert (others["p_bound"] == "").all()
