"""The Wilcoxon signed-rank p of :func:`biasatlas.stats.paired.wilcoxon_signed_rank` is scipy's, bit for bit, on
the data where scipy's 'auto' method permutes (zeros or ties at n <= 13) and where it does not."""

from __future__ import annotations

import numpy as np
import pytest
from scipy import stats as sps

from biasatlas.stats import paired
from biasatlas.stats.paired import wilcoxon_signed_rank


def _cases() -> list[tuple[np.ndarray, np.ndarray]]:
    rng = np.random.default_rng(11)
    cases = [(np.array([1.0, 2.0, 2.0, 0.0, 3.0, -1.0, 4.0, 5.0, 1.0, 2.0, 0.0, 3.0, 2.0]), np.zeros(13)),
             (np.array([2.197, -2.197, 2.197, 0.0, 0.0]), np.zeros(5)),  # the fake backend's log-odds
             (np.array([0.3, 0.1, -0.2, 0.5]), np.zeros(4)),  # no zeros, no ties: the exact distribution
             (np.arange(1.0, 20.0) % 4 - 1.5, np.zeros(19))]  # ties beyond 13 pairs: asymptotic
    while len(cases) < 30:
        n = int(rng.integers(2, 10))  # small: scipy itself is slow on ties at n near 13
        x, y = rng.choice([0.0, 0.5, 1.0, 2.197, -2.197], size=n), rng.choice([0.0, 0.5, 2.197], size=n)
        if (x != y).any():
            cases.append((x, y))
    return cases


@pytest.mark.parametrize(("x", "y"), _cases())
def test_the_p_and_statistic_are_scipys(x: np.ndarray, y: np.ndarray) -> None:
    ours, theirs = wilcoxon_signed_rank(x, y), sps.wilcoxon(x, y)
    assert ours.p == float(theirs.pvalue)
    assert ours.statistic == float(theirs.statistic)


def test_tied_data_take_the_vectorised_permutation(monkeypatch: pytest.MonkeyPatch) -> None:
    calls = []
    real = paired._wilcoxon_permutation_p
    monkeypatch.setattr(paired, "_wilcoxon_permutation_p", lambda d: calls.append(d) or real(d))
    x = np.array([1.0, 1.0, 0.0, -2.0, 3.0])
    assert wilcoxon_signed_rank(x, np.zeros(5)).p == float(sps.wilcoxon(x, np.zeros(5)).pvalue)
    assert len(calls) == 1
