"""One contingency table: building and pruning it, its effect size, and the value-level cell tests."""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
import pandas as pd
import scipy.stats as ss

from biasatlas.stats.associations.config import EFFECT_THRESHOLDS, OTHER, UNKNOWN
from biasatlas.stats.multitest import adjust


def contingency(a: pd.Series, b: pd.Series, min_row_total: int = 10) -> pd.DataFrame | None:
    """The A × B table without unknown (A, B) and other (B) values, rows under ``min_row_total``
    and empty columns; None when fewer than 2 rows or 2 columns remain."""
    keep = (a != UNKNOWN) & (b != UNKNOWN) & (b != OTHER) & a.notna() & b.notna()
    if not keep.any():
        return None
    table = pd.crosstab(a[keep], b[keep])
    return _prune(table, min_row_total)


def _prune(table: pd.DataFrame, min_row_total: int) -> pd.DataFrame | None:
    table = table[table.sum(axis=1) >= min_row_total]
    table = table.loc[:, (table != 0).any(axis=0)]
    if table.shape[0] < 2 or table.shape[1] < 2:
        return None
    return table


@dataclass(frozen=True)
class LabelledTable:
    """A contingency table as a numpy array with its row and column labels."""

    counts: np.ndarray
    rows: np.ndarray
    cols: np.ndarray

    @property
    def shape(self) -> tuple[int, int]:
        return (int(self.counts.shape[0]), int(self.counts.shape[1]))


def prune_array(
    counts: np.ndarray, rows: np.ndarray, cols: np.ndarray, min_row_total: int
) -> LabelledTable | None:
    """Numpy twin of :func:`_prune` (the slice loop builds thousands of tables)."""
    keep_r = counts.sum(axis=1) >= min_row_total
    counts = counts[keep_r]
    keep_c = (counts != 0).any(axis=0)
    counts = counts[:, keep_c]
    if counts.shape[0] < 2 or counts.shape[1] < 2:
        return None
    return LabelledTable(counts, rows[keep_r], cols[keep_c])


def cramers_v_corrected(table: np.ndarray) -> tuple[float, float]:
    """Bias-corrected Cramér's V (Bergsma 2013) and Pearson's χ² (no continuity correction)."""
    counts = np.asarray(table, dtype=float)
    n = counts.sum()
    r, k = counts.shape
    chi2 = float(ss.chi2_contingency(counts, correction=False).statistic)
    phi2 = chi2 / n
    phi2_corr = max(0.0, phi2 - (k - 1) * (r - 1) / max(n - 1, 1))
    r_corr = r - (r - 1) ** 2 / max(n - 1, 1)
    k_corr = k - (k - 1) ** 2 / max(n - 1, 1)
    denom = min(k_corr - 1, r_corr - 1)
    return (float(np.sqrt(phi2_corr / denom)) if denom > 0 else 0.0), chi2


def effect_category(v: float, shape: tuple[int, int]) -> str:
    """Cohen's benchmarks for w scaled by sqrt(min(r, c) - 1): negligible/small/medium/large."""
    scale = np.sqrt(max(min(shape) - 1, 1))
    for name in ("large", "medium", "small"):
        if v >= EFFECT_THRESHOLDS[name] / scale:
            return name
    return "negligible"


def cell_tests(table: np.ndarray, alpha: float = 0.05) -> dict[str, np.ndarray]:
    """One-sided Fisher test of every cell (the cell against the rest of its row and column).

    For a 2×2 table [[a, R-a], [C-a, N-R-C+a]] the one-sided ("greater") Fisher p-value is the
    hypergeometric survival P(X ≥ a), X ~ Hypergeom(N, R, C): scipy.stats.fisher_exact computes
    exactly that, and hypergeom.sf evaluates every cell at once. BY across the table's cells.
    """
    counts = np.asarray(table, dtype=np.int64)
    n = int(counts.sum())
    rows = counts.sum(axis=1, keepdims=True)
    cols = counts.sum(axis=0, keepdims=True)
    expected = rows * cols / n
    p = ss.hypergeom.sf(counts - 1, n, rows, cols)
    q = adjust(p.ravel(), "by").reshape(counts.shape)
    return {
        "count": counts,
        "expected": expected,
        "lift": counts / expected,
        "fraction": counts / rows,
        "p": p,
        "q": q,
        "significant": q < alpha,
    }



def cochran_ok(expected: np.ndarray) -> bool:
    """Cochran's rule for the χ² approximation: every expected count ≥ 1, at least 80% ≥ 5."""
    return bool(expected.min() >= 1 and (expected >= 5).mean() >= 0.8)

