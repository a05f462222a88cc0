"""The CLI's corrections are statsmodels' numbers; Holm without statsmodels' garbage collection on every call."""

from __future__ import annotations

import gc

import numpy as np
import pytest
from statsmodels.stats.multitest import multipletests

from biasatlas.stats.multitest import METHODS, adjust, holm


@pytest.mark.parametrize("seed", range(40))
def test_holm_equals_statsmodels_with_ties_zeros_and_ones(seed: int) -> None:
    rng = np.random.default_rng(seed)
    n = int(rng.integers(1, 30))
    p = rng.choice([0.0, 1.0, 0.01, 0.05, *rng.uniform(0, 1, 5)], size=n)  # many ties
    assert np.array_equal(holm(p), multipletests(p, method="holm")[1])


@pytest.mark.parametrize("method", [m for m in METHODS if m != "none"])
def test_adjust_keeps_nan_out_of_the_family(method: str) -> None:
    p = np.array([0.01, np.nan, 0.04, 0.03, np.nan, 0.5])
    out = adjust(p, method)
    assert np.isnan(out[[1, 4]]).all()
    ok = ~np.isnan(p)
    assert out[ok] == pytest.approx(multipletests(p[ok], method=METHODS[method])[1])


def test_holm_collects_no_garbage(monkeypatch: pytest.MonkeyPatch) -> None:
    calls = []
    monkeypatch.setattr(gc, "collect", lambda *a: calls.append(a) or 0)
    adjust([0.01, 0.02, 0.2], "holm")
    assert calls == []


@pytest.mark.parametrize("seed", range(25))
def test_wilcoxon_equals_scipy_on_ties_and_zeros(seed: int) -> None:
    """The signed-rank test's own permutation route (ties or zeros, n <= 13) gives scipy's statistic and p."""
    from scipy.stats import wilcoxon

    from biasatlas.stats.paired import wilcoxon_signed_rank

    rng = np.random.default_rng(seed)
    n = int(rng.integers(2, 11)) if seed % 5 else 13
    x, y = rng.choice([0.0, 0.5, 1.0, 2.0], size=n), rng.choice([0.0, 1.0, 1.5], size=n)
    if np.array_equal(x, y):
        y[0] += 1.0
    ours, theirs = wilcoxon_signed_rank(x, y), wilcoxon(x, y)
    assert ours.p == float(theirs.pvalue) and ours.statistic == float(theirs.statistic)
