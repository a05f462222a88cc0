"""Power and the minimum detectable effect (MDE) of the paired tests the probes make.

Two designs, the tests the probes run (docs/power.md has the formulas and the assumptions):

- ``"mcnemar"``: paired binary decisions (contact: a prompt set's decision under no contact vs under a
  contact framing), tested with the exact McNemar test (statsmodels ``mcnemar(exact=True)``: a two-sided
  binomial test on the discordant pairs). The effect is the difference of two paired proportions,
  δ = p₁₀ − p₀₁ (0.10 = 10 percentage points). Its power is computed exactly, not approximated: the
  number of discordant pairs D is Binomial(n, ψ) (ψ the discordance rate, p₁₀ + p₀₁) and, given D = d,
  the pairs changed one way are Binomial(d, (ψ + δ) / 2ψ); the test rejects on the binomial test's
  rejection region for each d. Connor's (1987) normal approximation is given beside it as a check.
- ``"paired_t"``: a paired t-test on continuous differences (contact: log-odds of P(biased) per prompt
  set; samaritan: group − control rating per scenario), from statsmodels ``TTestPower`` (noncentral t,
  two-sided). The effect is d_z = mean / sd of the paired differences; ``sd`` converts it to the measure's
  own scale.

statsmodels and scipy are imported on use (CLI start-up stays light).
"""

from __future__ import annotations

import math
from dataclasses import asdict, dataclass
from typing import Any

#: every test here rejects at p < alpha, the strict rule of the probes' ``significant``
DESIGNS = ("mcnemar", "paired_t")
#: float slack when comparing an effect with the discordance it cannot exceed
TINY = 1e-12
#: the most units a plan answers with: beyond it the effect is too small to plan for (and the exact search
#: would grow with 1 / effect²: an effect of 1e-9 asked for 72 GiB)
MAX_UNITS = 1_000_000


class PowerError(ValueError):
    """A power question that has no answer as asked (unknown design, n too small, missing assumption)."""


@dataclass(frozen=True)
class MDE:
    """The smallest effect a design detects with the stated power at the stated alpha (two-sided).

    ``value`` is None where no effect is detectable at this n (``reason`` says why). ``unit`` names
    the scale of ``value``; ``standardized`` is d_z for a paired t-test (None for McNemar).
    """

    design: str
    n: int
    alpha: float
    power: float
    value: float | None
    unit: str
    assumptions: str
    standardized: float | None = None
    reason: str | None = None

    def as_dict(self) -> dict[str, Any]:
        return asdict(self)


def _check(design: str, alpha: float, power: float) -> None:
    if design not in DESIGNS:
        raise PowerError(f"unknown design {design!r}; valid: {', '.join(DESIGNS)}")
    if not 0 < alpha < 1:  # NaN fails every comparison: refused here too
        raise PowerError(f"alpha must lie between 0 and 1 (got {alpha})")
    if not 0 < power < 1:
        raise PowerError(f"power must lie between 0 and 1 (got {power})")


def _too_many(approximate: float, unit: str) -> None:
    """Refuse, before any exact search, a question whose approximate answer exceeds MAX_UNITS."""
    if not approximate <= MAX_UNITS:  # NaN and inf included
        raise PowerError(f"more than {MAX_UNITS:,} {unit} needed: the effect is too small to plan for")


def _check_rate(discordant_rate: float) -> None:
    if not 0 < discordant_rate <= 1:
        raise PowerError(f"the discordance rate must lie in (0, 1] (got {discordant_rate})")


# ---- McNemar (exact) ---------------------------------------------------------------------------
def mcnemar_power(n: int, effect: float, discordant_rate: float, alpha: float = 0.05) -> float:
    """Exact power of the two-sided exact McNemar test (reject at p < alpha) on ``n`` pairs.

    ``effect`` is δ = p₁₀ − p₀₁ (its sign does not matter: the test is two-sided), ``discordant_rate``
    ψ = p₁₀ + p₀₁; |δ| ≤ ψ. The sum runs over the discordant count d ~ Binomial(n, ψ); given d, the
    test rejects when min(b, d − b) ≤ k_d, k_d the largest k with 2·F(k; d, ½) < alpha, and b ~
    Binomial(d, (ψ + |δ|) / 2ψ).
    """
    import numpy as np
    from scipy import stats as sps

    _check_rate(discordant_rate)
    delta = abs(effect)
    if delta > discordant_rate + TINY:
        raise PowerError(f"an effect of {delta:g} needs a discordance rate of at least {delta:g} "
                         f"(got {discordant_rate:g}): δ = p₁₀ − p₀₁ cannot exceed ψ = p₁₀ + p₀₁")
    if n < 1:
        return 0.0
    psi = discordant_rate
    lo = int(sps.binom.ppf(1e-13, n, psi))
    hi = int(sps.binom.isf(1e-13, n, psi))
    d = np.arange(max(lo, 1), hi + 1)
    if d.size == 0:
        return 0.0
    weight = sps.binom.pmf(d, n, psi)
    k = sps.binom.ppf(alpha / 2, d, 0.5)  # smallest k with F(k) >= alpha/2
    # statsmodels' p is 2·F(min(b, d − b)); rejection needs 2·F(k) < alpha: step back where it is not
    k = np.where(2 * sps.binom.cdf(k, d, 0.5) < alpha, k, k - 1)
    q = min(1.0, (psi + delta) / (2 * psi))
    given_d = np.where(k >= 0, sps.binom.cdf(k, d, q) + sps.binom.sf(d - k - 1, d, q), 0.0)
    return float(np.clip(np.sum(weight * np.minimum(given_d, 1.0)), 0.0, 1.0))


def connor_pairs(effect: float, discordant_rate: float, alpha: float = 0.05, power: float = 0.8) -> float:
    """Connor's (1987, Biometrics 43:207) normal approximation of the pairs McNemar's test needs:
    n = (z_{1−α/2} √ψ + z_{power} √(ψ − δ²))² / δ²."""
    from scipy.stats import norm

    _check_rate(discordant_rate)
    delta = abs(effect)
    if delta <= 0 or delta > discordant_rate:
        raise PowerError("Connor's formula needs 0 < |δ| ≤ ψ")
    za, zb = norm.isf(alpha / 2), norm.ppf(power)
    return float((za * math.sqrt(discordant_rate) + zb * math.sqrt(discordant_rate - delta**2)) ** 2 / delta**2)


def _mcnemar_mde(n: int, alpha: float, power: float, discordant_rate: float) -> float | None:
    from scipy.optimize import brentq

    if mcnemar_power(n, discordant_rate, discordant_rate, alpha) < power:
        return None  # even with every discordant pair changed one way the test cannot reach the power
    return float(brentq(lambda d: mcnemar_power(n, d, discordant_rate, alpha) - power, 0.0, discordant_rate,
                        xtol=1e-7))


def _mcnemar_pairs(effect: float, alpha: float, power: float, discordant_rate: float) -> int:
    """The fewest pairs whose exact power reaches ``power``: bisection from Connor's approximation."""
    import numpy as np

    with np.errstate(all="ignore"):  # an effect whose square underflows: an infinite answer, refused
        approximate = connor_pairs(effect, discordant_rate, alpha, power)
    _too_many(approximate, "pairs")
    guess = max(2, math.ceil(approximate))
    hi = guess
    while mcnemar_power(hi, effect, discordant_rate, alpha) < power:
        hi *= 2
        if hi > 2 * MAX_UNITS:
            raise PowerError(f"more than {MAX_UNITS:,} pairs needed: the effect is too small to plan for")
    lo = max(1, guess // 4)
    while lo > 1 and mcnemar_power(lo, effect, discordant_rate, alpha) >= power:
        lo //= 2
    # Power is a smoothed step function of n (d is random): bisect to the first n that reaches it.
    while hi - lo > 1:
        mid = (lo + hi) // 2
        if mcnemar_power(mid, effect, discordant_rate, alpha) >= power:
            hi = mid
        else:
            lo = mid
    return hi


# ---- paired t --------------------------------------------------------------------------------
def _t_mde(n: int, alpha: float, power: float) -> float | None:
    from statsmodels.stats.power import TTestPower

    if n < 2:
        return None
    return float(TTestPower().solve_power(effect_size=None, nobs=n, alpha=alpha, power=power,
                                          alternative="two-sided"))


def t_power(d_z: float, n: int, alpha: float) -> float:
    """Power of the two-sided paired t-test on ``n`` pairs (scipy's noncentral t). statsmodels' ``TTestPower``
    gives NaN where the far tail underflows (d_z ≈ 12, n = 2): that tail is taken as 0 here."""
    from scipy import stats as sps

    df = n - 1
    crit = sps.t.isf(alpha / 2, df)
    ncp = abs(d_z) * math.sqrt(n)
    upper, lower = float(sps.nct.sf(crit, df, ncp)), float(sps.nct.cdf(-crit, df, ncp))
    upper = 1.0 if math.isnan(upper) and ncp > crit else upper
    return min(1.0, (0.0 if math.isnan(upper) else upper) + (0.0 if math.isnan(lower) else lower))


def _t_units(d_z: float, alpha: float, power: float) -> int:
    import warnings

    import numpy as np
    from scipy.stats import norm
    from statsmodels.stats.power import TTestPower

    d_z = abs(d_z)
    if not math.isfinite(d_z) or d_z == 0:
        raise PowerError(f"the standardized effect must be a non-zero number (got {d_z})")
    # the normal approximation is below the t answer: a bound that refuses only what is beyond MAX_UNITS
    with np.errstate(over="ignore"):  # an overflow is an infinite answer: refused
        _too_many(float((np.float64(norm.isf(alpha / 2) + norm.ppf(power)) / d_z) ** 2), "pairs")
    if t_power(d_z, 2, alpha) >= power:
        return 2  # a huge effect: the fewest pairs a t-test takes
    with warnings.catch_warnings():  # statsmodels warns, and gives NaN, where its root finder fails
        warnings.simplefilter("ignore")
        try:
            size = float(TTestPower().solve_power(effect_size=d_z, nobs=None, alpha=alpha, power=power,
                                                  alternative="two-sided"))
        except (TypeError, ValueError, ArithmeticError):  # its solver on extreme inputs (alpha, power ~1e-143)
            size = math.nan
    if math.isfinite(size):
        n = max(2, math.ceil(size - 1e-9))
    else:  # search the integers: double to an n that reaches the power, then bisect
        lo, hi = 2, 4
        while t_power(d_z, hi, alpha) < power:
            lo, hi = hi, hi * 2
        while hi - lo > 1:
            mid = (lo + hi) // 2
            lo, hi = (lo, mid) if t_power(d_z, mid, alpha) >= power else (mid, hi)
        n = hi
    _too_many(n, "pairs")
    return n


# ---- public ------------------------------------------------------------------------------------
def detectable_effect(design: str, n: int, alpha: float, power: float = 0.8, *, sd: float | None = None,
                      discordant_rate: float | None = None) -> MDE:
    """The minimum detectable effect of ``design`` on ``n`` units (pairs) at ``alpha`` (two-sided) and ``power``.

    ``mcnemar`` needs ``discordant_rate`` (ψ, the share of pairs whose two decisions differ); its value is
    δ = p₁₀ − p₀₁ on the 0–1 scale. ``paired_t`` gives d_z; with ``sd`` (of the paired differences) its
    value is d_z · sd on the measure's own scale, else d_z itself. For a finished test's row pass the
    observed figures (ψ = discordant pairs / n; the sd of its differences): an observed ψ or sd of 0 gives
    no value and a ``reason`` (decisions that never move; differences without spread), never an error.
    """
    _check(design, alpha, power)
    if n < 0:
        raise PowerError(f"n must be at least 0 (got {n})")
    if design == "mcnemar":
        if discordant_rate is None:
            raise PowerError("McNemar's power needs a discordance rate (the share of pairs that differ)")
        text = (f"exact McNemar test, two-sided, p < {alpha:g}; discordance ψ = {discordant_rate:g} "
                f"(the share of pairs whose two decisions differ); δ = p₁₀ − p₀₁ ≤ ψ")
        if discordant_rate == 0:  # an observed ψ of 0 (a model whose decisions never move): no effect can show
            return MDE(design, n, alpha, power, None, "difference of proportions (0.10 = 10 percentage points)",
                       text, reason="no pair is discordant (ψ = 0): the decisions never move, so no effect on "
                       "them is detectable")
        _check_rate(discordant_rate)
        value = _mcnemar_mde(n, alpha, power, discordant_rate)
        reason = None if value is not None else (
            f"{n} pairs are too few: even if every discordant pair changed one way, power stays below {power:g}")
        return MDE(design, n, alpha, power, value, "difference of proportions (0.10 = 10 percentage points)", text,
                   reason=reason)
    if sd is not None and sd < 0:
        raise PowerError(f"sd must not be negative (got {sd})")
    d_z = _t_mde(n, alpha, power)
    text = f"paired t-test, two-sided, p < {alpha:g}; normal paired differences (noncentral t)"
    reason = None if d_z is not None else f"a paired t-test needs at least 2 pairs (n = {n})"
    if sd is None:
        return MDE(design, n, alpha, power, d_z, "d_z (standard deviations of the paired differences)",
                   text, d_z, reason)
    if sd == 0:  # every difference the same (an observed sd): the t-test has no spread, no MDE to give
        reason = "every paired difference is the same (sd 0): a t-test has no spread to detect an effect against"
        return MDE(design, n, alpha, power, None, "the measure's own scale", text + "; sd 0", d_z, reason)
    value = None if d_z is None else d_z * sd
    return MDE(design, n, alpha, power, value, "the measure's own scale",
               text + f"; sd of the paired differences = {sd:g}", d_z, reason)


def units_needed(design: str, effect: float, alpha: float, power: float = 0.8, *, sd: float | None = None,
                 discordant_rate: float | None = None) -> int:
    """The fewest units (pairs) with which ``design`` detects ``effect`` at ``alpha`` with ``power``.

    The effect is on the scale :func:`detectable_effect` gives: δ (0–1) for ``mcnemar``, the measure's own
    scale for ``paired_t`` with ``sd`` (d_z without it). A PowerError says why there is no answer.
    """
    _check(design, alpha, power)
    if not math.isfinite(effect) or effect == 0:
        raise PowerError(f"the effect must be a non-zero number (got {effect})")
    if design == "mcnemar":
        if discordant_rate is None:
            raise PowerError("McNemar's power needs a discordance rate (the share of pairs that differ)")
        _check_rate(discordant_rate)
        if abs(effect) > 1:
            raise PowerError(f"a McNemar effect is a difference of proportions between -1 and 1 "
                             f"(0.10 = 10 points; got {effect:g})")
        if abs(effect) > discordant_rate:
            raise PowerError(f"an effect of {abs(effect):g} cannot occur with discordance {discordant_rate:g}: "
                             f"δ = p₁₀ − p₀₁ ≤ ψ = p₁₀ + p₀₁")
        return _mcnemar_pairs(effect, alpha, power, discordant_rate)
    if sd is not None and not (0 < sd < math.inf):
        raise PowerError(f"sd must be a positive number (got {sd}): no spread in the differences, no t-test "
                         "to plan")
    return _t_units(effect / sd if sd is not None else effect, alpha, power)


def detectable_effect_of_pairs(design: str, x: Any, y: Any, alpha: float, power: float = 0.8) -> MDE:
    """The MDE of a finished paired test, from its own pairs: the sensitivity to state beside a result that
    is not significant ("the smallest effect this test had ``power`` to detect").

    ``x`` and ``y`` are the paired values as the test took them (a pair with a NaN on either side is left
    out, as the tests leave it): decisions 0/1 for ``mcnemar`` (ψ = the share of pairs that differ), numbers
    for ``paired_t`` (sd = the sd of x − y; the value is on their scale).
    """
    import numpy as np

    a, b = np.asarray(x, dtype=float), np.asarray(y, dtype=float)
    if a.shape != b.shape:
        raise PowerError(f"x and y must be paired (got {a.size} and {b.size} values)")
    keep = ~(np.isnan(a) | np.isnan(b))
    a, b = a[keep], b[keep]
    n = int(a.size)
    if design == "mcnemar":
        rate = float(np.mean(a != b)) if n else 0.0
        return detectable_effect(design, n, alpha, power, discordant_rate=rate)
    if n < 2:
        return detectable_effect(design, n, alpha, power)  # its reason: fewer than 2 pairs
    diff = a - b
    # equal up to the rounding of the subtraction counts as no spread (stats.paired.no_spread does the same)
    sd = float(np.std(diff, ddof=1))
    if sd <= 1e-12 * max(1.0, float(np.max(np.abs(diff)))):
        sd = 0.0
    return detectable_effect(design, n, alpha, power, sd=sd)
