"""Multiple-comparison correction (statsmodels), with the method names users pass on the CLI."""

from __future__ import annotations

import numpy as np
from numpy.typing import ArrayLike

METHODS = {
    "bh": "fdr_bh",
    "by": "fdr_by",
    "bonferroni": "bonferroni",
    "holm": "holm",
    "none": None,
}


def adjust(pvalues: ArrayLike, method: str = "bh") -> np.ndarray:
    """Adjusted p-values; NaN inputs stay NaN and are left out of the correction."""
    if method not in METHODS:
        raise ValueError(f"unknown correction {method!r}; valid: {', '.join(METHODS)}")
    from statsmodels.stats.multitest import multipletests  # imported on use: CLI start-up stays light

    p = np.asarray(pvalues, dtype=float)
    out = np.full_like(p, np.nan)
    ok = ~np.isnan(p)
    if METHODS[method] is None:
        out[ok] = p[ok]
    elif method == "holm":
        out = holm(p)
    elif ok.any():
        out[ok] = multipletests(p[ok], method=METHODS[method])[1]
    return out


def holm(p: ArrayLike) -> np.ndarray:
    """Holm's step-down adjusted p-values, equal to statsmodels' ``multipletests(p, method="holm")[1]`` (a test
    checks it on ties, ones and zeros): statsmodels' Holm path runs ``gc.collect()`` on every call, which in a
    process holding a large study costs 0.1–1 s a call, and a summary makes one call per family.
    NaN inputs stay NaN and are left out of the family."""
    p = np.asarray(p, dtype=float)
    out = np.full_like(p, np.nan)
    ok = np.flatnonzero(~np.isnan(p))
    order = ok[np.argsort(p[ok], kind="stable")]
    stepped = np.maximum.accumulate(p[order] * np.arange(len(order), 0, -1))
    out[order] = np.minimum(stepped, 1.0)
    return out
