"""The leakage model of paper 004 (Eq. 1), per model and target language, with statsmodels' mixedlm.

    model_score ~ human_en + human_ru + human_zh + human_hi [+ mono]     random intercept by trait

One observation per (trait, group) cell. Cells with a missing human score are left out (complete cases);
``zero_fill=True`` replicates the paper's code, which replaced missing (999) human cells by 0. A flow
source → target is a positive coefficient of the source language's human scores on the target-language
model scores that stays significant after Benjamini-Hochberg correction over all the coefficients tested.
"""

from __future__ import annotations

import warnings
from collections.abc import Mapping, Sequence
from dataclasses import asdict, dataclass, field
from typing import Any, cast

import numpy as np
import pandas as pd

from biasatlas.probes.leakage.data import LANGUAGES
from biasatlas.stats.multitest import adjust

MIN_OBSERVATIONS = 10
MIN_TRAITS = 3


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
    p_adj: float | None = None
    significant: bool | None = None


@dataclass
class LeakageFit:
    """One fitted leakage model (or why it could not be fitted)."""

    variant: str
    target: str
    formula: str
    n_obs: int
    n_traits: int
    n_groups: int
    zero_fill: bool
    method: str = "linear mixed model (statsmodels MixedLM, REML), random intercept by trait; Wald z tests"
    coefficients: list[Coefficient] = field(default_factory=list)
    trait_variance: float | None = None
    residual_variance: float | None = None
    converged: bool | None = None
    warnings: list[str] = field(default_factory=list)
    error: str | None = None

    def as_dict(self) -> dict[str, Any]:
        return asdict(self)


def long_frame(
    model_matrix: pd.DataFrame,
    human: Mapping[str, pd.DataFrame],
    *,
    mono: pd.DataFrame | None = None,
    zero_fill: bool = False,
) -> pd.DataFrame:
    """One row per (trait, group) with the model score, each language's human score and ``mono``.

    Cells without a model score are always dropped; cells with a missing human (or mono) score are dropped
    unless ``zero_fill``, which sets missing human scores to 0 as the paper's code did.
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
    if zero_fill:
        frame[human_cols] = frame[human_cols].fillna(0.0)
    return frame.dropna().reset_index(drop=True)


def fit_leakage(
    model_matrix: pd.DataFrame,
    human: Mapping[str, pd.DataFrame],
    *,
    variant: str,
    target: str,
    mono: pd.DataFrame | None = None,
    zero_fill: bool = False,
    alpha: float = 0.05,
) -> LeakageFit:
    """Fit Eq. 1 for one model variant and target language; errors are returned, not raised."""
    import statsmodels.formula.api as smf
    from statsmodels.tools.sm_exceptions import ConvergenceWarning

    data = long_frame(model_matrix, human, mono=mono, zero_fill=zero_fill)
    predictors = [f"human_{lang}" for lang in LANGUAGES if lang in human]
    if mono is not None:
        predictors.append("mono")
    formula = "model_score ~ " + " + ".join(predictors)
    fit = LeakageFit(
        variant=variant, target=target, formula=formula, n_obs=len(data),
        n_traits=int(data["trait"].nunique()) if len(data) else 0,
        n_groups=int(data["group"].nunique()) if len(data) else 0, zero_fill=zero_fill,
    )
    if fit.n_obs < MIN_OBSERVATIONS or fit.n_traits < MIN_TRAITS:
        fit.error = (
            f"too little data: {fit.n_obs} complete (trait, group) cells over {fit.n_traits} traits "
            f"(need >= {MIN_OBSERVATIONS} cells and >= {MIN_TRAITS} traits)"
        )
        return fit
    constant = [p for p in predictors if data[p].nunique() < 2]
    if constant or data["model_score"].nunique() < 2:
        fit.error = f"constant variables: {constant or ['model_score']}; the model is not identified"
        return fit
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        try:
            result = smf.mixedlm(formula, data, groups=data["trait"]).fit(reml=True)
        except (np.linalg.LinAlgError, ValueError) as exc:
            fit.error = f"mixedlm failed: {exc}"
            return fit
    fit.warnings = sorted({str(w.message).splitlines()[0] for w in caught
                           if issubclass(w.category, (ConvergenceWarning, RuntimeWarning, UserWarning))})
    fit.converged = bool(getattr(result, "converged", True))
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
    return fit


def correct(fits: Sequence[LeakageFit], alpha: float = 0.05, method: str = "bh") -> None:
    """Adjust the p-values of every human_* coefficient of ``fits`` together (in place) and flag significance."""
    coefs = [c for f in fits for c in f.coefficients if c.source is not None and np.isfinite(c.p)]
    if not coefs:
        return
    adjusted = adjust([c.p for c in coefs], method=method)
    for coef, p_adj in zip(coefs, adjusted, strict=True):
        coef.p_adj = float(p_adj)
        coef.significant = bool(p_adj < alpha)


def coefficient_table(fits: Sequence[LeakageFit]) -> pd.DataFrame:
    """Every coefficient of every fit, one row each (n, estimate, SE, z, p, adjusted p, CI)."""
    rows = [
        {"variant": f.variant, "target": f.target, "n_obs": f.n_obs, "n_traits": f.n_traits,
         "zero_fill": f.zero_fill, **asdict(c)}
        for f in fits
        for c in f.coefficients
    ]
    return pd.DataFrame(rows)


def flows(fits: Sequence[LeakageFit]) -> pd.DataFrame:
    """Leakage flows: source → target with a positive, significant (adjusted) human coefficient, source ≠ target."""
    table = coefficient_table(fits)
    if table.empty:
        return table
    keep = (
        table["source"].notna()
        & (table["source"] != table["target"])
        & (table["estimate"] > 0)
        & table["significant"].fillna(False).astype(bool)
    )
    cols = ["variant", "source", "target", "estimate", "se", "ci_low", "ci_high", "p", "p_adj", "n_obs"]
    return table.loc[keep, cols].sort_values(["variant", "target", "p_adj"]).reset_index(drop=True)


def find_leaked(
    model_matrix: pd.DataFrame,
    human: Mapping[str, pd.DataFrame],
    *,
    target: str,
    sources: Sequence[str],
    top_k: int = 5,
    weak: float = 10.0,
    strong: float = 20.0,
) -> pd.DataFrame:
    """Traits among a group's ``top_k`` in the target-language model (and above the group's mean model score)
    that target-language humans rate weak (<= ``weak``, or not at all: the group is unknown there) while a
    source language's humans rate them strong (>= ``strong``). Human scores are pole strengths on 0–50."""
    rows: list[dict[str, Any]] = []
    target_human = human.get(target)
    for group in model_matrix.columns:
        scores = model_matrix[group].dropna()
        if scores.empty:
            continue
        ranked = scores.sort_values(ascending=False)
        for rank, (trait, score) in enumerate(ranked.head(top_k).items(), start=1):
            if score < scores.mean():  # with few measured traits the top k can include weak ones
                continue
            h_target = np.nan if target_human is None else float(cast(float, target_human.at[trait, group]))
            if not (np.isnan(h_target) or h_target <= weak):
                continue
            for source in sources:
                if source == target or source not in human:
                    continue
                h_source = float(cast(float, human[source].at[trait, group]))
                if not np.isnan(h_source) and h_source >= strong:
                    rows.append({"target": target, "source": source, "group": group, "trait": trait,
                                 "model_score": float(score), "model_rank": rank,
                                 "human_target": h_target, "human_source": h_source})
    out = pd.DataFrame(rows)
    if out.empty:
        return pd.DataFrame(columns=["target", "source", "group", "trait", "model_score", "model_rank",
                                     "human_target", "human_source"])
    return out.sort_values(["group", "model_rank", "source"]).reset_index(drop=True)


def flows_figure(flow_table: pd.DataFrame, variants: Sequence[str]) -> Any:
    """Source (human) → target (model) language diagram per variant; line width ∝ coefficient."""
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    count = max(len(variants), 1)
    fig, axes = plt.subplots(1, count, figsize=(4.2 * count, 3.6), squeeze=False)
    ys = {lang: len(LANGUAGES) - 1 - i for i, lang in enumerate(LANGUAGES)}
    top = float(flow_table["estimate"].max()) if not flow_table.empty else 1.0
    for ax, variant in zip(axes[0], variants or ["(no fits)"], strict=False):
        for lang, y in ys.items():
            ax.text(0, y, f"human {lang.upper()}", ha="right", va="center", fontsize=9)
            ax.text(1, y, f"model {lang.upper()}", ha="left", va="center", fontsize=9)
        sub = flow_table[flow_table["variant"] == variant] if not flow_table.empty else flow_table
        for row in sub.to_dict(orient="records"):
            y0, y1 = ys[str(row["source"])], ys[str(row["target"])]
            estimate = float(row["estimate"])
            ax.plot([0.02, 0.98], [y0, y1], color="tab:red", alpha=0.7, linewidth=1 + 5 * estimate / (top or 1.0))
            ax.text(0.5, (y0 + y1) / 2, f"{estimate:.3g}", ha="center", va="bottom", fontsize=8)
        if sub.empty:
            ax.text(0.5, 1.5, "no significant flow", ha="center", va="center", fontsize=9, color="grey")
        ax.set_xlim(-0.5, 1.5)
        ax.set_ylim(-0.6, len(LANGUAGES) - 0.4)
        ax.axis("off")
        ax.set_title(variant, fontsize=8)
    fig.tight_layout()
    return fig
