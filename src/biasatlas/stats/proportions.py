"""Proportions with Wilson intervals, tables of rates by any grouping, and means with t intervals."""

from __future__ import annotations

import math
from collections.abc import Sequence

import numpy as np
import pandas as pd
from statsmodels.stats.proportion import proportion_confint


def wilson_interval(count: int, n: int, alpha: float = 0.05) -> tuple[float, float]:
    """Wilson score interval for count/n (statsmodels); (nan, nan) when n is 0."""
    if n == 0:
        return float("nan"), float("nan")
    low, high = proportion_confint(count, n, alpha=alpha, method="wilson")
    return float(low), float(high)


def wilson_intervals(counts: np.ndarray, n: np.ndarray, alpha: float = 0.05) -> tuple[np.ndarray, np.ndarray]:
    """:func:`wilson_interval` of many count/n at once: one statsmodels call on arrays (the same arithmetic
    element by element, so the same floats); NaN where n is 0."""
    counts, n = np.asarray(counts), np.asarray(n)
    if counts.size == 0:
        return np.empty(0), np.empty(0)
    some = n > 0
    low, high = np.full(n.shape, np.nan), np.full(n.shape, np.nan)
    if some.any():
        low[some], high[some] = proportion_confint(counts[some], n[some], alpha=alpha, method="wilson")
    return low, high


def mean_interval(values: np.ndarray, alpha: float = 0.05) -> tuple[float, float, float]:
    """Mean of ``values`` (NaN left out) with its Student t (1 − alpha) interval; nan where undefined."""
    from scipy import stats as sps

    x = np.asarray(values, float)
    x = x[~np.isnan(x)]
    if len(x) == 0:
        return math.nan, math.nan, math.nan
    mean = float(x.mean())
    if len(x) < 2:
        return mean, math.nan, math.nan
    half = float(sps.t.ppf(1 - alpha / 2, len(x) - 1) * x.std(ddof=1) / math.sqrt(len(x)))
    return mean, mean - half, mean + half


def wilson_on_mean(mean: float, n: float, bounds: tuple[float, float] = (0.0, 1.0),
                   alpha: float = 0.05) -> tuple[float, float]:
    """Wilson's interval (statsmodels' proportion_confint) for a mean of ``n`` values within ``bounds``, the
    mean taken as a share of the scale: a mean of values in [0, 1] has variance at most p(1 − p), so this
    interval is at least as wide as it needs to be."""
    from statsmodels.stats.proportion import proportion_confint

    lo, hi = bounds
    width = hi - lo
    share = min(1.0, max(0.0, (mean - lo) / width))
    a, b = proportion_confint(share * n, n, alpha=alpha, method="wilson")
    return lo + width * float(a), lo + width * float(b)


def bounded_mean_interval(values: np.ndarray, alpha: float = 0.05) -> tuple[float, float, float, str]:
    """Mean of ``values`` in [0, 1] with its t interval, or :func:`wilson_on_mean` where the t interval leaves
    [0, 1], and the name of the interval given ("t" or "wilson")."""
    mean, low, high = mean_interval(values, alpha)
    if math.isnan(low) or (low >= 0 and high <= 1):
        return mean, low, high, "t"
    n = int(np.count_nonzero(~np.isnan(np.asarray(values, float))))
    return (mean, *wilson_on_mean(mean, n, alpha=alpha), "wilson")


def rate_table(
    frame: pd.DataFrame,
    by: Sequence[str],
    column: str,
    levels: Sequence[str],
    alpha: float = 0.05,
) -> pd.DataFrame:
    """For each group of ``by``: n, the count and % of each level of ``column``, with Wilson CIs.

    Missing values of ``column`` count as their own level when "none" is among ``levels``.
    """
    if frame.empty:
        return pd.DataFrame([])
    values = frame[column].fillna("none")
    # one grouping for every level (groups numbered in the order a sorted groupby iterates them)
    grouped = values.groupby([frame[b] for b in by], dropna=False, sort=True)
    ids = grouped.ngroup().to_numpy()
    keys = grouped.size().index
    size = len(keys)
    n = np.bincount(ids, minlength=size)
    answers = values.to_numpy(dtype=object)
    columns: dict[str, list[object]] = {}
    for level in levels:
        count = np.bincount(ids[answers == level], minlength=size)
        low, high = wilson_intervals(count, n, alpha)
        columns[f"{level}_count"] = count.tolist()
        columns[f"{level}_pct"] = (100.0 * count / n).tolist()
        columns[f"{level}_ci_low"] = (100.0 * low).tolist()
        columns[f"{level}_ci_high"] = (100.0 * high).tolist()
    rows = []
    for i, key in enumerate(keys.tolist()):
        key = key if isinstance(key, tuple) else (key,)
        row: dict[str, object] = dict(zip(by, key, strict=True))
        row["n"] = int(n[i])
        row.update({name: column[i] for name, column in columns.items()})
        rows.append(row)
    return pd.DataFrame(rows)
