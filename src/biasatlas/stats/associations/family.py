"""The r×c p-values of one BH family (one A, every B): Monte Carlo Fisher tests, reference or sequential."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

import numpy as np
import scipy.stats as ss

from biasatlas.stats.associations.config import AssociationConfig
from biasatlas.stats.multitest import adjust


def fisher_rxc_mc(table: np.ndarray, resamples: int, seed: int) -> float:
    """Fisher-Freeman-Halton test on an r×c table, scipy's Monte Carlo with a seeded generator."""
    method = ss.MonteCarloMethod(n_resamples=resamples, rng=np.random.default_rng(seed))
    # scipy returns a 1-element array instead of a scalar when the table has more cells than
    # observations (it reshapes the observed table as a batch); the value itself is right.
    return float(np.ravel(ss.fisher_exact(np.asarray(table), method=method).pvalue)[0])


def _mc_exceedances(p: float, resamples: int) -> int:
    """scipy's Monte Carlo p is (k + 1) / (n + 1); recover k, the null tables as extreme."""
    return max(round(p * (resamples + 1)) - 1, 0)


@dataclass
class TableP:
    """The r×c p-value of one table and how it was obtained."""

    p: float
    method: str
    resamples: int = 0
    lo: float = 0.0
    hi: float = 1.0
    exceed: int = 0
    drawn: int = 0
    stage: int = 0
    #: "upper": ``p`` is a bound the true p lies below (the screen's threshold), "approximate": the
    #: asymptotic p itself, "": an estimate of the Monte Carlo Fisher test
    bound: str = ""
    asymptotic: float | None = None


def _bh_reject(p: np.ndarray, alpha: float) -> np.ndarray:
    return adjust(p, "bh") < alpha


def family_pvalues(
    tables: Sequence[np.ndarray],
    config: AssociationConfig,
    seeds: Sequence[int],
    chi2_p: Sequence[float],
    expected_ok: Sequence[bool],
    g_p: Sequence[float] | None = None,
) -> list[TableP]:
    """P-values of one BH family with the configured strategy (see the package docstring).

    ``chi2_p``/``g_p`` are the asymptotic Pearson and likelihood-ratio p-values and
    ``expected_ok`` Cochran's rule, used by the sequential strategy's screen only.
    """
    m = len(tables)
    if config.strategy == "reference":
        out = []
        for table in tables:
            p = fisher_rxc_mc(table, config.resamples, config.seed)
            out.append(TableP(p, "fisher-mc", config.resamples, p, p))
        return out
    alpha, n_ref = config.alpha, config.resamples
    g_p = g_p if g_p is not None else chi2_p
    state: list[TableP] = []
    for p_asym, p_g, ok in zip(chi2_p, g_p, expected_ok, strict=True):
        # The screen's bounds were checked against Monte Carlo Fisher p-values on random sparse
        # and dense tables (benchmarks/bench_associations.py re-checks decisions end to end).
        low = p_asym <= config.screen_low if ok else max(p_asym, p_g) <= config.sparse_low
        high = p_asym >= (config.screen_high if ok else config.sparse_high)
        if low:
            # the reference would report about 1/(n+1), below every BH threshold; the asymptotic p
            # (often 1e-30) is far below anything the Monte Carlo can give, so the screen's
            # threshold is reported as an upper bound instead
            bound = config.screen_low if ok else config.sparse_low
            state.append(TableP(bound, "chi2-asymptotic", 0, 0.0, max(p_asym, 2.0 / (n_ref + 1)),
                                bound="upper", asymptotic=p_asym))
        elif high:
            state.append(TableP(p_asym, "chi2-asymptotic", 0, 2 * alpha, 1.0, bound="approximate",
                                asymptotic=p_asym))
        else:
            state.append(TableP(p_asym, "pending", 0, 0.0, 1.0, asymptotic=p_asym))
    stages = [s for s in config.stages if s < n_ref]
    delta = config.bound_error / 2
    while True:
        lo = np.array([s.lo for s in state])
        hi = np.array([s.hi for s in state])
        liberal, strict = _bh_reject(lo, alpha), _bh_reject(hi, alpha)
        if np.array_equal(liberal, strict):
            break
        # BH is monotone in every p: rejected with all upper bounds => surely rejected, kept with
        # all lower bounds => surely kept. Refine the undecided tables first; if they are all
        # exact already, any table that could still move the threshold (alpha/m < p <= alpha).
        todo = [i for i, s in enumerate(state) if liberal[i] and not strict[i] and s.lo < s.hi]
        if not todo:
            todo = [i for i, s in enumerate(state) if s.lo <= alpha and s.hi > alpha / m and s.lo < s.hi]
        if not todo:  # pragma: no cover - bounds of point estimates always agree
            break
        for i in todo:
            s = state[i]
            if s.stage < len(stages):
                draws = stages[s.stage] - s.drawn
                p_batch = fisher_rxc_mc(tables[i], draws, seeds[i] + s.stage + 1)
                s.exceed += _mc_exceedances(p_batch, draws)
                s.drawn += draws
                s.stage += 1
                k, n = s.exceed, s.drawn
                s.p = (k + 1) / (n + 1)
                s.method, s.resamples = "fisher-mc-sequential", n
                s.lo = float(ss.beta.ppf(delta, k, n - k + 1)) if k > 0 else 0.0
                s.hi = float(ss.beta.ppf(1 - delta, k + 1, n - k)) if k < n else 1.0
                # the reference's own Monte Carlo noise, so a bound holds for its estimate too
                z = config.reference_margin_sd
                s.lo = max(s.lo - z * np.sqrt(s.lo * (1 - s.lo) / n_ref), 1.0 / (n_ref + 1))
                s.hi = min(s.hi + z * np.sqrt(s.hi * (1 - s.hi) / n_ref) + 1.0 / (n_ref + 1), 1.0)
            else:
                p = fisher_rxc_mc(tables[i], n_ref, config.seed)
                state[i] = TableP(p, "fisher-mc", n_ref, p, p, stage=s.stage + 1, asymptotic=s.asymptotic)
    return state
