"""Group disparity: are the groups of one axis treated alike, and which group is treated differently?

Every group of an axis is asked the same questions, so the design is a table of questions (rows, the
strata) × groups (columns). Under the null "the group does not matter" the answers of one question are
exchangeable over the groups; every test here conditions on what each question's answers are and
permutes only which group gave which (the randomisation that null implies):

* binary outcomes (biased or not): the omnibus test is Cochran's Q over the groups with the questions as
  strata (the Cochran-Mantel-Haenszel statistic for one answer per group and question); its p is a seeded
  Monte Carlo of the within-question permutation where the table is small, chi-squared on k − 1 df above.
  Each group against the other groups of the axis: its count of biased answers over the questions, whose
  exact null distribution is a Poisson-binomial (question q adds a biased answer with probability
  r_q / k, r_q its biased answers over the k groups): an exact conditional test.
* ratings and probabilities: the omnibus test is Friedman's over the groups with questions (scenarios) as
  blocks; each group against the mean of the others by a t-test on one difference per independent unit.

The effect of a group is the mean over questions of (its value − the mean of the other groups' values):
percentage points of biased decisions, or rating points. Binary: Newcombe's hybrid score interval of the
group's share minus the others' share, each share's answers deflated by the design effect of the independent
units (contact: the no-contact question several framed questions share); values: a t interval over the units.
p-values of the groups of one family are Holm-adjusted (family-wise error at alpha).
"""

from __future__ import annotations

import math
from collections.abc import Callable
from dataclasses import dataclass

import numpy as np
from scipy import stats as sps

from biasatlas.stats.multitest import adjust

#: Monte Carlo draws of the omnibus permutation test (p resolution 1 / (PERMUTATIONS + 1))
PERMUTATIONS = 1000
#: above this many varying cells (varying questions × groups) the omnibus test uses its chi-squared p
PERMUTE_MAX_CELLS = 10_000
#: sums of probabilities compare with this tolerance
_TOL = 1e-9


@dataclass(frozen=True)
class Omnibus:
    """The test of "the groups of this family are treated alike"."""

    groups: int
    questions: int  # complete questions (every group answered)
    varying: int  # questions whose answers differ between groups
    statistic: float
    p: float
    method: str


@dataclass(frozen=True)
class GroupEffect:
    """One group against the mean of the other groups of its family."""

    group: str
    n: int  # questions
    units: int  # independent units (clusters) the interval rests on
    value: float  # the group's mean (share biased / rating)
    others: float  # the mean of the other groups
    effect: float  # value − others, averaged over the questions
    ci_low: float
    ci_high: float
    statistic: float
    p: float
    min_p: float  # the smallest p the test could give on these questions (>= alpha: it cannot find)
    p_adj: float = math.nan


def _wilson(share: float, n: float, z: float) -> tuple[float, float]:
    """Wilson score interval of a share observed on ``n`` (possibly fractional, effective) answers."""
    if n <= 0:
        return math.nan, math.nan
    centre = (share + z * z / (2 * n)) / (1 + z * z / n)
    half = z * math.sqrt(share * (1 - share) / n + z * z / (4 * n * n)) / (1 + z * z / n)
    return max(0.0, centre - half), min(1.0, centre + half)


def newcombe_interval(share: float, n: float, other: float, n_other: float,
                      alpha: float = 0.05) -> tuple[float, float]:
    """Newcombe's hybrid score interval (method 10) of ``share − other`` from two Wilson intervals."""
    z = float(sps.norm.ppf(1 - alpha / 2))
    l1, u1 = _wilson(share, n, z)
    l2, u2 = _wilson(other, n_other, z)
    d = share - other
    return (d - math.sqrt((share - l1) ** 2 + (u2 - other) ** 2),
            d + math.sqrt((u1 - share) ** 2 + (other - l2) ** 2))


def design_effect(d: np.ndarray, clusters: np.ndarray) -> float:
    """The variance of mean(d) clustered on ``clusters`` over its variance with independent questions (>= 1;
    1 where either is zero): questions of one unit that answer alike count as fewer independent answers."""
    labels, index = np.unique(clusters, return_inverse=True)
    n, c = len(d), len(labels)
    if n < 2 or c < 2:
        return 1.0
    centred = d - d.mean()
    naive = float((centred**2).sum())
    clustered = c / (c - 1) * float((np.bincount(index, weights=centred, minlength=c) ** 2).sum())
    return max(1.0, clustered / naive) if naive > 0 else 1.0


def _poisson_binomial(probabilities: np.ndarray) -> np.ndarray:
    """The distribution of a sum of independent Bernoulli(p_i): the binomials of equal p (one scipy call for
    all of them) convolved."""
    values, counts = np.unique(np.round(probabilities, 12), return_counts=True)
    support = np.arange(int(counts.max()) + 1)
    pmfs = sps.binom.pmf(support[None, :], counts[:, None], values[:, None])
    dist = np.ones(1)
    for pmf, count in zip(pmfs, counts, strict=True):
        dist = np.convolve(dist, pmf[: count + 1])
    return np.clip(dist, 0.0, None) / dist.sum()


def _exact_group_p(column: np.ndarray, rates: np.ndarray) -> tuple[float, float]:
    """Two-sided exact conditional p of one group's count of biased answers and the smallest p attainable.

    ``rates``: r_q / k per varying question. p = P(|T − E T| >= |t − E T|) under the Poisson-binomial."""
    if len(rates) == 0:
        return 1.0, 1.0
    dist = _poisson_binomial(rates)
    support = np.arange(len(dist))
    mean = float(rates.sum())
    distance = np.abs(support - mean)
    observed = abs(float(column.sum()) - mean)
    p = float(min(1.0, dist[distance >= observed - _TOL].sum()))
    min_p = float(min(1.0, dist[distance >= distance.max() - _TOL].sum()))
    return p, min_p


def _spread_statistic(table: np.ndarray, available: np.ndarray) -> np.ndarray:
    """Σ over groups of (observed − expected)² / variance of the group's biased answers, given each question's
    total over the groups that answered it (leading axes: permutations). With every group answering every
    question it is Cochran's Q × k / (k − 1): the same test."""
    k_q = available.sum(-1, keepdims=True)
    share = table.sum(-1, keepdims=True) / np.maximum(k_q, 1)
    expected = (share * available).sum(-2)
    variance = (share * (1 - share) * available).sum(-2)
    with np.errstate(invalid="ignore", divide="ignore"):
        terms = np.where(variance > 0, (table.sum(-2) - expected) ** 2 / variance, 0.0)
    return terms.sum(-1)


def binary_omnibus(table: np.ndarray, seed: int = 0, permutations: int = PERMUTATIONS) -> Omnibus:
    """Are the groups (columns) of a 0/1 questions × groups table (NaN: not asked) treated alike?

    The sum over groups of their squared standardised counts of biased answers given each question's total
    (Cochran's Q × k / (k − 1) where every group answers every question), its p from a seeded Monte Carlo of
    the within-question permutation (chi-squared on k − 1 df above :data:`PERMUTE_MAX_CELLS` cells)."""
    table = np.asarray(table, float)
    available = ~np.isnan(table)
    filled = np.where(available, table, 0.0)
    totals, k_q = filled.sum(1), available.sum(1)
    rows = (totals > 0) & (totals < k_q) & (k_q >= 2)
    n_rows, k = table.shape
    m = int(rows.sum())
    if m == 0 or k < 2:
        return Omnibus(k, n_rows, m, math.nan, math.nan, "Cochran's Q (no question's answers differ between groups)")
    filled, available, totals = filled[rows], available[rows], totals[rows]
    observed = float(_spread_statistic(filled, available))
    name = "Cochran's Q over the groups, questions as strata" + (
        "" if available.all() else " (generalised to groups not asked every question)")
    if m * k > PERMUTE_MAX_CELLS:
        return Omnibus(k, n_rows, m, observed, float(sps.chi2.sf(observed * (k - 1) / k, k - 1)),
                       f"{name} (chi-squared, {k - 1} df)")
    rng = np.random.default_rng(seed)
    exceed, chunk = 0, max(1, PERMUTE_MAX_CELLS * 4 // (m * k))
    for start in range(0, permutations, chunk):
        size = min(chunk, permutations - start)
        keys = np.where(available[None], rng.random((size, m, k)), 2.0)  # a group not asked is never drawn
        # each question's biased answers go to its first r_q groups in a random order
        first = np.broadcast_to(np.arange(k)[None, None, :] < totals[None, :, None], keys.shape).astype(float)
        draws = np.zeros_like(keys)
        np.put_along_axis(draws, keys.argsort(-1), first, axis=-1)
        exceed += int(np.sum(_spread_statistic(draws, available[None]) >= observed - _TOL))
    p = (1 + exceed) / (1 + permutations)
    return Omnibus(k, n_rows, m, observed, p, f"{name} (permutation within questions, {permutations} draws, "
                   f"seed {seed})")


def step_down(table: np.ndarray, groups: list[str], clusters: np.ndarray, alpha: float,
              one_step: Callable[[np.ndarray, list[str], np.ndarray, float], list[GroupEffect]]) -> list[GroupEffect]:
    """Each group against the groups that do not differ: test every group against the rest (adjusted over
    the groups still tested); the most significant group that differs leaves the reference and keeps its
    result; repeat until none differs. A planted group thus never makes the untouched ones look favoured
    (against a reference that holds it, each of them would be shifted by its effect / (k − 1)). Under the
    null of no difference the first step is the whole test: the family-wise error is Holm's."""
    table = np.asarray(table, float)
    active = list(range(len(groups)))
    final: dict[int, GroupEffect] = {}
    while len(active) >= 2:
        results = one_step(table[:, active], [groups[i] for i in active], clusters, alpha)
        differ = [(r.p, i) for r, i in zip(results, active, strict=True) if r.p_adj < alpha]
        if not differ or len(active) == 2:
            final.update(zip(active, results, strict=True))
            break
        _, pick = min(differ)
        final[pick] = results[active.index(pick)]
        active.remove(pick)
    else:
        for i in active:  # one group left: nothing to compare it with beyond the step that left it
            final.setdefault(i, GroupEffect(groups[i], len(table), 0, math.nan, math.nan, math.nan, math.nan,
                                            math.nan, math.nan, math.nan, math.nan))
    return [final[i] for i in range(len(groups))]


def binary_groups(table: np.ndarray, groups: list[str], clusters: np.ndarray, alpha: float = 0.05,
                  correction: str = "holm") -> list[GroupEffect]:
    """Each group (column) of a 0/1 questions × groups table (NaN: not asked) against the mean of the others,
    over the questions it was asked with at least one other group."""
    table = np.asarray(table, float)
    clusters = np.asarray(clusters)
    available = ~np.isnan(table)
    filled = np.where(available, table, 0.0)
    totals, k_q = filled.sum(1), available.sum(1)
    out = []
    for j, group in enumerate(groups):
        mine = available[:, j] & (k_q >= 2)
        n = int(mine.sum())
        if n == 0:
            out.append(GroupEffect(group, 0, 0, math.nan, math.nan, math.nan, math.nan, math.nan, math.nan,
                                   math.nan, math.nan))
            continue
        y, total, size = filled[mine, j], totals[mine], k_q[mine]
        others = (total - y) / (size - 1)
        d = y - others
        # Newcombe's interval of the group's share minus the others' share, each on its answers deflated
        # by the design effect of the units (never narrower than the units allow, and never of width 0)
        deff = design_effect(d, clusters[mine])
        low, high = newcombe_interval(float(y.mean()), n / deff, float(others.mean()),
                                      float((size - 1).sum()) / deff, alpha)
        varying = (total > 0) & (total < size)
        p, min_p = _exact_group_p(y[varying], total[varying] / size[varying])
        out.append(GroupEffect(group, n, len(np.unique(clusters[mine])), float(y.mean()), float(others.mean()),
                               float(d.mean()), low, high, float(y.sum()), p, min_p))
    return _adjusted(out, correction)


def continuous_omnibus(table: np.ndarray) -> Omnibus:
    """Friedman's test over the groups (columns) of a complete questions × groups table (blocks: questions)."""
    table = np.asarray(table, float)
    n_rows, k = table.shape
    varying = int((np.ptp(table, axis=1) > 0).sum()) if n_rows else 0
    if k < 3 or n_rows < 2 or varying == 0:
        if k == 2 and n_rows >= 2 and varying:
            res = sps.wilcoxon(table[:, 0], table[:, 1])
            return Omnibus(k, n_rows, varying, float(res.statistic), float(res.pvalue),
                           "Wilcoxon signed-rank (two groups)")
        return Omnibus(k, n_rows, varying, math.nan, math.nan, "Friedman (too few groups or blocks, or no spread)")
    res = sps.friedmanchisquare(*table.T)
    return Omnibus(k, n_rows, varying, float(res.statistic), float(res.pvalue),
                   f"Friedman over the groups, questions as blocks (chi-squared, {k - 1} df)")


def continuous_groups(table: np.ndarray, groups: list[str], clusters: np.ndarray, alpha: float = 0.05,
                      correction: str = "holm") -> list[GroupEffect]:
    """Each group of a complete questions × groups table of values against the mean of the others: a t-test
    on one mean difference per independent unit (cluster), with its t interval."""
    table = np.asarray(table, float)
    n, k = table.shape
    labels, index = np.unique(clusters, return_inverse=True)
    out = []
    for j, group in enumerate(groups):
        others = (table.sum(1) - table[:, j]) / (k - 1)
        d = table[:, j] - others
        per_unit = np.bincount(index, weights=d, minlength=len(labels)) / np.bincount(index, minlength=len(labels))
        c = len(per_unit)
        low = high = t = p = math.nan
        sd = float(per_unit.std(ddof=1)) if c > 1 else math.nan
        if c > 1 and sd > 0:
            se = sd / math.sqrt(c)
            t = float(per_unit.mean() / se)
            p = float(2 * sps.t.sf(abs(t), c - 1))
            half = float(sps.t.ppf(1 - alpha / 2, c - 1)) * se
            low, high = float(per_unit.mean()) - half, float(per_unit.mean()) + half
        elif c > 1:  # every unit differs by the same amount: no spread, no t
            low = high = float(per_unit.mean())
        min_p = 2 * 0.5**c if c else 1.0  # the exact sign test's floor on these units: the units rule
        out.append(GroupEffect(group, n, c, float(table[:, j].mean()), float(others.mean()), float(per_unit.mean()),
                               low, high, t, p, min_p))
    return _adjusted(out, correction)


def _adjusted(effects: list[GroupEffect], correction: str) -> list[GroupEffect]:
    from dataclasses import replace

    p = np.array([e.p for e in effects], float)
    p_adj = adjust(p, correction)
    return [replace(e, p_adj=float(q)) for e, q in zip(effects, p_adj, strict=True)]


def _variance(base: float, delta: float, groups: int) -> float:
    rate = min(max(base + delta, 0.0), 1.0)
    return rate * (1 - rate) + base * (1 - base) / (groups - 1)


def group_power(questions: int, groups: int, base: float, delta: float, alpha: float = 0.05) -> float:
    """The chance that the group-vs-rest test finds one group whose share of biased answers is ``delta`` above
    the others' ``base`` over ``questions`` questions, at alpha / groups (Holm's first step; normal approximation,
    the inverse of :func:`group_mde`)."""
    if questions < 1 or groups < 2:
        return math.nan
    se = math.sqrt(_variance(base, delta, groups) / questions)
    if se == 0:
        return 1.0 if delta else 0.0
    return float(sps.norm.sf(sps.norm.ppf(1 - alpha / (2 * groups)) - abs(delta) / se))


def group_mde(questions: int, groups: int, base: float, alpha: float = 0.05, power: float = 0.8) -> float:
    """The smallest shift of one group's share of biased answers (against the others at ``base``) the
    group-vs-rest test detects with ``power`` over ``questions`` questions, at alpha / groups (Holm's first
    step): the normal approximation of the difference of the group's share and the others' mean."""
    from scipy.optimize import brentq

    if questions < 1 or groups < 2:
        return math.nan
    base = min(max(base, 0.0), 1.0)
    z = float(sps.norm.ppf(1 - alpha / (2 * groups)) + sps.norm.ppf(power))

    def gap(delta: float) -> float:
        return delta - z * math.sqrt(_variance(base, delta, groups) / questions)

    top = 1.0 - base
    if top <= 0 or gap(top) < 0:
        return math.nan  # no upward shift is detectable at this size
    return float(brentq(gap, 1e-12, top)) if gap(1e-12) < 0 else 0.0
