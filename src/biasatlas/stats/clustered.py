"""Exact conditional tests of paired binary answers whose reference answer may be shared.

In the nine MMHB language packs the no-contact question does not change with the contact principle: one
no-contact answer is the reference of several prompt sets (a *question*, the independent unit). Pairing it
with each set as if the pairs were independent counts that answer several times and inflates the level.

The tests here condition on what each question's answers are and permute only which of them played which
role, the permutation distribution of the randomisation that "framing does not matter" implies: under
that null the answers of one question (its no-contact answer and its framed answers) are exchangeable.

* :func:`shared_reference_test`: one framing against no contact. The statistic is McNemar's c − b over the
  prompt sets; its exact null distribution is a convolution over questions. With one set per question it
  is exactly McNemar's exact test (a test checks it against statsmodels).
* :func:`cochran_exact`: Cochran's Q over the framings of unshared sets, with the exact conditional p
  (each differing set's pattern permuted over the framings) where the number of differing sets is small,
  and the chi-squared approximation above that.
* :func:`shared_cochran`: the three framings when sets share their no-contact answer: the Cochran-Mantel-
  Haenszel general association statistic with questions as strata (the generalisation of Cochran's Q to
  several answers per framing), chi-squared for many questions, a seeded Monte Carlo permutation for few.
"""

from __future__ import annotations

import math
from dataclasses import dataclass

import numpy as np
from scipy import stats as sps

#: up to this many differing sets Cochran's Q gets its exact conditional p; above it the chi-squared one
EXACT_Q_MAX = 200
#: Monte Carlo permutations of the shared-question Cochran test (p resolution 1 / (PERMUTATIONS + 1))
PERMUTATIONS = 2000
#: a p computed from sums of probabilities compares observed and permuted statistics with this tolerance
TOL = 1e-9


@dataclass(frozen=True)
class SharedTest:
    """A framing against no contact over questions (units) that may hold several prompt sets."""

    n_sets: int
    n_units: int
    varying_units: int
    b: int  # sets biased under no contact only
    c: int  # sets biased under the framing only
    statistic: float  # c − b
    p: float
    min_p: float  # the smallest p these questions' answers could give: below alpha or the test cannot find
    effect: float  # (c − b) / n_sets: the change in the share of biased sets
    ci_low: float
    ci_high: float


def _class_sum(s: np.ndarray, k: np.ndarray) -> tuple[np.ndarray, int]:
    """The null distribution of T = sum over questions of T_u, T_u = s − (k + 1) B_u with B_u ~ Bernoulli(s / (k + 1))
    (the no-contact answer is the biased one): probabilities on the integer support from its minimum, and
    that minimum. Questions of one (s, k) are a scaled binomial; the classes are convolved (FFT)."""
    from scipy.signal import fftconvolve

    dist = np.ones(1)
    start = 0
    for (si, ki), count in zip(*np.unique(np.stack([s, k], 1), axis=0, return_counts=True), strict=True):
        si, ki, count = int(si), int(ki), int(count)
        pmf = sps.binom.pmf(np.arange(count + 1), count, si / (ki + 1))
        lattice = np.zeros(count * (ki + 1) + 1)
        lattice[:: ki + 1] = pmf[::-1]  # index j*(k+1) holds B = count - j: T = count*s - (k+1)*B
        start += count * si - count * (ki + 1)
        dist = np.clip(fftconvolve(dist, lattice), 0.0, None)
    return dist / dist.sum(), start


def shared_reference_test(x: np.ndarray, y: np.ndarray, unit: np.ndarray, alpha: float = 0.05) -> SharedTest:
    """Exact test of framing vs no contact on prompt sets that may share their no-contact answer.

    ``x`` (biased under no contact, 0/1), ``y`` (biased under the framing, 0/1) and ``unit`` (the question
    each set's no-contact answer belongs to) per prompt set; every set of a unit has the same ``x``. Two-sided
    p = P(|T| >= |t|) under the within-question permutation null (E T = 0). The interval of the effect is
    a Wald interval with the cluster-robust (question-level) variance of the ratio estimator.
    """
    x, y = np.asarray(x, int), np.asarray(y, int)
    units, index = np.unique(np.asarray(unit), return_inverse=True)
    k = np.bincount(index, minlength=len(units))
    y_sum = np.bincount(index, weights=y, minlength=len(units)).astype(int)
    x_unit = np.zeros(len(units), int)
    x_unit[index] = x
    s = x_unit + y_sum
    t_unit = y_sum - k * x_unit
    observed = int(t_unit.sum())
    varying = (s > 0) & (s < k + 1)
    n_sets = len(x)
    b, c = int(((x == 1) & (y == 0)).sum()), int(((x == 0) & (y == 1)).sum())
    if not varying.any():
        p = min_p = 1.0
    else:
        sv, kv = s[varying], k[varying]
        # no-contact answer biased (probability s / (k + 1)): T = s - 1 - k; else T = s
        dist, start = _class_sum(sv, kv)
        support = np.arange(start, start + len(dist))
        p = float(min(1.0, dist[np.abs(support) >= abs(observed) - TOL].sum()))
        extreme = max(abs(int(support[0])), abs(int(support[-1])))
        min_p = float(min(1.0, dist[np.abs(support) >= extreme - TOL].sum()))
    effect = observed / n_sets if n_sets else math.nan
    low = high = math.nan
    if len(units) > 1 and n_sets:
        resid = t_unit - effect * k
        se = math.sqrt(len(units) / (len(units) - 1) * float((resid**2).sum())) / n_sets
        z = float(sps.norm.ppf(1 - alpha / 2))
        low, high = max(-1.0, effect - z * se), min(1.0, effect + z * se)
    return SharedTest(n_sets, len(units), int(varying.sum()), b, c, float(observed), p, min_p, effect, low, high)


def _q(columns: np.ndarray, row_sq: float, n: float, k: int) -> np.ndarray:
    """Cochran's Q from column totals (last axis), the sum of squared row totals and the grand total."""
    denominator = k * n - row_sq
    with np.errstate(invalid="ignore", divide="ignore"):
        return (k - 1) * (k * (columns**2).sum(-1) - n * n) / denominator


@dataclass(frozen=True)
class QTest:
    """Cochran's Q with the p that its method name says."""

    n: int
    varying: int
    statistic: float
    p: float
    min_p: float
    method: str


def cochran_exact(data: np.ndarray) -> QTest:
    """Cochran's Q over the columns of a 0/1 table (rows: units, no missing), exact conditional p.

    Conditioning on each row's total, a differing row of total r takes each of its C(k, r) patterns with
    equal probability under the null; Q depends on the column totals only, whose exact distribution is a
    convolution over the differing rows (up to :data:`EXACT_Q_MAX` of them; beyond, chi-squared on k − 1).
    """
    data = np.asarray(data, int)
    n_rows, k = data.shape
    totals = data.sum(1)
    varying = data[(totals > 0) & (totals < k)]
    m = len(varying)
    if m == 0:
        return QTest(n_rows, 0, math.nan, math.nan, math.nan, "Cochran's Q (no row differs)")
    columns = varying.sum(0).astype(float)
    rows = varying.sum(1)
    n, row_sq = float(rows.sum()), float((rows**2).sum())
    observed = float(_q(columns, row_sq, n, k))
    if m > EXACT_Q_MAX or k != 3:
        p = float(sps.chi2.sf(observed, k - 1))
        return QTest(n_rows, m, observed, p, math.nan, "Cochran's Q (chi-squared)")
    # exact: the distribution of (C1, C2) (C3 follows) over the differing rows' equally likely patterns
    dist = np.zeros((m + 1, m + 1))
    dist[0, 0] = 1.0
    patterns = {1: [(1, 0), (0, 1), (0, 0)], 2: [(1, 1), (1, 0), (0, 1)]}  # (c1, c2) of each pattern of r
    for r in rows:
        new = np.zeros_like(dist)
        for d1, d2 in patterns[int(r)]:
            new[d1:, d2:] += dist[: m + 1 - d1, : m + 1 - d2] / 3
        dist = new
    c1, c2 = np.meshgrid(np.arange(m + 1), np.arange(m + 1), indexing="ij")
    c3 = n - c1 - c2
    q = _q(np.stack([c1, c2, c3], -1).astype(float), row_sq, n, k)
    possible = (dist > 0) & (c3 >= 0)
    p = float(dist[possible & (q >= observed - TOL)].sum())
    min_p = float(dist[possible & (q >= q[possible].max() - TOL)].sum())
    return QTest(n_rows, m, observed, min(1.0, p), min(1.0, min_p), "Cochran's Q (exact conditional)")


def _cmh_parts(x: np.ndarray, pos: np.ndarray, neg: np.ndarray, k: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """Per question: the deviations (S_none, S_pos) − E under the permutation null, and their covariances."""
    total = x + pos + neg
    n = 1 + 2 * k
    share = total / n
    dev = np.stack([x - share, pos - k * share], -1)
    scale = total * (n - total) / (n * n * np.maximum(n - 1, 1))
    cov = np.empty((*scale.shape, 2, 2))
    cov[..., 0, 0] = scale * (n - 1)
    cov[..., 0, 1] = cov[..., 1, 0] = scale * (-k)
    cov[..., 1, 1] = scale * (n * k - k * k)
    return dev, cov


def _cmh(dev: np.ndarray, cov: np.ndarray) -> np.ndarray:
    """d' V^-1 d over the last question axis (leading axes: permutations)."""
    d, v = dev.sum(-2), cov.sum(-3)
    with np.errstate(invalid="ignore", divide="ignore"):
        return np.einsum("...i,...ij,...j->...", d, np.linalg.pinv(v), d)


def shared_cochran(none: np.ndarray, positive: np.ndarray, negative: np.ndarray, unit: np.ndarray,
                   seed: int = 0, permutations: int = PERMUTATIONS) -> QTest:
    """Cochran's Q generalised to prompt sets that share their no-contact answer within a question (``unit``).

    The Cochran-Mantel-Haenszel general association statistic with questions as strata: each question's
    counts of biased answers under none (1 answer), positive (k) and negative (k), against their
    permutation means and (hypergeometric) covariances. Chi-squared on 2 df from :data:`EXACT_Q_MAX`
    differing questions on; below that, its p from a seeded Monte Carlo of the same permutation
    (``(1 + #{W* >= W}) / (1 + permutations)``), drawing each question's counts directly.
    """
    none, positive, negative = (np.asarray(a, int) for a in (none, positive, negative))
    units, index = np.unique(np.asarray(unit), return_inverse=True)
    k = np.bincount(index, minlength=len(units))
    x = np.zeros(len(units), int)
    x[index] = none
    pos = np.bincount(index, weights=positive, minlength=len(units)).astype(int)
    neg = np.bincount(index, weights=negative, minlength=len(units)).astype(int)
    total = x + pos + neg
    varying = (total > 0) & (total < 1 + 2 * k)
    m = int(varying.sum())
    if m == 0:
        return QTest(len(none), 0, math.nan, math.nan, math.nan, "Cochran-Mantel-Haenszel (no question differs)")
    x, pos, neg, k, total = x[varying], pos[varying], neg[varying], k[varying], total[varying]
    observed = float(_cmh(*_cmh_parts(x, pos, neg, k)))
    name = "Cochran-Mantel-Haenszel general association, questions as strata"
    if m > EXACT_Q_MAX:
        return QTest(len(none), m, observed, float(sps.chi2.sf(observed, 2)), math.nan, f"{name} (chi-squared, 2 df)")
    rng = np.random.default_rng(seed)
    n = 1 + 2 * k
    x_star = (rng.random((permutations, m)) < total / n).astype(int)
    rest = total - x_star
    pos_star = rng.hypergeometric(np.maximum(rest, 0), np.maximum(n - 1 - rest, 0), np.broadcast_to(k, rest.shape))
    neg_star = rest - pos_star
    dev, cov = _cmh_parts(x_star, pos_star, neg_star, np.broadcast_to(k, rest.shape))
    w_star = _cmh(dev, cov)
    exceed = int(np.sum(np.nan_to_num(w_star, nan=0.0) >= observed - TOL))
    return QTest(len(none), m, observed, (1 + exceed) / (1 + permutations), math.nan,
                 f"{name} (permutation, {permutations} draws, seed {seed})")
