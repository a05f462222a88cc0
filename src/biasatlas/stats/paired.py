"""Paired tests (statsmodels / scipy), each returning statistic, p, effect size, CI, n and method."""

from __future__ import annotations

import math
from dataclasses import asdict, dataclass

import numpy as np
import pandas as pd
from scipy import stats as sps
from statsmodels.stats.contingency_tables import cochrans_q, mcnemar
from statsmodels.stats.proportion import proportion_confint


@dataclass
class TestResult:
    """One statistical test, as reported everywhere in biasatlas."""

    method: str
    n: int
    statistic: float
    p: float
    effect: float
    effect_name: str
    ci_low: float
    ci_high: float
    p_adj: float = float("nan")

    def as_dict(self) -> dict[str, object]:
        return {k: (None if isinstance(v, float) and math.isnan(v) else v) for k, v in asdict(self).items()}


def newcombe_paired_ci(
    both: int, first_only: int, second_only: int, neither: int, alpha: float = 0.05
) -> tuple[float, float]:
    """Newcombe's (1998) method 10 interval for P(first) − P(second) on paired binary data.

    The square-and-add of the two Wilson score intervals, corrected for the correlation ``phi``
    of the pairs (Newcombe, Stat Med 17:2635; Fagerland, Lydersen & Laake, ch. 8). Unlike the Wald
    interval it does not collapse to [0, 0] when no pair is discordant. (nan, nan) when n is 0.
    """
    n = both + first_only + second_only + neither
    if n == 0:
        return math.nan, math.nan
    first, second = both + first_only, both + second_only
    l1, u1 = proportion_confint(first, n, alpha=alpha, method="wilson")
    l2, u2 = proportion_confint(second, n, alpha=alpha, method="wilson")
    return _newcombe(both, first_only, second_only, neither, (l1, u1, l2, u2))


def newcombe_paired_cis(both: np.ndarray, first_only: np.ndarray, second_only: np.ndarray, neither: np.ndarray,
                        alpha: float = 0.05) -> list[tuple[float, float]]:
    """:func:`newcombe_paired_ci` of many tables: their Wilson intervals in one statsmodels call on arrays (the
    same floats as one call each, at a fraction of the time), the rest table by table."""
    counts = [np.asarray(c, dtype=np.int64) for c in (both, first_only, second_only, neither)]
    n = counts[0] + counts[1] + counts[2] + counts[3]
    some = n > 0
    first, second = (counts[0] + counts[1])[some], (counts[0] + counts[2])[some]
    wilson: list[tuple[float, float, float, float]] = []
    if len(first):
        l1, u1 = proportion_confint(first, n[some], alpha=alpha, method="wilson")
        l2, u2 = proportion_confint(second, n[some], alpha=alpha, method="wilson")
        wilson = list(zip(l1.tolist(), u1.tolist(), l2.tolist(), u2.tolist(), strict=True))
    bounds = iter(wilson)
    both_, first_, second_, neither_ = (c.tolist() for c in counts)
    return [_newcombe(both_[i], first_[i], second_[i], neither_[i], next(bounds)) if some[i]
            else (math.nan, math.nan) for i in range(len(n))]


def _newcombe(both: int, first_only: int, second_only: int, neither: int,
              wilson: tuple[float, float, float, float]) -> tuple[float, float]:
    """Newcombe's method 10 from the Wilson intervals of the two proportions (``l1, u1, l2, u2``)."""
    l1, u1, l2, u2 = wilson
    n = both + first_only + second_only + neither
    first, second = both + first_only, both + second_only
    p1, p2 = first / n, second / n
    phi = 0.0
    if first and second and n - first and n - second:
        product = float(first) * (n - first) * second * (n - second)
        cross = both * neither - first_only * second_only
        if cross > n / 2:
            phi = (cross - n / 2) / math.sqrt(product)
        elif cross < 0:
            phi = cross / math.sqrt(product)
    estimate = p1 - p2
    low = estimate - math.sqrt(max((p1 - l1) ** 2 + (u2 - p2) ** 2 - 2 * phi * (p1 - l1) * (u2 - p2), 0.0))
    high = estimate + math.sqrt(max((p2 - l2) ** 2 + (u1 - p1) ** 2 - 2 * phi * (p2 - l2) * (u1 - p1), 0.0))
    return float(low), float(high)


def mcnemar_paired(before: pd.Series, after: pd.Series, alpha: float = 0.05, ci: str = "wald") -> TestResult:
    """Exact McNemar test on paired booleans (e.g. biased under no contact vs under positive contact).

    Effect: the difference in proportions (after − before) with an interval for paired proportions:
    ``ci="wald"`` (the default, kept for existing callers) or ``ci="newcombe"`` (Newcombe's method 10,
    which stays informative when no pair is discordant).
    """
    mask = before.notna() & after.notna()
    x = before[mask].astype(bool).to_numpy()
    y = after[mask].astype(bool).to_numpy()
    n = int(mask.sum())
    if n == 0:
        return TestResult("McNemar exact", 0, math.nan, math.nan, math.nan, "risk difference", math.nan, math.nan)
    b = int((x & ~y).sum())  # biased before, not after
    c = int((~x & y).sum())  # biased after, not before
    table = np.array([[int((x & y).sum()), b], [c, int((~x & ~y).sum())]])
    res = mcnemar(table, exact=True)
    diff = (c - b) / n
    if ci == "newcombe":
        low, high = newcombe_paired_ci(int(table[0, 0]), c, b, int(table[1, 1]), alpha)
        interval = "; Newcombe interval"
    elif ci == "wald":
        se = math.sqrt(max((b + c) / n - ((c - b) / n) ** 2, 0.0) / n)
        z = sps.norm.ppf(1 - alpha / 2)
        low, high, interval = diff - z * se, diff + z * se, ""
    else:
        raise ValueError(f"ci {ci!r}: valid: wald, newcombe")
    return TestResult(
        method=f"McNemar exact (discordant: {b} → unbiased, {c} → biased{interval})",
        n=n,
        statistic=float(res.statistic),
        p=float(res.pvalue),
        effect=diff,
        effect_name="risk difference (after − before)",
        ci_low=low,
        ci_high=high,
    )


def cochran_q(wide: pd.DataFrame) -> TestResult:
    """Cochran's Q over k paired binary conditions (columns), rows with any missing dropped."""
    data = wide.dropna().astype(int)
    n = len(data)
    if n == 0 or data.shape[1] < 2:
        return TestResult("Cochran's Q", n, math.nan, math.nan, math.nan, "", math.nan, math.nan)
    if not (data.nunique(axis=1) > 1).any():
        # no row differs across the conditions: Q is 0/0 (statsmodels warns); the test says nothing
        return TestResult("Cochran's Q (no row differs)", n, math.nan, math.nan, math.nan, "eta² (Q / n(k−1))",
                          math.nan, math.nan)
    res = cochrans_q(data.to_numpy())
    k = data.shape[1]
    # Serlin-style effect size: eta^2_Q = Q / (n (k - 1))
    eta = float(res.statistic) / (n * (k - 1)) if n else math.nan
    return TestResult("Cochran's Q", n, float(res.statistic), float(res.pvalue), eta, "eta² (Q / n(k−1))",
                      math.nan, math.nan)


@dataclass(frozen=True)
class NoSpread:
    """A paired t-test whose differences have no spread: scipy's limits, and why (for the method's name)."""

    why: str
    t: float  # NaN (0/0) or ±inf (c/0)
    p: float  # NaN or 0
    mean: float  # the one difference (0 when no pair differs)


def no_spread(x: np.ndarray, y: np.ndarray) -> NoSpread | None:
    """The paired t-test of x − y when it is undefined, or None when it is defined.

    Every difference equal (up to the rounding of the subtraction: 4 units in the last place of the
    largest value) leaves the t statistic 0/0 (no pair differs) or c/0 (every difference is c);
    scipy then returns NaN or an infinite t with p 0, and warns that its result may be unreliable.
    Here are the same limits, without scipy and its warning.
    """
    d = x - y
    scale = max(float(np.max(np.abs(x))), float(np.max(np.abs(y))), np.finfo(float).tiny)
    rounding = 4 * np.finfo(float).eps * scale
    if len(d) < 2 or float(np.ptp(d)) > rounding:
        return None
    mean = float(d.mean())
    if abs(mean) <= rounding:
        return NoSpread("no pair differs: t undefined", math.nan, math.nan, 0.0)
    return NoSpread(f"every difference is {mean:+.4g}: t infinite", math.copysign(math.inf, mean), 0.0, mean)


def tost_paired(x: np.ndarray, y: np.ndarray, margin: float) -> float:
    """p of the TOST equivalence test that |mean(x − y)| < margin (statsmodels ``ttost_paired``).

    Pairs with a NaN are left out; NaN under 2 pairs. When the differences have no spread (:func:`no_spread`,
    the same rounding tolerance as the t-test's) the t-tests are undefined and the exact sign-test TOST takes
    over: each one-sided p is 0.5^n when all n differences lie inside the margin (else 1), so a constant answer
    over few pairs is not taken as evidence of equivalence.
    """
    x, y = np.asarray(x, float), np.asarray(y, float)
    ok = ~(np.isnan(x) | np.isnan(y))
    x, y = x[ok], y[ok]
    if len(x) < 2:
        return math.nan
    if no_spread(x, y) is not None:  # each one-sided sign test: all n differences on the inside of its bound
        inside = bool((np.abs(x - y) < margin).all())
        return float(sps.binomtest(len(x), len(x), alternative="greater").pvalue) if inside else 1.0
    from statsmodels.stats.weightstats import ttost_paired

    return float(ttost_paired(x, y, -margin, margin)[0])


def paired_t(x: np.ndarray, y: np.ndarray, alpha: float = 0.05) -> TestResult:
    """Paired t-test of x − y with the mean difference's CI and Cohen's d_z as effect size."""
    x, y = np.asarray(x, float), np.asarray(y, float)
    ok = ~(np.isnan(x) | np.isnan(y))
    d = x[ok] - y[ok]
    n = len(d)
    if n < 2:
        return TestResult("paired t-test", n, math.nan, math.nan, math.nan, "Cohen's d_z", math.nan, math.nan)
    flat = no_spread(x[ok], y[ok])
    if flat is not None:
        return TestResult(f"paired t-test ({flat.why})", n, flat.t, flat.p, math.nan, "Cohen's d_z", flat.mean,
                          flat.mean)
    res = sps.ttest_rel(x[ok], y[ok])
    ci = res.confidence_interval(confidence_level=1 - alpha)
    sd = d.std(ddof=1)
    dz = float(d.mean() / sd) if sd > 0 else math.nan
    return TestResult("paired t-test", n, float(res.statistic), float(res.pvalue), dz, "Cohen's d_z",
                      float(ci.low), float(ci.high))


def wilcoxon_signed_rank(x: np.ndarray, y: np.ndarray) -> TestResult:
    """Wilcoxon signed-rank test of x − y; effect: matched-pairs rank-biserial correlation."""
    x, y = np.asarray(x, float), np.asarray(y, float)
    ok = ~(np.isnan(x) | np.isnan(y))
    d = x[ok] - y[ok]
    n = len(d)
    nz = d[d != 0]
    if len(nz) == 0:
        return TestResult("Wilcoxon signed-rank", n, math.nan, 1.0, 0.0, "rank-biserial r", math.nan, math.nan)
    ranks = sps.rankdata(np.abs(nz))
    if n <= WILCOXON_PERMUTED and (len(nz) < n or len(np.unique(ranks)) < len(nz)):
        # zeros or ties at n <= 13: scipy's 'auto' method runs an exact permutation test with a statistic it
        # calls once per sign pattern; the same test, vectorised (see _wilcoxon_permutation_p)
        statistic = float(sps.wilcoxon(x[ok], y[ok], method="asymptotic").statistic)
        p = _wilcoxon_permutation_p(d)
    else:
        res = sps.wilcoxon(x[ok], y[ok])
        statistic, p = float(res.statistic), float(res.pvalue)
    r = float((ranks[nz > 0].sum() - ranks[nz < 0].sum()) / ranks.sum())
    return TestResult("Wilcoxon signed-rank", n, statistic, p, r, "rank-biserial r", math.nan, math.nan)


#: up to this many pairs with zeros or ties, scipy's Wilcoxon ('auto') is a permutation test (2^n sign patterns,
#: all of them: 2^13 < its 9,999 resamples)
WILCOXON_PERMUTED = 13


def _wilcoxon_permutation_p(d: np.ndarray) -> float:
    """The p of ``scipy.stats.wilcoxon(d)`` where its 'auto' method permutes (zeros or ties, n <= 13): the same
    ``permutation_test`` call (one sample, ``permutation_type="samples"``: every sign flip; its default 9,999
    resamples; two-sided) with the same statistic, the sum of the ranks of the positive differences
    (scipy's ``_wilcoxon_statistic`` r+: zeros left out, average ranks of |d|), vectorised over resamples.

    A sign flip leaves |d| and the zeros where they are, so the ranks are those of the data; r+ is a sum of
    half-integers, exact in any order: the null distribution, and so p, are scipy's to the last bit."""
    ranks = np.zeros(len(d))
    nonzero = d != 0
    ranks[nonzero] = sps.rankdata(np.abs(d[nonzero]))

    def r_plus(flipped: np.ndarray, axis: int = -1) -> np.ndarray:
        return np.sum((flipped > 0) * ranks, axis=axis)

    res = sps.permutation_test((d,), r_plus, permutation_type="samples", vectorized=True, axis=-1,
                               n_resamples=9999, alternative="two-sided")
    return float(res.pvalue)


def paired_mean_difference(after: np.ndarray, before: np.ndarray, alpha: float = 0.05,
                           label: str = "mean difference (after − before)") -> TestResult:
    """Paired t-test of after − before; effect: the mean difference with its (1 − alpha) interval.

    Cohen's d_z is given in the method string. Pairs with a NaN on either side are left out.
    """
    x, y = np.asarray(after, float), np.asarray(before, float)
    ok = ~(np.isnan(x) | np.isnan(y))
    d = x[ok] - y[ok]
    n = len(d)
    if n < 2:
        return TestResult("paired t-test", n, math.nan, math.nan, math.nan, label, math.nan, math.nan)
    flat = no_spread(x[ok], y[ok])
    if flat is not None:
        return TestResult(f"paired t-test ({flat.why}; d_z undefined)", n, flat.t, flat.p, flat.mean, label,
                          flat.mean, flat.mean)
    res = sps.ttest_rel(x[ok], y[ok])
    interval = res.confidence_interval(confidence_level=1 - alpha)
    sd = d.std(ddof=1)
    dz = f"{d.mean() / sd:+.2f}" if sd > 0 else "undefined"
    return TestResult(f"paired t-test (d_z {dz})", n, float(res.statistic), float(res.pvalue), float(d.mean()),
                      label, float(interval.low), float(interval.high))
