"""The leakage model of paper 004 (Eq. 1), per model and target language, with statsmodels' mixedlm.

    model_score ~ human_en + human_ru + human_zh + human_hi [+ mono] [+ missing_*]   random intercept by trait

One observation per (trait, group) cell. Cells with a missing human score are left out (complete cases);
``zero_fill=True`` replicates the paper's code, which replaced missing (999) human cells by 0;
``keep_nonshared=True`` fills only the cells the design leaves empty (a non-shared group outside its home
language) and adds one missing-indicator term per filled source, so that each source's slope is estimated from
the cells its humans rated (the fill value does not change it).

A fit is made only on enough data (``min_cells`` overall, default 20 per fixed effect; ``min_cells_per_trait``,
traits with fewer cells are left out; ``min_traits``). A fit that did not converge or is singular is kept with
its warnings but marked ``dropped`` and never enters the multiple-testing family or the flows. The family is the
cross-language human coefficients (source ≠ target) of one model's usable fits; own-language, intercept, mono
and indicator terms are not leakage tests and keep their unadjusted p.
"""

from __future__ import annotations

import warnings
from collections.abc import Mapping, Sequence
from dataclasses import asdict, dataclass, field
from typing import Any, cast

import numpy as np
import pandas as pd

from biasatlas.probes.leakage.data import LANGUAGES, group_by_id
from biasatlas.stats.multitest import adjust

MIN_CELLS_PER_FIXED_EFFECT = 20  # default overall minimum: 20 complete cells per fixed effect (100 for Eq. 1)
MIN_CELLS_PER_TRAIT = 5  # a trait with fewer complete cells is left out of the fit
MIN_TRAITS = 5  # the random intercept's variance needs at least five traits
SINGULAR_TOL = 1e-4  # lme4's isSingular: a random-intercept SD below 1e-4 residual SDs is a boundary fit
METHOD = "linear mixed model (statsmodels MixedLM, REML), random intercept by trait; Wald z tests"
#: Optimizers tried in turn, each from statsmodels' default start, until one converges: statsmodels' default
#: chain (BFGS, then L-BFGS and CG from where it stopped), then Powell, then Nelder-Mead (derivative-free).
OPTIMIZERS: tuple[tuple[str, ...], ...] = (("bfgs", "lbfgs", "cg"), ("powell",), ("nm",))


@dataclass
class Coefficient:
    term: str
    source: str | None  # the human language of a human_* term
    estimate: float
    se: float
    z: float
    p: float
    ci_low: float
    ci_high: float
    p_adj: float | None = None  # set for leakage tests only (source != target, usable fit)
    significant: bool | None = None


@dataclass
class LeakageFit:
    """One fitted leakage model (or why it could not be fitted, or why it is left out of the flows)."""

    variant: str
    target: str
    formula: str
    n_obs: int
    n_traits: int
    n_groups: int
    zero_fill: bool
    n_complete: int = 0  # complete cells before traits under the per-trait minimum were left out
    keep_nonshared: bool = False
    method: str = METHOD
    min_cells: int = 0
    min_cells_per_trait: int = MIN_CELLS_PER_TRAIT
    min_traits: int = MIN_TRAITS
    mono: bool = False
    coefficients: list[Coefficient] = field(default_factory=list)
    trait_variance: float | None = None
    residual_variance: float | None = None
    converged: bool | None = None
    optimizer: str | None = None  # the optimizer whose result is reported (the first that converged)
    log_likelihood: float | None = None  # REML log-likelihood of the reported result
    optimizers_tried: list[str] = field(default_factory=list)  # each attempt and how it ended
    warnings: list[str] = field(default_factory=list)
    dropped_traits: dict[str, int] = field(default_factory=dict)  # trait -> its complete cells (< minimum)
    groups_left_out: list[str] = field(default_factory=list)  # groups with model scores but no complete cell
    error: str | None = None  # the fit was not made
    dropped: str | None = None  # the fit was made but is left out of the flows (not converged, singular)

    @property
    def usable(self) -> bool:
        """Fitted, converged and not singular: its cross-language coefficients are leakage tests."""
        return self.error is None and self.dropped is None and bool(self.coefficients)

    def is_leakage_test(self, coef: Coefficient) -> bool:
        return coef.source is not None and coef.source != self.target

    def as_dict(self) -> dict[str, Any]:
        return {**asdict(self), "usable": self.usable}


def long_frame(
    model_matrix: pd.DataFrame,
    human: Mapping[str, pd.DataFrame],
    *,
    mono: pd.DataFrame | None = None,
    zero_fill: bool = False,
    keep_nonshared: bool = False,
    fill: float = 0.0,
) -> pd.DataFrame:
    """One row per (trait, group) with the model score, each language's human score and ``mono``.

    Cells without a model score are always dropped; cells with a missing human (or mono) score are dropped
    unless ``zero_fill`` (every missing human or mono score is 0, as the paper's code did) or ``keep_nonshared`` (a
    non-shared group's missing score in a language other than its home one is ``fill``, flagged by a
    ``missing_<lang>`` column; other missing cells are still dropped).
    """
    frame = cast(pd.Series, model_matrix.stack(future_stack=True)).to_frame("model_score")
    frame.index.names = ["trait", "group"]
    for lang in LANGUAGES:
        if lang in human:
            frame[f"human_{lang}"] = human[lang].reindex_like(model_matrix).stack(future_stack=True)
    if mono is not None:
        frame["mono"] = mono.reindex_like(model_matrix).stack(future_stack=True)
    frame = frame.reset_index().dropna(subset=["model_score"])
    human_cols = [c for c in frame.columns if c.startswith("human_")]
    if zero_fill:  # the paper's code read every matrix with 999 -> 0: the control's gaps too
        filled = human_cols + (["mono"] if mono is not None else [])
        frame[filled] = frame[filled].fillna(0.0)
    elif keep_nonshared:
        by_id = group_by_id()
        home = frame["group"].map(lambda g: by_id[g].home if g in by_id and by_id[g].category == "nonshared"
                                  else None)
        for col in human_cols:
            lang = col.removeprefix("human_")
            design_gap = frame[col].isna() & home.notna() & (home != lang)
            if design_gap.any():
                frame[f"missing_{lang}"] = design_gap.astype(float)
                frame.loc[design_gap, col] = fill
    return frame.dropna().reset_index(drop=True)


def _independent_indicators(data: pd.DataFrame, predictors: list[str]) -> list[str]:
    """The ``missing_*`` columns that add to the rank of the design (one spanned by the others is redundant:
    its fill level is absorbed already, so each source's slope still comes from its rated cells only)."""
    kept: list[str] = []
    if data.empty:
        return kept
    base = np.column_stack([np.ones(len(data)), data[predictors].to_numpy(dtype=float)])
    rank = int(np.linalg.matrix_rank(base))
    for col in sorted(c for c in data.columns if c.startswith("missing_")):
        trial = np.column_stack([base, data[col].to_numpy(dtype=float)])
        if int(np.linalg.matrix_rank(trial)) > rank:
            base, rank = trial, rank + 1
            kept.append(col)
    return kept


def _new_fit(data: pd.DataFrame, formula: str, *, variant: str, target: str, **flags: Any) -> LeakageFit:
    return LeakageFit(variant=variant, target=target, formula=formula, n_obs=len(data),
                      n_traits=int(data["trait"].nunique()) if len(data) else 0,
                      n_groups=int(data["group"].nunique()) if len(data) else 0, **flags)


def fit_leakage(
    model_matrix: pd.DataFrame,
    human: Mapping[str, pd.DataFrame],
    *,
    variant: str,
    target: str,
    mono: pd.DataFrame | None = None,
    zero_fill: bool = False,
    keep_nonshared: bool = False,
    fill: float = 0.0,
    alpha: float = 0.05,
    min_cells: int | None = None,
    min_cells_per_trait: int = MIN_CELLS_PER_TRAIT,
    min_traits: int = MIN_TRAITS,
) -> LeakageFit:
    """Fit Eq. 1 for one model variant and target language; errors are returned, not raised."""
    data = long_frame(model_matrix, human, mono=mono, zero_fill=zero_fill, keep_nonshared=keep_nonshared,
                      fill=fill)
    measured = set(model_matrix.columns[model_matrix.notna().any()])
    left_out = sorted(measured - set(data["group"]))
    n_complete = len(data)
    per_trait = data["trait"].value_counts()
    thin = per_trait[per_trait < min_cells_per_trait]
    data = data[~data["trait"].isin(thin.index)].reset_index(drop=True)
    predictors = [f"human_{lang}" for lang in LANGUAGES if lang in human] + (["mono"] if mono is not None else [])
    predictors += _independent_indicators(data, predictors)
    n_fixed = 1 + len(predictors)
    needed = MIN_CELLS_PER_FIXED_EFFECT * n_fixed if min_cells is None else min_cells
    fit = _new_fit(data, "model_score ~ " + " + ".join(predictors), variant=variant, target=target,
                   zero_fill=zero_fill, n_complete=n_complete, keep_nonshared=keep_nonshared, min_cells=needed,
                   min_cells_per_trait=min_cells_per_trait, min_traits=min_traits, mono=mono is not None,
                   dropped_traits={str(t): int(n) for t, n in thin.items()}, groups_left_out=left_out)
    if fit.n_obs < needed or fit.n_traits < min_traits:
        rule = (f"{MIN_CELLS_PER_FIXED_EFFECT} per fixed effect × {n_fixed}" if min_cells is None
                else "--min-cells")
        fit.error = (
            f"too little data: {n_complete} complete (trait, group) cells, {fit.n_obs} of them in {fit.n_traits} "
            f"traits with >= {min_cells_per_trait} cells each (need >= {needed} cells ({rule}) in >= "
            f"{min_traits} traits)"
        )
        return fit
    constant = [p for p in predictors if data[p].nunique() < 2]
    if constant or data["model_score"].nunique() < 2:
        fit.error = f"constant variables: {constant or ['model_score']}; the model is not identified"
        return fit
    design = np.column_stack([np.ones(len(data)), data[predictors].to_numpy(dtype=float)])
    rank = int(np.linalg.matrix_rank(design))
    if rank < n_fixed:
        fit.error = f"singular design: the {n_fixed} fixed effects have rank {rank} (collinear predictors)"
        return fit
    _fit_mixed(fit, data, predictors, alpha)
    return fit


def _optimize(fit: LeakageFit, data: pd.DataFrame) -> Any:
    """The MixedLM result of the first of :data:`OPTIMIZERS` that converges (else the last one that ran), with
    its warnings; every attempt is listed in ``fit.optimizers_tried``. None, with ``fit.error``, if none ran."""
    import statsmodels.formula.api as smf

    model = smf.mixedlm(fit.formula, data, groups=data["trait"])
    result, errors = None, []
    for methods in OPTIMIZERS:
        name = "→".join(methods)
        with warnings.catch_warnings(record=True) as caught:
            warnings.simplefilter("always")
            try:
                attempt = model.fit(reml=True, method=list(methods))
            except (np.linalg.LinAlgError, ValueError) as exc:
                fit.optimizers_tried.append(f"{name}: failed ({exc})")
                errors.append(f"{name}: {exc}")
                continue
        retried = [m for m in methods if any(f"optimization with {m}" in str(w.message) for w in caught)]
        result, fit.optimizer = attempt, (retried or [methods[0]])[-1]  # the chain's last method ran last
        fit.warnings = sorted({f"{w.category.__name__}: {str(w.message).splitlines()[0]}" for w in caught})
        converged = bool(getattr(attempt, "converged", True))
        fit.optimizers_tried.append(f"{name}: {'converged' if converged else 'did not converge'}")
        if converged:
            break
    if result is None:
        fit.error = f"mixedlm failed: {'; '.join(errors)}"
    return result


def _fit_mixed(fit: LeakageFit, data: pd.DataFrame, predictors: list[str], alpha: float) -> None:
    """Fit the mixed model into ``fit``: coefficients, variances, warnings, and why it is dropped if it is."""
    result = _optimize(fit, data)
    if result is None:
        return
    fit.converged = bool(getattr(result, "converged", True))
    fit.log_likelihood = float(result.llf)
    ci = result.conf_int(alpha=alpha)
    for term in ["Intercept", *predictors]:
        fit.coefficients.append(
            Coefficient(
                term=term,
                source=term.removeprefix("human_") if term.startswith("human_") else None,
                estimate=float(result.fe_params[term]),
                se=float(result.bse_fe[term]),
                z=float(result.tvalues[term]),
                p=float(result.pvalues[term]),
                ci_low=float(ci.loc[term, 0]),
                ci_high=float(ci.loc[term, 1]),
            )
        )
    fit.trait_variance = float(np.asarray(result.cov_re)[0, 0])
    fit.residual_variance = float(result.scale)
    fit.dropped = _why_dropped(fit, float(np.var(data["model_score"])))


def _why_dropped(fit: LeakageFit, score_variance: float) -> str | None:
    """Why a made fit cannot be trusted (non-convergence, singularity), or None."""
    if not fit.converged:
        return f"did not converge with any optimizer ({'; '.join(fit.optimizers_tried)}; see the warnings)"
    if any(not (np.isfinite(c.se) and c.se > 0 and np.isfinite(c.p)) for c in fit.coefficients):
        return "singular: non-finite or zero standard errors"
    if any("Hessian matrix" in w and "not positive definite" in w for w in fit.warnings):
        return "singular: the Hessian is not positive definite (standard errors unreliable)"
    trait_var, resid = fit.trait_variance or 0.0, fit.residual_variance or 0.0
    if resid <= 1e-12 * max(score_variance, 1e-300):
        return "singular: the scores are fitted exactly (residual variance ~0)"
    if np.sqrt(max(trait_var, 0.0) / resid) < SINGULAR_TOL:
        return f"singular (boundary) fit: trait intercept SD < {SINGULAR_TOL:g} residual SD"
    return None


def correct(fits: Sequence[LeakageFit], alpha: float = 0.05, method: str = "bh") -> None:
    """Adjust the p-values of the leakage tests of ``fits`` together (in place) and flag significance.

    The family is every cross-language human coefficient (source ≠ target) of the usable fits; every other
    coefficient (own language, intercept, mono, indicators) and every coefficient of a dropped fit gets none.
    """
    for fit in fits:
        for coef in fit.coefficients:
            coef.p_adj, coef.significant = None, None
    coefs = [c for f in fits if f.usable for c in f.coefficients if f.is_leakage_test(c) and np.isfinite(c.p)]
    if not coefs:
        return
    adjusted = adjust([c.p for c in coefs], method=method)
    for coef, p_adj in zip(coefs, adjusted, strict=True):
        coef.p_adj = float(p_adj)
        coef.significant = bool(p_adj < alpha)


def correct_per_variant(fits: Sequence[LeakageFit], alpha: float = 0.05, method: str = "bh") -> None:
    """:func:`correct` once per model variant: one model's family is its (up to) 12 cross-language tests."""
    for variant in dict.fromkeys(f.variant for f in fits):
        correct([f for f in fits if f.variant == variant], alpha=alpha, method=method)


def coefficient_table(fits: Sequence[LeakageFit]) -> pd.DataFrame:
    """Every coefficient of every fit, one row each (n, estimate, SE, z, p, adjusted p, CI, usable)."""
    rows = [
        {"variant": f.variant, "target": f.target, "n_obs": f.n_obs, "n_traits": f.n_traits,
         "zero_fill": f.zero_fill, "keep_nonshared": f.keep_nonshared, "optimizer": f.optimizer, "usable": f.usable,
         "leakage_test": f.is_leakage_test(c), **asdict(c)}
        for f in fits
        for c in f.coefficients
    ]
    return pd.DataFrame(rows)


def flows(fits: Sequence[LeakageFit]) -> pd.DataFrame:
    """Leakage flows: source → target with a positive, significant (adjusted) cross-language coefficient of a
    usable fit."""
    table = coefficient_table(fits)
    if table.empty:
        return table
    keep = (
        table["leakage_test"]
        & table["usable"]
        & (table["estimate"] > 0)
        & table["significant"].fillna(False).astype(bool)
    )
    cols = ["variant", "source", "target", "estimate", "se", "ci_low", "ci_high", "p", "p_adj", "n_obs"]
    return table.loc[keep, cols].sort_values(["variant", "target", "p_adj"]).reset_index(drop=True)
