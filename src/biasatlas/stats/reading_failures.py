"""Do reading failures (unreadable, unclear, refused answers) differ between the groups asked the same questions?

An answer the readers cannot turn into an option or a rating is left out of every rate; when one group's answers
fail more often than another's (a model that refuses to answer for one religion), the failure is a finding of its
own and the groups' rates are computed on different subsets of the questions.

Every group is asked the same questions (prompt templates, scenarios), so the test is stratified by question:
within a question, under the null that the group does not change the chance of a failure, the failed answers are
spread over the groups like draws without replacement (the permutation null of
:mod:`biasatlas.stats.clustered`). The statistic is the Cochran-Mantel-Haenszel general association statistic of
the groups x (failed, read) tables with questions as strata (chi-squared on G - 1 df); each group against the
rest is the 2 x 2 CMH statistic of that group, as a z. Their p-values come from a seeded Monte Carlo of the
within-question permutation (:data:`~biasatlas.stats.clustered.PERMUTATIONS` draws) while at most
:data:`~biasatlas.stats.clustered.EXACT_Q_MAX` questions hold a failure and a read answer, from the chi-squared
and normal laws above that. The per-group p-values are Holm-adjusted over the axis's groups.

Per group: its failure rate (Wilson 95% interval), the rest's, their ratio, and the difference in points with
Newcombe's interval (of independent samples: the pairing by question only narrows the true interval).
"""

from __future__ import annotations

import math
from collections.abc import Iterable
from dataclasses import dataclass, field
from typing import TYPE_CHECKING

import numpy as np
from scipy import stats as sps

from biasatlas.stats.clustered import EXACT_Q_MAX, PERMUTATIONS, TOL
from biasatlas.stats.multitest import holm

if TYPE_CHECKING:
    import pandas as pd

ALPHA = 0.05
#: up to this many informative questions each group's p is exact (a convolution per group); above it normal
EXACT_GROUP_MAX = 5000
#: strata up to this many answers are permuted with numpy's "count" method of drawing
COUNT_METHOD_MAX = 1000


@dataclass(frozen=True)
class GroupFailure:
    """One group's failure rate against the rest of its axis, in percent; ``p_adj``: Holm over the groups."""

    group: str
    n: int
    failures: int
    pct: float
    ci_low: float
    ci_high: float
    rest_pct: float
    ratio: float | None  # the group's rate over the rest's (None: the rest never failed)
    diff_pp: float
    diff_ci_low: float
    diff_ci_high: float
    p: float | None
    p_adj: float | None
    differs: bool


@dataclass(frozen=True)
class FailureTest:
    """The groups' failure rates and whether they differ (``p`` of the omnibus test; None: nothing to test)."""

    n: int
    failures: int
    informative: int  # questions holding both a failed and a read answer of at least two groups
    statistic: float | None
    dof: int
    p: float | None
    method: str
    groups: list[GroupFailure] = field(default_factory=list)

    @property
    def differs(self) -> bool:
        """Some group's failure rate differs from the rest's (Holm over the groups: a level-alpha test of all
        groups alike)."""
        return any(g.differs for g in self.groups)


def _counts(failed: np.ndarray, group_index: np.ndarray, stratum_index: np.ndarray, n_groups: int,
            n_strata: int) -> tuple[np.ndarray, np.ndarray]:
    """(answers, failures) per stratum x group."""
    cell = stratum_index * n_groups + group_index
    size = n_strata * n_groups
    n = np.bincount(cell, minlength=size).reshape(n_strata, n_groups)
    x = np.bincount(cell, weights=failed, minlength=size).reshape(n_strata, n_groups).astype(int)
    return n, x


def _cmh(x: np.ndarray, n: np.ndarray) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """Deviations of the failures from their permutation means, summed over strata, per group (last axis);
    their covariance matrix (strata x groups input ``n``), and its diagonal."""
    total = n.sum(-1)
    fails = x.sum(-1)
    dev = (x - n * (fails / total)[..., None]).sum(-2)
    scale = fails * (total - fails) / (total * total * np.maximum(total - 1, 1))
    cov = np.diag((scale * total) @ n) - n.T @ (scale[:, None] * n)  # strata x groups: no strata x groups^2
    return dev, cov, np.diag(cov).copy()


def _pseudo_inverse(cov: np.ndarray) -> tuple[np.ndarray, int]:
    """The Moore-Penrose inverse of a symmetric covariance matrix and its rank (the test's df)."""
    values, vectors = np.linalg.eigh(cov)
    keep = values > values.max(initial=0.0) * cov.shape[0] * np.finfo(float).eps
    inverse = (vectors[:, keep] / values[keep]) @ vectors[:, keep].T
    return inverse, int(keep.sum())


def _statistics(dev: np.ndarray, inverse: np.ndarray, diag: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """The omnibus statistic and each group's z (leading axes: permutations)."""
    omnibus = np.einsum("...i,ij,...j->...", dev, inverse, dev)
    with np.errstate(invalid="ignore", divide="ignore"):
        z = np.where(diag > 0, dev / np.sqrt(np.where(diag > 0, diag, 1.0)), 0.0)
    return omnibus, z


def _permuted(x: np.ndarray, n: np.ndarray, rng: np.random.Generator, permutations: int) -> np.ndarray:
    """Permutation draws of the failures per group, summed over strata: (permutations, groups)."""
    drawn = np.zeros((permutations, n.shape[1]))
    fails = x.sum(1)
    single = fails == 1  # the common case of rare failures: one draw of a group, vectorised over strata
    if single.any():
        ones = n[single]
        m1, groups = ones.shape
        # each stratum's cumulative shares, shifted by its index: one sorted array to search every draw in
        cum = (np.cumsum(ones, 1) / ones.sum(1, keepdims=True) + np.arange(m1)[:, None]).ravel()
        u = rng.random((permutations, m1)) + np.arange(m1)
        picked = np.searchsorted(cum, u.ravel(), side="right") - np.tile(np.arange(m1) * groups, permutations)
        picked = np.minimum(picked, groups - 1)  # a draw of exactly 1.0 at a share's end
        rows = np.repeat(np.arange(permutations), m1)
        drawn += np.bincount(rows * groups + picked, minlength=permutations * groups).reshape(permutations, groups)
    for counts, f in zip(n[~single], fails[~single], strict=True):
        # "count" draws in time of the stratum's size: far faster for the few answers of one question
        if counts.sum() <= COUNT_METHOD_MAX:
            drawn += rng.multivariate_hypergeometric(counts, int(f), size=permutations, method="count")
        else:
            drawn += rng.multivariate_hypergeometric(counts, int(f), size=permutations, method="marginals")
    return drawn


def _exact_group_p(x: np.ndarray, n: np.ndarray) -> np.ndarray:
    """Each group's exact conditional two-sided p against the rest: its failures summed over strata are a sum
    of independent hypergeometric counts under the within-question permutation null (the exact stratified
    2 x 2 test of R's ``mantelhaen.test(exact = TRUE)``); p = P(|X - E X| >= |x - E X|). The distributions of
    every group are convolved together, stratum by stratum (rows: groups)."""
    total, fails = n.sum(1), x.sum(1)
    groups = n.shape[1]
    caps = np.minimum(n, fails[:, None])  # the most failures a group can hold in a stratum
    dist = np.zeros((groups, int(caps.sum(0).max()) + 1))
    dist[:, 0] = 1.0
    support = np.arange(int(caps.max()) + 1)
    pmfs = sps.hypergeom.pmf(support[None, None, :], total[:, None, None], n[:, :, None], fails[:, None, None])
    for s in range(n.shape[0]):
        top = int(caps[s].max())
        pmf = pmfs[s]
        new = np.zeros_like(dist)
        for k in range(top + 1):  # a stratum holds few failures: a short loop over its support
            new[:, k:] += dist[:, : dist.shape[1] - k] * pmf[:, k : k + 1]
        dist = new
    mean = (n * (fails / total)[:, None]).sum(0)
    observed = np.abs(x.sum(0) - mean)
    values = np.abs(np.arange(dist.shape[1])[None, :] - mean[:, None])
    p = np.where(values >= observed[:, None] - TOL, dist, 0.0).sum(1)
    alone = (n == total[:, None]) | (n == 0)  # a group with no rest in every stratum: nothing to compare
    return np.where(alone.all(0), np.nan, np.minimum(p, 1.0))


def _rates(n: np.ndarray, fails: np.ndarray) -> dict[str, np.ndarray]:
    """Per group (arrays): its rate in % with Wilson's interval, the rest's, their ratio, and the difference in
    points with Newcombe's interval."""
    from statsmodels.stats.proportion import confint_proportions_2indep, proportion_confint

    rest_n, rest_fails = n.sum() - n, fails.sum() - fails
    low, high = proportion_confint(fails, n, alpha=ALPHA, method="wilson")
    with np.errstate(invalid="ignore", divide="ignore"):
        pct, rest = 100 * fails / n, np.where(rest_n > 0, 100 * rest_fails / np.maximum(rest_n, 1), np.nan)
        ratio = np.where(rest_fails > 0, pct / np.where(rest > 0, rest, 1.0), np.nan)
    d_low, d_high = np.full(len(n), np.nan), np.full(len(n), np.nan)
    both = rest_n > 0
    if both.any():
        d_low[both], d_high[both] = confint_proportions_2indep(fails[both], n[both], rest_fails[both], rest_n[both],
                                                               method="newcomb", compare="diff", alpha=ALPHA)
    return {"pct": pct, "ci_low": 100 * np.asarray(low), "ci_high": 100 * np.asarray(high), "rest_pct": rest,
            "ratio": ratio, "diff_pp": pct - rest, "diff_ci_low": 100 * d_low, "diff_ci_high": 100 * d_high}


def _texts(values: Iterable[object]) -> pd.Series:
    import pandas as pd

    series = values if isinstance(values, pd.Series) else pd.Series(list(values))
    return series.astype(str).reset_index(drop=True)


def group_failure_test(failed: Iterable[bool], group: Iterable[object], stratum: Iterable[object], *,
                       alpha: float = ALPHA, seed: int = 0, permutations: int = PERMUTATIONS) -> FailureTest:
    """Whether the failure rate differs between groups, stratified by question (one entry per answer).

    ``failed`` (the answer was not read: the failure kind tested), ``group`` (the group asked about) and
    ``stratum`` (the question: what every group is asked alike) per answer.
    """
    import pandas as pd

    failed_a = np.asarray(list(failed), dtype=float)
    group_index, groups = pd.factorize(_texts(group), sort=True)
    stratum_index, strata = pd.factorize(_texts(stratum))
    n, x = _counts(failed_a, group_index, stratum_index, len(groups), len(strata))
    total_n, total_x = n.sum(0), x.sum(0)
    all_n, all_x = int(total_n.sum()), int(total_x.sum())
    sizes = n.sum(1)
    fails = x.sum(1)
    keep = (fails > 0) & (fails < sizes) & ((n > 0).sum(1) > 1)
    n_i, x_i = n[keep], x[keep]
    m = int(keep.sum())
    statistic: float | None = None
    dof = 0
    p: float | None = None
    p_groups = np.full(len(groups), np.nan)
    method = "no question holds both a failed and a read answer of two groups: no test"
    if m and len(groups) > 1:
        dev, cov, diag = _cmh(x_i, n_i)
        inverse, dof = _pseudo_inverse(cov)
        observed, z = _statistics(dev, inverse, diag)
        statistic = float(observed)
        name = "Cochran-Mantel-Haenszel general association, questions as strata"
        if m > EXACT_Q_MAX:
            p = float(sps.chi2.sf(observed, max(dof, 1)))
            method = f"{name} (chi-squared, {dof} df)"
        else:
            drawn = _permuted(x_i, n_i, np.random.default_rng(seed), permutations)
            dev_star = drawn - (n_i * (x_i.sum(1) / n_i.sum(1))[:, None]).sum(0)
            omnibus_star, _ = _statistics(dev_star, inverse, diag)
            p = (1 + int(np.sum(omnibus_star >= observed - TOL))) / (1 + permutations)
            method = f"{name} (within-question permutation, {permutations} draws, seed {seed})"
        if m > EXACT_GROUP_MAX:
            p_groups = np.where(diag > 0, 2 * sps.norm.sf(np.abs(z)), np.nan)
            method += "; each group vs the rest: stratified 2 x 2 CMH z (normal), Holm"
        else:
            p_groups = np.where(diag > 0, _exact_group_p(x_i, n_i), np.nan)
            method += "; each group vs the rest: exact conditional stratified test, Holm"
    tested = ~np.isnan(p_groups)
    p_adj = np.full(len(groups), np.nan)
    if tested.any():
        p_adj[tested] = holm(p_groups[tested])
    present = total_n > 0
    rates = _rates(total_n[present], total_x[present])
    rows = []
    for j, i in enumerate(np.flatnonzero(present)):
        adjusted = None if np.isnan(p_adj[i]) else float(p_adj[i])
        ratio = float(rates["ratio"][j])
        rows.append(GroupFailure(
            group=str(groups[int(i)]), n=int(total_n[i]), failures=int(total_x[i]),
            **{k: float(v[j]) for k, v in rates.items() if k != "ratio"},
            ratio=None if math.isnan(ratio) else ratio,
            p=None if np.isnan(p_groups[i]) else float(p_groups[i]), p_adj=adjusted,
            differs=adjusted is not None and adjusted < alpha))
    return FailureTest(all_n, all_x, m, statistic, dof, p, method, rows)


def exceeds_effect(failure_pct: Iterable[float], effect_pp: float) -> bool:
    """Whether groups whose reading-failure rates are ``failure_pct`` (in %) differ in them by more than the
    effect reported between them (``effect_pp``, in points): then the effect may be made by what was not read."""
    rates = [float(r) for r in failure_pct if r is not None and not math.isnan(float(r))]
    if len(rates) < 2 or effect_pp is None or math.isnan(float(effect_pp)):
        return False
    return max(rates) - min(rates) > abs(float(effect_pp))
