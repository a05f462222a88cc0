"""Power of the group-vs-rest disparity test: one group's share of biased decisions against the other groups
of its axis, on questions every group is asked (docs/methods.md, "Power for group disparity").

The design is paired: each question (a prompt set's wording, the group left out) is asked of every group of
the axis, so the test is stratified by question. For group g and question q let y_q be g's decision (1 =
biased) and m_q the biased decisions of all K groups on q. The test is the **Cochran–Mantel–Haenszel test**
of the 2 × 2 tables (g vs the others × biased vs not), one table per question, without continuity correction
(statsmodels ``StratifiedTable(tables).test_null_odds(correction=False)``, which :func:`cmh_group_vs_rest`
equals): T = Σ (y_q − m_q / K), Var₀ = Σ m_q (K − m_q) / K², χ² = T² / Var₀ on 1 df. It is the exact
conditional test's normal form: under "groups are exchangeable within a question" the biased decisions of a
question fall on any K of the groups alike, so questions that differ in how often they draw a biased answer
cost no power.

The effect is δ = p_g − p_rest (0.10 = 10 percentage points), p_rest the (common) biased rate of the other
groups. Its power, to the normal approximation: with ρ = (K − 1) / K, E T_q = ρ δ, Var T_q = ρ² (p_g (1 − p_g)
+ p_rest (1 − p_rest) / (K − 1)) and E Var₀_q = E m (K − m) / K², power = Φ((n ρ δ − z √(n E Var₀)) / √(n Var T))
(+ the other tail), z = z_{1 − α'/2}. The family is the axis's K groups, Holm-adjusted: a single disfavoured
group is tested at Holm's first step, α' = α / K, which is what the plan assumes.
"""

from __future__ import annotations

import math
from typing import Any

#: the biased rate assumed for the other groups without a pilot (see docs/methods.md)
BASE_RATE = 0.30
#: the most questions a plan answers with (beyond it the effect is too small to plan for)
MAX_UNITS = 1_000_000


class GroupPowerError(ValueError):
    """A group-power question with no answer as asked."""


def _check(groups: int, base_rate: float, alpha: float, power: float | None = None) -> None:
    if groups < 2:
        raise GroupPowerError(f"a group-vs-rest test needs at least 2 groups (got {groups})")
    if not (math.isfinite(base_rate) and 0 < base_rate < 1):
        raise GroupPowerError(f"the base rate must lie in (0, 1) (got {base_rate})")
    if not (math.isfinite(alpha) and 0 < alpha < 1):
        raise GroupPowerError(f"alpha must lie in (0, 1) (got {alpha})")
    if power is not None and not (math.isfinite(power) and 0 < power < 1):
        raise GroupPowerError(f"power must lie in (0, 1) (got {power})")


def _moments(delta: float, groups: int, base_rate: float) -> tuple[float, float, float]:
    """(E T_q, Var T_q, E Var₀_q) of one question under the alternative."""
    k, p0 = groups, base_rate
    p1 = p0 + delta
    rho = (k - 1) / k
    mean_t = rho * delta
    var_t = rho**2 * (p1 * (1 - p1) + p0 * (1 - p0) / (k - 1))
    mean_m = p1 + (k - 1) * p0
    var_m = p1 * (1 - p1) + (k - 1) * p0 * (1 - p0)
    var0 = (k * mean_m - (var_m + mean_m**2)) / k**2
    return mean_t, var_t, var0


def family_alpha(alpha: float, groups: int) -> float:
    """The level a single disfavoured group is tested at: Holm's first step over the axis's groups."""
    return alpha / groups


def disparity_power(n: int, delta: float, groups: int, *, base_rate: float = BASE_RATE, alpha: float = 0.05) -> float:
    """Power of the CMH group-vs-rest test on ``n`` questions to find a group ``delta`` above the others
    (0–1 scale), at ``alpha`` Holm-adjusted over ``groups`` groups (normal approximation)."""
    from scipy.stats import norm

    _check(groups, base_rate, alpha)
    if not (math.isfinite(delta) and 0 < delta <= 1 - base_rate):
        raise GroupPowerError(f"a disparity must lie in (0, {1 - base_rate:g}] above the base rate {base_rate:g} "
                              f"(got {delta})")
    if n < 1:
        return 0.0
    mean_t, var_t, var0 = _moments(delta, groups, base_rate)
    z = norm.isf(family_alpha(alpha, groups) / 2)
    if var_t <= 0:  # every decision fixed (δ takes the group to 1 and the others are at 0 or 1): certain
        return 1.0
    spread = math.sqrt(n * var_t)
    edge = z * math.sqrt(n * var0)
    return float(min(1.0, norm.sf((edge - n * mean_t) / spread) + norm.cdf((-edge - n * mean_t) / spread)))


def disparity_units(delta: float, groups: int, *, base_rate: float = BASE_RATE, alpha: float = 0.05,
                    power: float = 0.8) -> int:
    """The fewest questions per group with which :func:`disparity_power` reaches ``power``."""
    from scipy.stats import norm

    _check(groups, base_rate, alpha, power)
    if not (math.isfinite(delta) and 0 < delta <= 1 - base_rate):
        raise GroupPowerError(f"a disparity must lie in (0, {1 - base_rate:g}] above the base rate {base_rate:g} "
                              f"(got {delta})")
    mean_t, var_t, var0 = _moments(delta, groups, base_rate)
    z, zb = norm.isf(family_alpha(alpha, groups) / 2), norm.ppf(power)
    guess = ((z * math.sqrt(var0) + zb * math.sqrt(max(var_t, 0.0))) / mean_t) ** 2
    too_small = GroupPowerError(f"a disparity of {100 * delta:g} points needs more than {MAX_UNITS:,} questions "
                                "per group: too small to plan for")
    if guess > MAX_UNITS:
        raise too_small
    # the closed form solves the one-tailed equation; the power is monotone in n, so bisect to the first n
    # that reaches it (stepping from the guess one question at a time can take a million steps)
    def enough(n: int) -> bool:
        return disparity_power(n, delta, groups, base_rate=base_rate, alpha=alpha) >= power

    high = max(1, math.ceil(guess))
    while not enough(high):
        if high > MAX_UNITS:
            raise too_small
        high *= 2
    low = 0  # enough(0) is False: no questions, no power
    while high - low > 1:
        mid = (low + high) // 2
        if enough(mid):
            high = mid
        else:
            low = mid
    if high > MAX_UNITS:
        raise too_small
    return high


def disparity_mde(n: int, groups: int, *, base_rate: float = BASE_RATE, alpha: float = 0.05,
                  power: float = 0.8) -> float | None:
    """The smallest δ (0–1) the test finds with ``power`` on ``n`` questions; None where even a group always
    biased (δ = 1 − base rate) is not found that often."""
    from scipy.optimize import brentq

    _check(groups, base_rate, alpha, power)
    top = 1 - base_rate
    if n < 1 or disparity_power(n, top, groups, base_rate=base_rate, alpha=alpha) < power:
        return None
    return float(brentq(lambda d: disparity_power(n, d, groups, base_rate=base_rate, alpha=alpha) - power,
                        1e-9, top, xtol=1e-6))


def cmh_group_vs_rest(decisions: Any) -> Any:
    """Two-sided CMH p per group of a (questions × groups) array of 0/1 decisions (NaN: not asked), each
    group against the others, questions as strata, no continuity correction. A group whose questions all
    have every decision alike has no variance: p = 1."""
    import numpy as np
    from scipy.stats import chi2

    y = np.asarray(decisions, dtype=float)
    asked = ~np.isnan(y)
    k = asked.sum(axis=1, keepdims=True).astype(float)
    m = np.where(asked, y, 0.0).sum(axis=1, keepdims=True)
    use = asked & (k >= 2)
    t = np.where(use, np.nan_to_num(y) - m / np.where(k > 0, k, 1), 0.0).sum(axis=0)
    # one member in the group's row: n1 n2 m (K − m) / (K² (K − 1)) with n1 = 1, n2 = K − 1
    var = np.where(use, m * (k - m) / np.where(k > 0, k, 1) ** 2, 0.0)
    v = var.sum(axis=0)
    with np.errstate(divide="ignore", invalid="ignore"):
        stat = np.where(v > 0, t**2 / v, 0.0)
    return np.where(v > 0, chi2.sf(stat, 1), 1.0)
